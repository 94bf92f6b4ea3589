"""pit-harness under the name the integration example imports::

    from pit_harness import Bundle, RunConfig, load_prices, run
    from pit_harness.adapters.plain import from_callable

The same objects as ``harness`` (which is where they live); names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import harness
from harness import __version__

if TYPE_CHECKING:
    from harness import Bundle, RunConfig, RunResult, load_prices, run
    from harness.agents.base import AgentSpec, Decision, Task
    from harness.market.prices import Prices

_MORE = {
    "AgentSpec": "harness.agents.base",
    "Decision": "harness.agents.base",
    "Task": "harness.agents.base",
    "Prices": "harness.market.prices",
}
__all__ = [
    "AgentSpec",
    "Bundle",
    "Decision",
    "Prices",
    "RunConfig",
    "RunResult",
    "Task",
    "__version__",
    "load_prices",
    "run",
]


def __getattr__(name: str) -> Any:
    if name in _MORE:
        import importlib

        return getattr(importlib.import_module(_MORE[name]), name)
    if name in __all__:
        return getattr(harness, name)
    raise AttributeError(f"module 'pit_harness' has no attribute {name!r}")
