"""The observation seam: what an agent is shown at each step of a run, and how what it
answers is read back, for each dialect it may speak.

The cell loop and the probe build every task through this module and nothing else: the
trade prompt of a session (``trade_prompt``, also what ``export`` writes for other eval
tools), the probe's question (``probe_prompt``), and a dialect's own view of a session
(sharpebench's ``MarketObservation`` of the rows knowable at the bell and the rows held)
with the reading of its answer (its orders, checked against that observation). Each
dialect is one entry of ``DIALECTS``; a Python agent is shown what the ``pit`` dialect is.

This is the one place a change to what an agent is shown plugs in: a fault plan (seed 002,
``harness.runs.faults``) perturbs only the holdings a dialect's task shows (``holdings``,
``shown``) and grades what a decision states (``stated``), and the runner's book, the
scoring and the receipt's figures stay as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from harness import canonical, outcomes
from harness.agents.base import Decision, Task
from harness.protocol import sharpebench as sharpebench_wire
from harness.tools.toolbox import ArmRows, Toolbox

# Rows picked at a session and still held: (the session's position, the arm's row keys).
Held = list[tuple[int, list[str]]]
# What the runner records of an answer beside its picks, and the answer's fault if refused.
Reading = tuple[Decision, dict[str, Any], outcomes.AgentFault | None]


def trade_prompt(
    *, arm: str, clock: str, session_date: str, known_at: str, new: int, hold: int
) -> str:
    return (
        f"Session {session_date}, opening bell {known_at} ({arm} arm, {clock} clock). "
        f"{new} filings became knowable since the previous bell. Read the window with "
        "pit_list, pit_search, pit_read and pit_coverage, then reply with the row_key "
        f"values to buy at this bell's opening auction (held {hold} sessions)."
    )


def probe_prompt(row: dict[str, Any]) -> str:
    return (
        "Mask probe. You were served this filing during the run (as your arm showed it):\n"
        f"{canonical.line(row)}\n"
        "Dates in this arm may have been moved. What were the real filing date and the real "
        "issuer? Answer in plain text."
    )


def probe_task(row: dict[str, Any], tools: Toolbox) -> Task:
    """The probe's question about one row the shifted arm served, at the bell of the last
    shifted cell's toolbox."""
    return Task(
        "probe", probe_prompt(row), "shifted", tools.clock, tools.session_date, tools.known_at
    )


def _with_observation(task: Task, tools: Toolbox, rows: ArmRows, held: Held) -> Task:
    """A sharpebench agent's task: the MarketObservation of this bell. Its symbols are the
    rows that became knowable at this bell and the rows held (symbol = the arm's row key,
    news = the arm's form and title); no prices, so none can unmask a control arm; each
    held row is one unit of notional at no stated price, and cash is constant."""
    keys = [key for _, picked in held for key in picked]
    positions = [*tools.newly_positions(), *(tools.position(k) for k in keys)]
    symbols = []
    for position in positions:
        row = rows.view(position)
        news = f"{row.get('form') or ''}: {row.get('title') or ''}".strip(": ")
        symbols.append({"symbol": row["row_key"], "close_history": [], "news": [news]})
    observation = sharpebench_wire.MarketObservation(
        date=task.session_date,
        cash=1.0,
        symbols=msgspec.convert(symbols, list[sharpebench_wire.SymbolSnapshot]),
        portfolio=[sharpebench_wire.PositionState(k, 1.0, 0.0) for k in keys],
    )
    return dataclasses.replace(task, observation=msgspec.to_builtins(observation), held=tuple(keys))


def _from_orders(decision: Decision, task: Task) -> Reading:
    """A sharpebench decision's picks, read by the runner from the orders themselves (what
    the cell reports is read again by the closed type and checked against the observation
    it answers, never trusted), and what the trajectory records of them."""
    assert task.observation is not None
    try:
        scored = msgspec.convert(decision.wire, sharpebench_wire.Scored)
        observed = [s["symbol"] for s in task.observation["symbols"]]
        seen = [o.symbol for o in scored.orders]
        stray = next((sym for sym in seen if sym not in observed), None)
        if stray is not None or len(set(seen)) != len(seen):
            raise ValueError(f"an order for {stray!r}, not observed" if stray else "a symbol twice")
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        fault = outcomes.AgentFault(
            outcomes.PROTOCOL_VIOLATION, f"the decision's orders were refused: {exc}"
        )
        return Decision(), {}, fault
    picks, ignored = sharpebench_wire.picks(scored, set(observed) - set(task.held))
    wire = msgspec.to_builtins(scored)
    said = {"orders": wire["orders"], "ignored_orders": ignored}
    if "cost" in wire:
        said["cost"] = wire["cost"]
    return Decision(picks=tuple(picks), text=decision.text), said, None


def _as_prompted(task: Task, tools: Toolbox, rows: ArmRows, held: Held) -> Task:
    """Our dialect and a Python agent: the prompt, the tools and the open positions
    (one unit per pick still within its hold, by row key in the order first bought)."""
    units: dict[str, float] = {}
    for _, picked in held:
        for key in picked:
            units[key] = units.get(key, 0.0) + 1.0
    return dataclasses.replace(task, positions=tuple(units.items()))


