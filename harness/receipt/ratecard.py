"""A rate card (``pit-harness.rate-card.v1``): what each model's tokens cost, in whole
nanodollars (billionths of a US dollar) per token, and a receipt's measured usage priced
with it.

Modelled on sharpebench's ``sharpebench.token-rate-card.v1`` (integer nanodollars per
token): a card is one JSON object of at most 64 KiB, closed at every level (an unknown
field is refused, naming it), with a price per model and per kind of token::

    {"schema_version": "pit-harness.rate-card.v1",
     "source": "the provider's price page, read 2026-01-05", "as_of": "2026-01-05",
     "models": {"gpt-4o-mini-2024-07-18": {"input": 150, "cached_input": 75, "output": 600}}}

``input`` and ``output`` are required. ``cached_input`` (a prompt token read from a cache),
``cache_write_input`` (one written to a cache) and ``reasoning`` (an output token spent
reasoning) are priced apart only where the card says so; a card that leaves one out prices
it as the card says: cached and cache-written input as ``input``, reasoning as ``output``.

Pricing is integer arithmetic over the receipt's per-model sums. A model the card does not
list is *unpriced*: named with its tokens, never priced at zero; an exchange whose usage is
unknown is counted, never priced. So a figure is whole only when it says so.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from harness.receipt.model import IsoDate, ModelName

SCHEMA_VERSION = "pit-harness.rate-card.v1"
MAX_CARD_BYTES = 64 * 1024
# a price per token in nanodollars: up to a thousand dollars a token, far past any model's
Nanodollars = Annotated[int, Meta(ge=0, le=10**12)]


class RateCardError(ValueError):
    """A rate card refused, and why."""


class ModelRates(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    input: Nanodollars
    output: Nanodollars
    cached_input: Nanodollars | UnsetType = UNSET
    cache_write_input: Nanodollars | UnsetType = UNSET
    reasoning: Nanodollars | UnsetType = UNSET

    def cost(self, tokens: dict[str, int]) -> int:
        """What ``tokens`` (a receipt's per-model sums) cost, in nanodollars."""
        cached, written = tokens["cached_input_tokens"], tokens["cache_write_input_tokens"]
        reasoning = tokens["reasoning_tokens"]
        plain_in = tokens["input_tokens"] - cached - written
        plain_out = tokens["output_tokens"] - reasoning
        if plain_in < 0 or plain_out < 0:
            raise RateCardError("the usage's parts exceed its whole (cached or reasoning)")
        return (
            plain_in * self.input
            + cached * _or(self.cached_input, self.input)
            + written * _or(self.cache_write_input, self.input)
            + plain_out * self.output
            + reasoning * _or(self.reasoning, self.output)
        )


def _or(rate: int | UnsetType, otherwise: int) -> int:
    return otherwise if isinstance(rate, UnsetType) else rate


class RateCard(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    schema_version: Literal["pit-harness.rate-card.v1"]
    models: Annotated[dict[ModelName, ModelRates], Meta(min_length=1)]
    source: Annotated[str, Meta(max_length=2000)] | UnsetType = UNSET
    as_of: IsoDate | UnsetType = UNSET


@dataclass(frozen=True)
class LoadedCard:
    card: RateCard
    sha256: str  # of the file's bytes, as read


def read_rate_card(path: str | os.PathLike[str]) -> LoadedCard:
    """A rate card from its file: at most ``MAX_CARD_BYTES``, closed, every price a
    non-negative integer; refused (``RateCardError``) with the reason otherwise."""
    name = Path(path).name
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CARD_BYTES + 1)
    except OSError as exc:
        raise RateCardError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_CARD_BYTES:
        raise RateCardError(f"{name}: larger than a rate card may be ({MAX_CARD_BYTES} bytes)")
    return LoadedCard(parse_rate_card(data, name), "sha256:" + hashlib.sha256(data).hexdigest())


def parse_rate_card(data: bytes, name: str = "rate card") -> RateCard:
    if len(data) > MAX_CARD_BYTES:
        raise RateCardError(f"{name}: larger than a rate card may be ({MAX_CARD_BYTES} bytes)")
    try:
        return msgspec.json.decode(data, type=RateCard)
    except msgspec.ValidationError as exc:
        raise RateCardError(f"{name}: not a {SCHEMA_VERSION} card: {exc}") from None
    except msgspec.DecodeError as exc:
        raise RateCardError(f"{name}: not JSON ({exc})") from None


# -- a receipt's usage, priced -------------------------------------------------------------

_TOKEN_KINDS = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "reasoning_tokens",
)


