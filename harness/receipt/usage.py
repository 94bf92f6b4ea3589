"""Each cell's model usage, from a trajectory's ``model_exchange`` events: the receipt's
``cells[].usage`` (written only for a run that declared ``model_endpoints``), built by the
run from its closed trajectory and again by ``verify`` from the same file.

A ``model_exchange`` event names no cell; the trajectory's order places it. Between a
cell's ``cell_start`` and its ``cell_end`` (or ``cell_failed``) an exchange is the cell's,
and the next ``decision``'s: the exchanges recorded after one decision (or the cell's
start) and before the next belong to that next one; those after the last decision (the
agent's process ending) are the cell's alone. A failed attempt's exchanges follow its
``attempt_failed`` event, which names its cell (or ``probe``). Every other exchange is the
mask probe's, which is counted, like its tool calls, in the last shifted cell whose
toolbox served it (the last to end with a session).
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Any

import msgspec

from harness.isolation.usage import Unknown, Usage, exchange_usage
from harness.receipt import model

_PROBE = "probe"
_KINDS = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "reasoning_tokens",
)
# what an event line must hold to be read here (its kind at the top level is checked
# again once it is parsed: an agent's arguments may hold the same text nested)
_READ = tuple(
    f'"event":"{kind}"'.encode()
    for kind in (
        "model_exchange", "decision", "cell_start", "cell_end", "cell_failed",
        "attempt_failed", "session",
    )
)  # fmt: skip


def _capped(value: int) -> int:
    return min(value, model.TOKENS_MAX)


@dataclass
class _Sums:
    exchanges: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_KINDS, 0))

    def add(self, usage: Usage) -> None:
        self.exchanges += 1
        for kind in _KINDS:
            self.tokens[kind] = _capped(self.tokens[kind] + getattr(usage, kind))


@dataclass
class _Decision:
    exchanges: int = 0
    unknown: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class _Cell:
    exchanges: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    failed_attempts: int = 0
    probe: int = 0
    known: _Sums = field(default_factory=_Sums)
    by_model: dict[str, _Sums] = field(default_factory=dict)
    decided: list[_Decision] = field(default_factory=list)
    reported: list[dict[str, int]] = field(default_factory=list)

    def take(self, read: Usage | Unknown) -> None:
        self.exchanges += 1
        if isinstance(read, Unknown):
            self.unknown[read.reason] = self.unknown.get(read.reason, 0) + 1
            return
        self.known.add(read)
        self.by_model.setdefault(read.model, _Sums()).add(read)

    def merge(self, other: _Cell) -> None:
        """The probe's exchanges, counted in this cell."""
        self.exchanges += other.exchanges
        self.probe += other.exchanges
        for reason, n in other.unknown.items():
            self.unknown[reason] = self.unknown.get(reason, 0) + n
        _merge_sums(self.known, other.known)
        for name, sums in other.by_model.items():
            _merge_sums(self.by_model.setdefault(name, _Sums()), sums)

    def block(self) -> model.CellUsage:
        decisions = self.decided
        tokens = [d.input_tokens + d.output_tokens for d in decisions]
        reported = self.reported
        body: dict[str, Any] = {
            "exchanges": self.exchanges,
            "unknown_exchanges": sum(self.unknown.values()),
            "unknown_because": dict(self.unknown),
            "failed_attempt_exchanges": self.failed_attempts,
            "probe_exchanges": self.probe,
            **self.known.tokens,
            "by_model": {
                name: {"exchanges": sums.exchanges, **sums.tokens}
                for name, sums in self.by_model.items()
            },
            "decisions": {
                "decisions": len(decisions),
                "with_exchanges": sum(1 for d in decisions if d.exchanges),
                "with_unknown": sum(1 for d in decisions if d.unknown),
                "input_tokens": _capped(sum(d.input_tokens for d in decisions)),
                "output_tokens": _capped(sum(d.output_tokens for d in decisions)),
                "most_tokens": _capped(max(tokens, default=0)),
            },
        }
        if reported:
            body["self_reported"] = {
                "decisions": len(reported),
                **{k: _capped(sum(r[k] for r in reported)) for k in _REPORTED},
            }
        return msgspec.convert(body, model.CellUsage)


def _merge_sums(into: _Sums, other: _Sums) -> None:
    into.exchanges += other.exchanges
    for kind in _KINDS:
        into.tokens[kind] = _capped(into.tokens[kind] + other.tokens[kind])


_REPORTED = ("cost_nanodollars", "tokens_in", "tokens_out", "reasoning_tokens")


