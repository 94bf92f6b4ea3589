"""The forward track's values in the pages' words."""

from __future__ import annotations

from typing import Any

from django import template

from harness.forward.standing import decay_reading
from pitweb.forward.enums import RUN_STATUS_WORDS

register = template.Library()


@register.filter
def run_status(value: Any) -> str:
    """A forward run's status as the pages say it (before the colon of its words)."""
    words = RUN_STATUS_WORDS.get(value)
    return str(value) if words is None else words.split(":", 1)[0]


@register.filter
def decay_words(interval: Any) -> str:
    """A decay's interval read as the engine reads it (``decay_reading``)."""
    return decay_reading(interval)
