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


WIRE_TYPES = (MarketObservation, SymbolSnapshot, PositionState, Decision, Order, DecisionCost)
