"""A fault plan at work in one cell (seed 002; sharpebench's ``FaultInjectingAgent``):
between the observation seam and the agent, it changes what the agent is shown or which
of its submissions is accepted, never the book.

- ``projection_lag`` (``read_your_writes``): from the first write (the held quantities
  changed since the step before) at or after its arming step, the holdings are shown at
  their values before it for a drawn number of steps; convergence is recorded when a
  step shows the canonical holdings again, not when a count runs out.
- ``amount_sign`` (``position_sign_convention``): from its arming step, for a drawn
  number of steps, every nonzero held quantity is shown with its sign flipped.
- ``rate_limit`` (``submission_acceptance``): the first decision with orders or picks
  at or after its arming step is refused by presenting the identical task again; while
  the limit lasts every answer is refused (a hold counts as a wait), until a drawn number
  of presentations were refused; the next answer is accepted whatever it is.

Each step is presented once (and again, identical, only under a rate limit), so the
runner still takes exactly one decision per step and the book is the agent's own. The
grades of the agent's responses (against its own last stated target for each symbol)
are evidence, written into the trajectory as ``fault_event`` events and gathered into
the receipt's rank-neutral ``fault_injection``: never in a return, a figure or a rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.agents.base import Decision, Task
from harness.rundata import faultplan
from harness.rundata.faultplan import Fault, FaultPlan
from harness.runs.observe import Dialect

# A restated target within this of the last one is the same target.
SAME_TARGET = 1e-12


@dataclass
class _Armed:
    fault: Fault
    at: int  # the step it arms at (0-based within the window)
    amount: int  # its lag, span or rejection count, 1..=bound
    fired: bool = False


@dataclass
class _Lag:
    armed: _Armed
    stale: dict[str, float]  # the holdings shown instead of the canonical ones
    left: int
    presented: int = 0


@dataclass
class _Limit:
    armed: _Armed
    step: int
    rejected: int = 0
    resubmissions: int = 0
    waits: int = 0


def _sign(value: float) -> str:
    return "positive" if value > 0 else "negative" if value < 0 else "zero"


@dataclass
class CellFaults:
    """One attempt of one cell under a plan: a retry starts a fresh one, and meets the
    same faults at the same steps (the draws are pure)."""

    plan: FaultPlan
    dialect: Dialect
    cell: tuple[int, int, int]
    steps: int
    armed: list[_Armed] = field(default_factory=list)
    targets: dict[str, float] = field(default_factory=dict)  # the agent's own, as stated
    _previous: dict[str, float] | None = None  # the canonical holdings a step ago
    _lag: _Lag | None = None
    # a lag that ran its course: (its fault, stale presentations) until a step shows
    # the canonical holdings again
    _converging: tuple[_Armed, int] | None = None
    _limit: _Limit | None = None
    _step: int = -1
    # what this step showed, kept until its answer is accepted: the stale read (its
    # fault, and per symbol whose write it hid: canonical and shown) and each inversion
    _stale: tuple[_Armed, dict[str, tuple[float, float]]] | None = None
    _inverted: list[tuple[_Armed, dict[str, float]]] = field(default_factory=list)

    @classmethod
    def open(
        cls, plan: FaultPlan, dialect: Dialect, cell: tuple[int, int, int], steps: int
    ) -> CellFaults:
        faults = cls(plan, dialect, cell, steps)
        if steps > 0:
            for fault in faultplan.cohort(plan, cell):
                at, amount = faultplan.arming(plan, fault, steps, cell)
                faults.armed.append(_Armed(fault, at, amount))
        return faults

    def _of(self, mode: str) -> list[_Armed]:
        return [a for a in self.armed if a.fault.mode == mode]

    def show(self, step: int, task: Task) -> tuple[Task, list[dict[str, Any]]]:
        """The task of ``step`` as the agent is shown it, and the events it makes."""
        self._step, events = step, []
        canonical = self.dialect.holdings(task)
        wrote = self._previous is not None and self._previous != canonical
        shown = dict(canonical)
        self._stale, self._inverted = None, []
        if self._lag is None and wrote:
            for armed in self._of("projection_lag"):
                if not armed.fired and step >= armed.at:
                    armed.fired = True
                    assert self._previous is not None
                    self._converging = None
                    self._lag = _Lag(armed, dict(self._previous), armed.amount)
                    break
        lag = self._lag
        if lag is not None:  # the holdings before the write, for the lag's steps
            shown = dict(lag.stale)
            lag.left -= 1
            lag.presented += 1
            keys = dict.fromkeys([*canonical, *shown])
            hidden = {
                k: (canonical.get(k, 0.0), shown.get(k, 0.0))
                for k in keys
                if canonical.get(k, 0.0) != shown.get(k, 0.0)
            }
            self._stale = (lag.armed, hidden)
            if lag.left == 0:
                self._converging, self._lag = (lag.armed, lag.presented), None
        for armed in self._of("amount_sign"):
            if armed.at <= step < armed.at + armed.amount:
                inverted = {k: -v for k, v in shown.items() if v}
                if inverted:  # fired only if something was inverted; zero has no sign
                    armed.fired = True
                    self._inverted.append((armed, inverted))
                    shown = {k: inverted.get(k, v) for k, v in shown.items()}
        if self._stale is None and self._converging is not None and shown == canonical:
            # observed, not timed: the first step after the lag that shows the canonical
            # holdings (a step another fault still perturbs does not count)
            armed, stale = self._converging
            events.append(
                {
                    "fault_event": "projection_converged",
                    "fault_id": armed.fault.id,
                    "step": step,
                    "stale_presentations": stale,
                }
            )
            self._converging = None
        self._previous = canonical
        if shown == canonical:
            return task, events
        return self.dialect.shown(task, shown), events

    def refuses(self, decision: Decision) -> bool:
        """Whether the answer to this step's presentation is refused (the identical task
        is presented again): a rate limit starts on the first answer with orders or
        picks at or after its arming step, and refuses every answer while it lasts."""
        bears = bool(self.dialect.stated(decision))
        limit = self._limit
        if limit is None:
            if not bears:
                return False
            for armed in self._of("rate_limit"):
                if not armed.fired and self._step >= armed.at:
                    armed.fired = True
                    limit = self._limit = _Limit(armed, self._step)
                    break
            else:
                return False
        elif limit.rejected >= limit.armed.amount:
            return False
        elif bears:
            limit.resubmissions += 1
        else:
            limit.waits += 1
        limit.rejected += 1
        return True

    def accepted(self, decision: Decision) -> list[dict[str, Any]]:
        """The events of the step whose answer was accepted: the graded responses, and a
        rate limit's account once its deadline passed; the agent's targets updated."""
        stated = self.dialect.stated(decision)
        if self.dialect.additive:  # a pick buys again: its target is what the book will hold
            held = self._previous or {}
            stated = {k: held.get(k, 0.0) + v for k, v in stated.items()}
        events: list[dict[str, Any]] = []
        step = self._step
        if self._stale is not None:
            armed, hidden = self._stale
            events.append(
                {
                    "fault_event": "projection_stale",
                    "fault_id": armed.fault.id,
                    "step": step,
                    "responses": [
                        {"symbol": k, "grade": self._stale_grade(k, stated, c - s)}
                        for k, (c, s) in hidden.items()
                    ],
                }
            )
            self._stale = None
        for armed, inverted in self._inverted:
            events.append(
                {
                    "fault_event": "sign_inverted",
                    "fault_id": armed.fault.id,
                    "step": step,
                    "responses": [
                        {
                            "symbol": k,
                            "presented": _sign(v),
                            "grade": self._sign_grade(k, stated, v),
                        }
                        for k, v in inverted.items()
                    ],
                }
            )
        self._inverted = []
        limit = self._limit
        if limit is not None and limit.rejected >= limit.armed.amount:
            events.append(
                {
                    "fault_event": "rate_limited",
                    "fault_id": limit.armed.fault.id,
                    "step": limit.step,
                    "rejected_presentations": limit.rejected,
                    "resubmissions_under_limit": limit.resubmissions,
                    "waits_under_limit": limit.waits,
                    "resubmitted_after_deadline": bool(stated),
                }
            )
            self._limit = None  # spent: a fired fault never starts again in this cell
        self.targets.update(stated)
        return events

    def end(self) -> list[dict[str, Any]]:
        """What the window's end leaves: a lag no step was seen to converge from."""
        lag, self._lag = self._lag, None
        open_ = (lag.armed, lag.presented) if lag is not None else self._converging
        self._converging = None
        if open_ is None:
            return []
        armed, stale = open_
        return [
            {
                "fault_event": "projection_unconverged",
                "fault_id": armed.fault.id,
                "stale_presentations": stale,
            }
        ]

    def _stale_grade(self, key: str, stated: dict[str, float], direction: float) -> str:
        if key not in stated:
            return "no_order"
        if key not in self.targets:
            return "no_prior_statement"
        moved = stated[key] - self.targets[key]
        if abs(moved) <= SAME_TARGET:
            return "reaffirmed"
        return "escalated" if moved * direction > 0 else "revised"

    def _sign_grade(self, key: str, stated: dict[str, float], presented: float) -> str:
        if key not in stated:
            return "no_order"
        if key not in self.targets:
            return "no_prior_statement"
        new = _sign(stated[key])
        if new == _sign(self.targets[key]):
            return "consistent_with_own_statement"
        return "followed_presentation" if new == _sign(presented) else "revised"
