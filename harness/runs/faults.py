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
    _limit: _Limit | None = None
    _step: int = -1
    _hidden: dict[str, tuple[float, float]] = field(default_factory=dict)  # (canonical, shown)
    _inverted: dict[str, tuple[float, float]] = field(default_factory=dict)
    _inverting: _Armed | None = None

    @classmethod
    def open(
        cls, plan: FaultPlan, dialect: Dialect, cell: tuple[int, int, int], steps: int
    ) -> CellFaults:
        faults = cls(plan, dialect, cell, steps)
        for fault in faultplan.cohort(plan, cell):
            at, amount = faultplan.arming(plan, fault, steps, cell)
            faults.armed.append(_Armed(fault, at, amount))
        return faults

    @property
    def assigned(self) -> list[str]:
        return [a.fault.id for a in self.armed]

    def _of(self, mode: str) -> list[_Armed]:
        return [a for a in self.armed if a.fault.mode == mode]

    def show(self, step: int, task: Task) -> tuple[Task, list[dict[str, Any]]]:
        """The task of ``step`` as the agent is shown it, and the events it makes."""
        self._step, events = step, []
        canonical = self.dialect.holdings(task)
        previous, self._previous = self._previous, canonical
        shown = dict(canonical)
        self._hidden, self._inverted, self._inverting = {}, {}, None
        wrote = previous is not None and previous != canonical
        if self._lag is None and wrote:
            for armed in self._of("projection_lag"):
                if not armed.fired and step >= armed.at:
                    armed.fired = True
                    assert previous is not None
                    self._lag = _Lag(armed, dict(previous), armed.amount)
                    break
        lag = self._lag
        stale = lag is not None and lag.left > 0
        if lag is not None and stale:
            shown = dict(lag.stale)
            lag.left -= 1
            lag.presented += 1
        projected = dict(shown)  # the holdings as the lag leaves them, before any sign
        for armed in self._of("amount_sign"):
            if armed.at <= step < armed.at + armed.amount:
                flipped = {k: -v if v else v for k, v in shown.items()}
                if flipped != shown:
                    armed.fired = True
                    self._inverting = armed
                    self._inverted = {
                        k: (canonical.get(k, 0.0), flipped[k]) for k in shown if shown[k]
                    }
                    shown = flipped
                break
        if lag is not None and lag.presented:
            if projected == canonical and self._inverting is None:
                # observed, not timed: this step shows the canonical holdings again
                events.append(
                    {
                        "fault_event": "projection_converged",
                        "fault_id": lag.armed.fault.id,
                        "step": step,
                        "stale_presentations": lag.presented - stale,
                    }
                )
                self._lag = None
            elif stale:
                keys = dict.fromkeys([*canonical, *lag.stale])
                self._hidden = {
                    k: (canonical.get(k, 0.0), lag.stale.get(k, 0.0))
                    for k in keys
                    if canonical.get(k, 0.0) != lag.stale.get(k, 0.0)
                }
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
        events: list[dict[str, Any]] = []
        step = self._step
        if self._hidden and self._lag is not None:
            events.append(
                {
                    "fault_event": "projection_stale",
                    "fault_id": self._lag.armed.fault.id,
                    "step": step,
                    "responses": [
                        {"symbol": k, "grade": self._stale_grade(k, stated, c - s)}
                        for k, (c, s) in self._hidden.items()
                    ],
                }
            )
        if self._inverted and self._inverting is not None:
            events.append(
                {
                    "fault_event": "sign_inverted",
                    "fault_id": self._inverting.fault.id,
                    "step": step,
                    "responses": [
                        {
                            "symbol": k,
                            "presented": _sign(s),
                            "grade": self._sign_grade(k, stated, s),
                        }
                        for k, (_, s) in self._inverted.items()
                    ],
                }
            )
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
        """What the window's end leaves: a lag that never converged."""
        lag, self._lag = self._lag, None
        if lag is None or not lag.presented:
            return []
        return [
            {
                "fault_event": "projection_unconverged",
                "fault_id": lag.armed.fault.id,
                "stale_presentations": lag.presented,
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
