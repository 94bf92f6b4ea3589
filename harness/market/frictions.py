"""Trading frictions: what a trade pays to enter and exit, as a run's config states it.

A run's returns are gross of costs unless its config gives ``costs``: a fee in basis
points of the notional traded on each side (entry and exit), with an optional minimum
fee per side for a trade of a stated notional. Each trade is one unit of capital, so a
trade returning ``r`` gross pays ``bps/10^4`` on entry and ``bps/10^4 * (1 + r)`` on exit
(each raised to ``min_fee_per_side / notional`` where that is more), and returns

    r - fee(1) - fee(1 + r)

net. The model is bound into the run's config like its prices, so a run scored at another
cost level is another run; the site prices every run at its own stated level as well.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.market.scoring import Trade

MAX_BPS = 1000.0  # 10% a side: beyond any market's fees, a typo
COST_KEYS = ("bps_per_side", "min_fee_per_side", "notional")


class CostError(ValueError):
    """A cost model that cannot be applied."""


@dataclass(frozen=True)
class CostModel:
    bps_per_side: float
    min_fee_per_side: float = 0.0  # in the notional's currency
    notional: float = 10_000.0  # each trade's unit of capital, in that currency

    def __post_init__(self) -> None:
        for key, low, high in (
            ("bps_per_side", 0.0, MAX_BPS),
            ("min_fee_per_side", 0.0, math.inf),
            ("notional", 0.0, math.inf),
        ):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CostError(f"costs.{key}: must be a number")
            if (
                not math.isfinite(value)
                or not low <= value <= high
                or (key == "notional" and value == 0)
            ):
                bound = f"at most {high:g}" if math.isfinite(high) else "finite"
                raise CostError(f"costs.{key}: {value!r} must be at least {low:g} and {bound}")
            object.__setattr__(self, key, float(value))
        if self.min_fee_per_side >= self.notional:
            raise CostError("costs.min_fee_per_side: must be less than the notional")

    def to_json(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in COST_KEYS}

    def side(self, traded: float) -> float:
        """The fee on ``traded`` units of capital, as a fraction of the trade's unit."""
        return max(self.bps_per_side / 10_000.0 * traded, self.min_fee_per_side / self.notional)

    def cost(self, ret: float) -> float:
        """What a trade returning ``ret`` gross pays, entry and exit together."""
        return self.side(1.0) + self.side(max(0.0, 1.0 + ret))

    def net(self, ret: float) -> float:
        return ret - self.cost(ret)

    def statement(self) -> dict[str, Any]:
        """What the receipt's P4 records of it."""
        return {
            **self.to_json(),
            "applied": "on the notional traded at entry and at exit, each side raised to "
            "the minimum fee; a trade's net return is its gross return less both",
        }


def cost_model(data: Any) -> CostModel:
    """``costs`` as a config gives it: an object with ``bps_per_side`` and, optionally,
    ``min_fee_per_side`` and ``notional``; anything else is refused."""
    if not isinstance(data, dict):
        raise CostError("costs: must be an object {bps_per_side, min_fee_per_side, notional}")
    extra = sorted(set(data) - set(COST_KEYS))
    if extra:
        raise CostError(f"costs: unknown key(s) {', '.join(extra)}")
    if "bps_per_side" not in data:
        raise CostError("costs.bps_per_side: required")
    return CostModel(**data)


def return_after_costs(trades: Sequence[Trade], costs: CostModel) -> float | None:
    """The mean net return of the priced trades (``total_return`` after costs)."""
    net = [costs.net(t.ret) for t in trades if t.ret is not None]
    return sum(net) / len(net) if net else None


def net_trades(trades: Sequence[Trade], costs: CostModel) -> list[Trade]:
    """The trades with each priced return net of ``costs`` (for an interval drawn over
    them as over the gross ones)."""
    return [t if t.ret is None else t._replace(ret=costs.net(t.ret)) for t in trades]
