"""The forward track's values in the pages' words."""

from __future__ import annotations

from typing import Any

from django import template

from harness.forward.standing import decay_reading
from pitweb.forward.enums import RUN_STATUS_WORDS
from pitweb.forward.models import Commitment, ForwardRun
from pitweb.runs.models import Run

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


@register.simple_tag
def forward_tested_by(run: Run) -> list[Commitment]:
    """The commitment whose forward run ``run`` is, settled as forward (one query; none for
    a run not marked)."""
    if not run.forward_tested:
        return []
    found = Commitment.objects.filter(
        runs__run=run, runs__kind=ForwardRun.Kind.FORWARD, runs__status=ForwardRun.Status.FORWARD
    )
    return list(found.select_related("entry", "agent").distinct().order_by("committed_at")[:10])