def _as_decided(decision: Decision, task: Task) -> Reading:
    """Our dialect and a Python agent: the decision's picks as they are."""
    return decision, {}, None


# -- what a fault plan perturbs: the holdings a task shows, and what a decision states --


def _pit_holdings(task: Task) -> dict[str, float]:
    return dict(task.positions)


def _pit_shown(task: Task, holdings: dict[str, float]) -> Task:
    return dataclasses.replace(task, positions=tuple(holdings.items()))


def _pit_stated(decision: Decision) -> dict[str, float]:
    """A pick buys one unit of its row more than is held (a pick of a held row opens
    another position): what it states is that increment (``Dialect.additive``)."""
    return {key: 1.0 for key in decision.picks if isinstance(key, str)}


def _observed_holdings(task: Task) -> dict[str, float]:
    assert task.observation is not None
    return {p["symbol"]: float(p["shares"]) for p in task.observation["portfolio"]}


def _observed_shown(task: Task, holdings: dict[str, float]) -> Task:
    assert task.observation is not None
    avg = {p["symbol"]: p["avg_price"] for p in task.observation["portfolio"]}
    portfolio = [
        {"symbol": key, "shares": units, "avg_price": avg.get(key, 0.0)}
        for key, units in holdings.items()
    ]
    return dataclasses.replace(task, observation={**task.observation, "portfolio": portfolio})


def _ordered(decision: Decision) -> dict[str, float]:
    """An order states its target weight for its symbol."""
    orders = (decision.wire or {}).get("orders") or []
    return {
        o["symbol"]: float(o["target_weight"])
        for o in orders
        if isinstance(o, dict) and isinstance(o.get("target_weight"), int | float)
    }


@dataclass(frozen=True)
class Dialect:
    """How a dialect shows a session to the agent and how its answer is read back."""

    name: str
    observe: Callable[[Task, Toolbox, ArmRows, Held], Task]
    read: Callable[[Decision, Task], Reading]
    asks_probe: bool  # the dialect has a message for the probe's question
    reports_ignored_orders: bool  # its cells count the orders that open no position
    # what a fault plan perturbs: the held quantities a task shows (by symbol), the
    # task showing others in their place, and what a decision states of each symbol
    # (its target); a decision stating nothing is a hold
    holdings: Callable[[Task], dict[str, float]]
    shown: Callable[[Task, dict[str, float]], Task]
    stated: Callable[[Decision], dict[str, float]]
    # whether what a decision states adds to what is held (our picks) rather than
    # naming a target outright (sharpebench's target_weight)
    additive: bool = False


PIT = Dialect(
    "pit",
    _as_prompted,
    _as_decided,
    asks_probe=True,
    reports_ignored_orders=False,
    holdings=_pit_holdings,
    shown=_pit_shown,
    stated=_pit_stated,
    additive=True,
)
SHARPEBENCH = Dialect(
    "sharpebench",
    _with_observation,
    _from_orders,
    # the dialect has no message for the probe's question: said in limits
    asks_probe=False,
    reports_ignored_orders=True,
    holdings=_observed_holdings,
    shown=_observed_shown,
    stated=_ordered,
)
DIALECTS = {d.name: d for d in (PIT, SHARPEBENCH)}


def dialect(name: str | None) -> Dialect:
    """The dialect an external agent speaks (``None``: a Python agent, shown ours)."""
    return PIT if name is None else DIALECTS[name]


class CellView:
    """What one cell's agent is shown, session by session, in its dialect: it keeps the
    rows the cell holds (picked within the hold), which a dialect may show."""

    def __init__(
        self, shown: Dialect, *, arm: str, clock: str, hold_sessions: int, rows: ArmRows
    ) -> None:
        self._shown, self._rows = shown, rows
        self._arm, self._clock, self._hold = arm, clock, hold_sessions
        self._held: Held = []

    def trade_task(self, session: int, tools: Toolbox) -> Task:
        """The task of session position ``session``, with ``tools`` bound to its bell."""
        self._held = [(at, keys) for at, keys in self._held if session - at < self._hold]
        task = Task(
            "trade",
            trade_prompt(
                arm=self._arm,
                clock=self._clock,
                session_date=tools.session_date,
                known_at=tools.known_at,
                new=tools.newly_knowable(),
                hold=self._hold,
            ),
            self._arm,
            self._clock,
            tools.session_date,
            tools.known_at,
        )
        return self._shown.observe(task, tools, self._rows, self._held)

    def read(self, decision: Decision, task: Task) -> Reading:
        """The decision as the runner takes it (a dialect's orders read as picks), what the
        trajectory records of it, and its fault if it is refused."""
        return self._shown.read(decision, task)

    def bought(self, session: int, picks: list[str]) -> None:
        """The arm's row keys accepted at session position ``session``, held from now."""
        self._held.append((session, picks))
