"""pit-harness: point-in-time evaluation of agents on filings.

The public API mirrors the integration example::

    from harness import Bundle, RunConfig, load_prices, run
    from harness.adapters.plain import from_callable
"""

from harness.config import RunConfig
from harness.prices import load_prices
from harness.release.bundle import Bundle
from harness.runner import RunResult, run
from harness.version import HARNESS_VERSION as __version__

__all__ = ["Bundle", "RunConfig", "RunResult", "__version__", "load_prices", "run"]
