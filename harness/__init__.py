"""pit-harness: point-in-time evaluation of agents on filings.

The public API mirrors the integration example::

    from harness import Bundle, RunConfig, load_prices, run
    from harness.agents.adapters.plain import from_callable

Names are imported on first use, so the agent's sandbox can import the small modules it
needs without loading the calendar and pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.version import HARNESS_VERSION as __version__

if TYPE_CHECKING:
    from harness.market.prices import load_prices
    from harness.release.bundle import Bundle
    from harness.rundata.config import RunConfig
    from harness.runs.finish import RunResult
    from harness.runs.runner import run

_LAZY = {
    "Bundle": "harness.release.bundle",
    "RunConfig": "harness.rundata.config",
    "RunResult": "harness.runs.finish",
    "load_prices": "harness.market.prices",
    "run": "harness.runs.runner",
}
__all__ = ["Bundle", "RunConfig", "RunResult", "__version__", "load_prices", "run"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
