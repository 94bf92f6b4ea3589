"""What pricing does when runs announce something (``pitweb.runs.signals``); connected
in ``PricingConfig.ready``."""

from __future__ import annotations

from typing import Any

from pitweb.pricing.services import platform_request
from pitweb.runs.models import Run


def score_proven(sender: Any, run: Run, **kwargs: Any) -> None:
    """A proven run is scored with its release's newest reference prices."""
    platform_request(run=run)