@dataclass
class Priced:
    """Usage priced with a card: ``nanodollars`` over the models it lists; the models it
    does not list with their tokens; the exchanges whose usage is not known."""

    nanodollars: int = 0
    by_model: dict[str, int] = field(default_factory=dict)
    unpriced: dict[str, dict[str, int]] = field(default_factory=dict)
    unknown_exchanges: int = 0
    exchanges: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_TOKEN_KINDS, 0))

    @property
    def whole(self) -> bool:
        """Every exchange read and every model priced: the figure is the cost, not a floor."""
        return not self.unpriced and not self.unknown_exchanges

    def add(self, other: Priced) -> None:
        self.nanodollars += other.nanodollars
        self.unknown_exchanges += other.unknown_exchanges
        self.exchanges += other.exchanges
        for kind in _TOKEN_KINDS:
            self.tokens[kind] += other.tokens[kind]
        for name, cost in other.by_model.items():
            self.by_model[name] = self.by_model.get(name, 0) + cost
        for name, tokens in other.unpriced.items():
            into = self.unpriced.setdefault(name, dict.fromkeys(_TOKEN_KINDS, 0))
            for kind in _TOKEN_KINDS:
                into[kind] += tokens[kind]

    def to_json(self) -> dict[str, Any]:
        return {
            "exchanges": self.exchanges,
            "unknown_exchanges": self.unknown_exchanges,
            **self.tokens,
            "cost_nanodollars": self.nanodollars,
            "cost_usd": dollars(self.nanodollars),
            "whole": self.whole,
            "by_model_nanodollars": dict(sorted(self.by_model.items())),
            "unpriced_models": dict(sorted(self.unpriced.items())),
        }


def price_usage(usage: dict[str, Any], card: RateCard) -> Priced:
    """A receipt's ``cells[].usage`` block priced with ``card``."""
    priced = Priced(
        unknown_exchanges=int(usage["unknown_exchanges"]), exchanges=int(usage["exchanges"])
    )
    for kind in _TOKEN_KINDS:
        priced.tokens[kind] = int(usage[kind])
    for name, sums in (usage.get("by_model") or {}).items():
        tokens = {kind: int(sums[kind]) for kind in _TOKEN_KINDS}
        rates = card.models.get(name)
        if rates is None:
            priced.unpriced[name] = tokens
            continue
        cost = rates.cost(tokens)
        priced.by_model[name] = cost
        priced.nanodollars += cost
    return priced


def dollars(nanodollars: int) -> str:
    """Nanodollars as dollars, exactly: ``$0.000123450``."""
    whole, part = divmod(nanodollars, 10**9)
    return f"${whole}.{part:09d}"


_SAID = ("decisions", "cost_nanodollars", "tokens_in", "tokens_out", "reasoning_tokens")


def run_usage(cells: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A receipt's cells' ``usage`` blocks summed into one of the same shape (exchanges,
    unknown exchanges, each kind of token, per model), with the agent's own cost reports
    summed apart under ``self_reported`` (None when none said any); None when no cell
    holds usage (the run declared no model endpoints)."""
    blocks = [c["usage"] for c in cells if c.get("usage")]
    if not blocks:
        return None
    total: dict[str, Any] = {
        "exchanges": 0,
        "unknown_exchanges": 0,
        **dict.fromkeys(_TOKEN_KINDS, 0),
    }
    by_model: dict[str, dict[str, int]] = {}
    said: dict[str, int] | None = None
    for block in blocks:
        for key in ("exchanges", "unknown_exchanges", *_TOKEN_KINDS):
            total[key] += int(block[key])
        for name, sums in (block.get("by_model") or {}).items():
            into = by_model.setdefault(name, dict.fromkeys(_TOKEN_KINDS, 0))
            for kind in _TOKEN_KINDS:
                into[kind] += int(sums[kind])
        if block.get("self_reported"):
            said = said or dict.fromkeys(_SAID, 0)
            for key in _SAID:
                said[key] += int(block["self_reported"][key])
    return {**total, "by_model": dict(sorted(by_model.items())), "self_reported": said}
