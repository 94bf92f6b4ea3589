"""sharpebench's wire contract, as types: ``MarketObservation`` to the agent, ``Decision``
back. Closed: an unknown field anywhere is refused (``forbid_unknown_fields``), as the
contract's own types do. Follows the newest contract: an order's ``confidence`` is
optional with no default, absent stays absent, and ``null`` is refused."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

Weight = Annotated[float, Meta(ge=-1, le=1)]
Share = Annotated[float, Meta(ge=0, le=1)]
Tokens = Annotated[int, Meta(ge=0)]


class Wire(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A message of the contract."""


class SymbolSnapshot(Wire, forbid_unknown_fields=True, omit_defaults=True):
    symbol: str
    close_history: list[float]
    fundamentals: dict[str, float] = {}
    news: list[str] = []


class PositionState(Wire, forbid_unknown_fields=True, omit_defaults=True):
    symbol: str
    shares: float
    avg_price: float


class MarketObservation(Wire, forbid_unknown_fields=True, omit_defaults=True):
    date: str
    cash: float
    symbols: list[SymbolSnapshot]
    portfolio: list[PositionState]


class Order(Wire, forbid_unknown_fields=True, omit_defaults=True):
    symbol: str
    action: Literal["buy", "sell", "hold", "close"]
    target_weight: Weight
    confidence: Share | UnsetType = UNSET
    rationale: str = ""


class DecisionCost(Wire, forbid_unknown_fields=True, omit_defaults=True):
    cost_usd: Annotated[float, Meta(ge=0)] = 0.0
    tokens_in: Tokens = 0
    tokens_out: Tokens = 0
    reasoning_tokens: Tokens = 0


class Decision(Wire, forbid_unknown_fields=True, omit_defaults=True):
    orders: list[Order]
    reasoning: str = ""
    cost: DecisionCost | UnsetType = UNSET


class ScoredOrder(Wire, forbid_unknown_fields=True, omit_defaults=True):
    """The part of an order a score depends on (never its rationale)."""

    symbol: str
    action: Literal["buy", "sell", "hold", "close"]
    target_weight: Weight
    confidence: Share | UnsetType = UNSET


class Scored(Wire, forbid_unknown_fields=True, omit_defaults=True):
    """The score-bearing part of a decision: each order but its rationale, and the cost
    report (present or absent); never the reasoning. Re-execution compares these."""

    orders: list[ScoredOrder]
    cost: DecisionCost | UnsetType = UNSET


def scored(decision: Decision) -> Scored:
    return Scored(
        orders=[
            ScoredOrder(o.symbol, o.action, o.target_weight, o.confidence) for o in decision.orders
        ],
        cost=decision.cost,
    )


def picks(decision: Scored, new: set[str]) -> tuple[list[str], int]:
    """How the harness scores a sharpebench decision: each ``buy`` with a positive
    ``target_weight`` on a symbol that became knowable at this bell opens a fixed-hold
    long (a pick); every other order (sizing, sells, closes, holds, negative weights, a
    buy of a held row) is accepted and counted as ignored. (picks, ignored)"""
    chosen = [
        o.symbol for o in decision.orders
        if o.action == "buy" and o.target_weight > 0 and o.symbol in new
    ]  # fmt: skip
    return chosen, len(decision.orders) - len(chosen)


WIRE_TYPES = (MarketObservation, SymbolSnapshot, PositionState, Decision, Order, DecisionCost)