def self_reported(cost: Any) -> dict[str, int] | None:
    """A decision's ``cost`` as sharpebench's agent stated it (every field defaults to 0),
    with ``cost_usd`` in nanodollars; None if it does not read as one."""
    if not isinstance(cost, dict) or not set(cost) <= {
        "cost_usd", "tokens_in", "tokens_out", "reasoning_tokens",
    }:  # fmt: skip
        return None
    counts = {k: cost.get(k, 0) for k in ("tokens_in", "tokens_out", "reasoning_tokens")}
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in counts.values()):
        return None
    usd = cost.get("cost_usd", 0)
    if isinstance(usd, bool) or not isinstance(usd, int | float) or not usd >= 0:
        return None
    nanos = usd * 1_000_000_000
    cost_nanos = round(nanos) if nanos < model.TOKENS_MAX else model.TOKENS_MAX
    return {"cost_nanodollars": cost_nanos, **{k: _capped(v) for k, v in counts.items()}}


@dataclass
class UsageTally:
    """Fed a trajectory's events in order (:meth:`take`), each cell's usage
    (:meth:`blocks`)."""

    cells: dict[tuple[str, str], _Cell] = field(default_factory=dict)
    probe: _Cell = field(default_factory=_Cell)
    exchanges: int = 0  # every model_exchange event read
    _current: tuple[str, str] | None = None
    _pending: _Decision = field(default_factory=_Decision)
    _failed: str | None = None  # the cell (or probe) of the attempt_failed just read
    _sessions: dict[tuple[str, str], int] = field(default_factory=dict)
    _served_probe: tuple[str, str] | None = None  # the last shifted cell ended with a session

    def _cell(self, arm: Any, clock: Any) -> _Cell:
        return self.cells.setdefault((str(arm), str(clock)), _Cell())

    def take(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "model_exchange":
            self._exchange(event)
        elif kind == "cell_start":
            self._current = (str(event.get("arm")), str(event.get("clock")))
            self._cell(*self._current)
            self._pending, self._failed = _Decision(), None
            self._sessions[self._current] = 0
        elif kind == "session" and self._current is not None:
            self._sessions[self._current] += 1
        elif kind == "decision":
            self._decision(event)
        elif kind in ("cell_end", "cell_failed"):
            self._ended(kind, event)
        elif kind == "attempt_failed":
            self._current, self._failed = None, str(event.get("cell"))

    def _exchange(self, event: dict[str, Any]) -> None:
        self.exchanges += 1
        read = exchange_usage(event)
        if self._current is not None:
            self.cells[self._current].take(read)
            self._pending.exchanges += 1
            if isinstance(read, Unknown):
                self._pending.unknown += 1
            else:
                self._pending.input_tokens += read.input_tokens
                self._pending.output_tokens += read.output_tokens
            return
        label = self._failed
        if label is not None and label != _PROBE and "/" in label:
            cell = self._cell(*label.split("/", 1))
            cell.take(read)
            cell.failed_attempts += 1
            return
        self.probe.take(read)  # the probe's, in a failed attempt of it or not

    def _decision(self, event: dict[str, Any]) -> None:
        key = (str(event.get("arm")), str(event.get("clock")))
        cell = self._cell(*key)
        cell.decided.append(self._pending if key == self._current else _Decision())
        self._pending = _Decision()
        if "cost" in event:
            reported = self_reported(event["cost"])
            if reported is not None:
                cell.reported.append(reported)

    def _ended(self, kind: str, event: dict[str, Any]) -> None:
        key = (str(event.get("arm")), str(event.get("clock")))
        self._cell(*key)
        if kind == "cell_end" and key[0] == "shifted" and self._sessions.get(key):
            self._served_probe = key
        self._current, self._failed, self._pending = None, None, _Decision()

    def blocks(self, cells: list[tuple[str, str]]) -> dict[tuple[str, str], model.CellUsage]:
        """The usage block of each of ``cells`` (a cell the trajectory never started has
        one of zeros), the probe's exchanges counted in the cell that served it."""
        found = copy.deepcopy(self.cells)
        if self._served_probe is not None:
            found[self._served_probe].merge(self.probe)
        return {key: found.get(key, _Cell()).block() for key in cells}

    def placed(self, cells: list[tuple[str, str]]) -> int:
        """How many exchanges the blocks of ``cells`` count (every exchange, in a run whose
        blocks account for all of its model traffic)."""
        return sum(block.exchanges for block in self.blocks(cells).values())


def wanted(line: bytes) -> bool:
    """Whether a trajectory line may be an event the tally reads."""
    return any(mark in line for mark in _READ)


def trajectory_usage(path: str | os.PathLike[str]) -> UsageTally:
    """The tally of a trajectory file (its lines that may matter parsed, the rest not)."""
    tally = UsageTally()
    with open(path, "rb") as handle:
        for line in handle:
            if wanted(line):
                event = json.loads(line)
                if isinstance(event, dict):
                    tally.take(event)
    return tally
