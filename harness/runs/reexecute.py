"""Re-execution: run a captured run's agent again, afresh, on the same frozen data, and
compare what it decided, step by step.

``verify`` re-derives the arithmetic of a run; re-execution asks whether the agent's
decisions are a function of what it was shown (seed 002): every cell is run again with a
fresh agent (a fresh process, a fresh sandbox) over the same release, window, arms, clocks
and hold, and each decision's score-bearing part is compared with the recorded one:

- our dialect and Python agents: the picks (those accepted and those refused, with the
  reason), whether the decision raised, and each probe answer;
- sharpebench's dialect: each order's symbol, action, target_weight and confidence
  (present or absent) and the cost report, never reasoning or rationale.

The first difference is refused as a ``ReexecutionDivergence`` naming the cell, the step,
the session and both values. Then what each cell's verdict rests on besides its decisions
is compared the same way (``facts``): its outcome (with the fault's kind), its egress attempts
(how many, and where to), its protocol faults and the attempts in which the agent's own
process exited; and then the run's ``valid`` and the reasons it is invalid. A difference
there is a ``ReexecutionDivergence`` naming the field: a run made invalid by an egress
attempt, laundered afterwards (the attempt's event dropped, ``valid`` set and every hash
recomputed), passes ``verify``, which cannot tell, and is refused here.

A cell that completed in the recorded run and whose agent exits on every attempt when run
again (the cell ends ``incomplete``, in the same sandbox and limits) is the agent's
divergence: it did not complete on re-execution. Only a cell the harness could not run
again on its own side (its transport or sandbox failed) is not a divergence: it is its
own word, ``reexecution_failed``, and proves nothing either way.

Prices play no part: decisions never see them, so none are needed.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import outcomes
from harness.agents.base import AgentSpec
from harness.receipt.verify import check_receipt
from harness.rundata.config import RunConfig
from harness.rundata.faultplan import plan_from_record
from harness.runs.runner import run

REPRODUCED, DIVERGED, FAILED = "reproduced", "diverged", "reexecution_failed"
# the fields of each event that a score depends on
_DECISION_FIELDS = ("picks", "rejected", "orders", "cost")
# The trajectory events that record an egress attempt (today the guard's, made in the
# agent's process). A cell's egress is read from these alone, through ``egress_of``, so an
# attempt counted elsewhere (on the wire, outside the agent's process) joins by its name.
# the guard's call sites and the model proxy's refusals, and what the cells' wires saw
EGRESS_EVENTS: tuple[str, ...] = ("network_attempt", "wire_attempt")
PROBE, RUN = "shifted/probe", "run"
# a cell's facts, in the order they are compared (the most telling first)
_FACTS = ("egress_attempts", "protocol_faults", "attempts", "outcome")
_DID_NOT_COMPLETE = "agent did not complete on re-execution"
_REPLAY_NOTE = (
    "the agent's model calls were answered from the recorded exchanges: this proves the "
    "agent's own code path is a function of what it was shown and what its model said, "
    "not that the model is deterministic"
)


@dataclass(frozen=True)
class Step:
    """One score-bearing event of a cell, as compared."""

    cell: str
    step: int  # 1-based, in the cell (the probe's items are the probe cell's steps)
    session: str | None
    said: dict[str, Any]


class ReexecutionDivergence(Exception):
    """The first step where the re-executed agent decided otherwise, or the first fact of
    a cell (``field``, with no step) or of the run (cell ``run``) that differs."""

    def __init__(
        self,
        cell: str,
        step: int | None,
        session: str | None,
        recorded: Any,
        reexecuted: Any,
        *,
        field: str = "decision",
        reason: str | None = None,
    ) -> None:
        where = f"{cell} {field}" if step is None else f"{cell} step {step} (session {session})"
        super().__init__(
            f"{where}: {reason + ': ' if reason else ''}recorded {_short(recorded)}, "
            f"re-executed {_short(reexecuted)}"
        )
        self.cell, self.step, self.session = cell, step, session
        self.recorded, self.reexecuted = recorded, reexecuted
        self.field, self.reason = field, reason

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "step": self.step,
            "session": self.session,
            "field": self.field,
            "reason": self.reason,
            "recorded": self.recorded,
            "reexecuted": self.reexecuted,
        }


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 300 else text[:297] + "..."


@dataclass
class Reexecution:
    result: str
    steps_compared: int = 0
    divergence: ReexecutionDivergence | None = None
    failure: str | None = None
    agent: str = ""
    agent_digest_recorded: str | None = None
    agent_digest_reexecuted: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.result == REPRODUCED

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "steps_compared": self.steps_compared,
            "divergence": None if self.divergence is None else self.divergence.to_json(),
            "failure": self.failure,
            "agent": self.agent,
            "agent_digest": {
                "recorded": self.agent_digest_recorded,
                "reexecuted": self.agent_digest_reexecuted,
                "same": self.agent_digest_recorded == self.agent_digest_reexecuted,
            },
            "notes": self.notes,
        }


def steps(trajectory: str | os.PathLike[str]) -> Iterator[Step]:
    """The score-bearing events of a trajectory, in order. Failed attempts are left out:
    the trajectory holds only the attempt that counted, and the model exchanges a failed
    one made (kept after its ``attempt_failed``, because they count against the run) are
    not the agent's decisions. The model requests before a decision are part of it, as a
    set (an agent may ask several at once, and they finish in any order)."""
    counters: dict[str, int] = {}
    pending: dict[str, list[dict[str, Any]]] = {}
    current, skip = "run", 0
    for event in _events(trajectory):
        kind = event.get("event")
        said: dict[str, Any]
        if kind == "attempt_failed":
            skip = int(event.get("model_exchanges") or 0)
            continue
        if kind == "model_exchange":
            if skip:
                skip -= 1
            else:
                pending.setdefault(current, []).append(_request(event))
            continue
        if kind == "cell_start":
            current = f"{event['arm']}/{event['clock']}"
            pending.pop(current, None)
            continue
        if kind in ("cell_end", "run_end"):
            # what the agent asked after its last decision, then on to the probe (which
            # follows the shifted arm's cells)
            left = pending.pop(current, None)
            if left:
                yield Step(current, counters.get(current, 0) + 1, None, _asked({}, left))
            current = "shifted/probe" if event.get("arm") == "shifted" else "run"
            continue
        if kind == "decision":
            cell = f"{event['arm']}/{event['clock']}"
            said = {k: event[k] for k in _DECISION_FIELDS if k in event}
            said["raised"] = event.get("agent_error") is not None
        elif kind == "agent_error":
            cell = f"{event['arm']}/{event['clock']}"
            said = {"agent_error": (event.get("fault") or {}).get("kind")}
        elif kind == "probe_item":
            cell = current = "shifted/probe"
            said = {"row_key": event["row_key"], "answer": event["answer"]}
        elif kind in ("cell_failed", "probe_failed"):
            cell = "shifted/probe" if kind == "probe_failed" else f"{event['arm']}/{event['clock']}"
            said = {"failed": event.get("status")}
        else:
            continue
        counters[cell] = counters.get(cell, 0) + 1
        yield Step(cell, counters[cell], event.get("session"), _asked(said, pending.pop(cell, [])))


def _request(event: dict[str, Any]) -> dict[str, Any]:
    """What the agent asked its model (credentials removed: the recorded body is
    redacted): a changed prompt is a different request."""
    body = event.get("request_body") or {}
    return {"method": event.get("method"), "url": event.get("url"), **body}


def _asked(said: dict[str, Any], requests: list[dict[str, Any]]) -> dict[str, Any]:
    if requests:
        said["model_requests"] = sorted(requests, key=lambda r: json.dumps(r, sort_keys=True))
    return said


def counted_exchanges(trajectory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The model exchanges of the attempts that counted, in order (for replay)."""
    kept, skip = [], 0
    for event in _events(trajectory):
        if event.get("event") == "attempt_failed":
            skip = int(event.get("model_exchanges") or 0)
        elif event.get("event") == "model_exchange":
            if skip:
                skip -= 1
            else:
                kept.append(event)
    return kept


def _events(
    path: str | os.PathLike[str], *, skip_tool_calls: bool = False
) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            # a tool call (the bulk of a trajectory) is its own line, its arguments first
            if skip_tool_calls and line.startswith('{"args":'):
                continue
            yield json.loads(line)


def compare(recorded: str | os.PathLike[str], again: str | os.PathLike[str]) -> Reexecution:
    """The two trajectories side by side: the first score-bearing step that differs, else
    the first fact of a cell or of the run that differs; or the first cell the harness
    could not run again."""
    old, new = list(steps(recorded)), list(steps(again))
    # a cell the recorded run has no result for (the harness failed it, or the agent's
    # process exited in every attempt) holds nothing to compare
    missing = {s.cell: s.said["failed"] for s in old if "failed" in s.said}
    old = [s for s in old if s.cell not in missing]
    new = [s for s in new if s.cell not in missing]
    notes = [f"{cell} has no result in the recorded run ({status}): not compared"
             for cell, status in missing.items()]  # fmt: skip
    result = _first_difference(old, new)
    if result.result == REPRODUCED and result.steps_compared == 0:
        # nothing compared proves nothing: never a reproduction
        result = Reexecution(
            FAILED, failure="the recorded run has no score-bearing step to compare"
        )
    elif result.result == REPRODUCED:
        result.divergence = _first_fact_difference(facts(recorded), facts(again), set(missing))
        if result.divergence is not None:
            result.result = DIVERGED
        elif missing:
            notes.append(
                "the run's valid and invalidated_by are not compared (a cell has no result in "
                "the recorded run); each compared cell's egress attempts are"
            )
    result.notes += notes
    return result


def _first_difference(old: list[Step], new: list[Step]) -> Reexecution:
    compared = 0
    for n in range(max(len(old), len(new))):
        a = old[n] if n < len(old) else None
        b = new[n] if n < len(new) else None
        if b is not None and "failed" in b.said and (a is None or a.said != b.said):
            if b.said["failed"] != outcomes.INCOMPLETE or a is None:
                return Reexecution(
                    FAILED,
                    steps_compared=compared,
                    failure=f"the harness could not run {b.cell} again ({b.said['failed']} "
                    "after every attempt): nothing was compared from there",
                )
            # the agent's own process exited in every attempt, in the sandbox and limits
            # its recorded run completed in: the agent's doing, never ours
            return Reexecution(
                DIVERGED,
                steps_compared=compared,
                divergence=ReexecutionDivergence(
                    a.cell,
                    a.step,
                    a.session,
                    a.said,
                    _as_seen(b, a),
                    field="outcome",
                    reason=_DID_NOT_COMPLETE,
                ),
            )
        if (
            a is not None
            and b is not None
            and (a.cell, a.session, a.said) == (b.cell, b.session, b.said)
        ):
            compared += 1
            continue
        first = a if a is not None else b
        assert first is not None
        return Reexecution(
            DIVERGED,
            steps_compared=compared,
            divergence=ReexecutionDivergence(
                first.cell,
                first.step,
                first.session,
                _as_seen(a, first),
                _as_seen(b, first),
            ),
        )
    return Reexecution(REPRODUCED, steps_compared=compared)


def facts(trajectory: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """What each cell's verdict rests on besides its decisions, by cell (the probe as
    ``shifted/probe``), and the run's own (``run``): its ``valid`` and the reasons it is
    invalid. Each event counts in the cell it was made in; a failed attempt's egress,
    written again after its ``attempt_failed``, counts in that attempt's cell."""
    by_cell: dict[str, list[dict[str, Any]]] = {}
    current, aborted = RUN, None
    for event in _events(trajectory, skip_tool_calls=True):
        kind = event.get("event")
        current = _cell_of(event, current)
        by_cell.setdefault(current, []).append(event)
        if kind in ("cell_end", "cell_failed"):
            current = PROBE if event.get("arm") == "shifted" else RUN
        elif kind == "run_end":
            aborted = event.get("aborted")
    found = {cell: _cell_facts(events) for cell, events in by_cell.items() if cell != RUN}
    egress = [e for events in by_cell.values() for e in events if e.get("event") in EGRESS_EVENTS]
    found[RUN] = {
        "valid": not egress and aborted is None,
        # the reasons: each attempt by its call and destination (its call site names a
        # file, which a copy of the same agent elsewhere changes), or the abort
        "invalidated_by": [f"network_egress: {_destination(e)}" for e in egress]
        + (["aborted"] if aborted and not egress else []),
    }
    return found


def _cell_of(event: dict[str, Any], current: str) -> str:
    kind = event.get("event")
    if kind == "attempt_failed":
        return PROBE if event.get("cell") == "probe" else str(event.get("cell"))
    if kind in ("probe_item", "probe_failed"):
        return PROBE
    if kind in ("run_start", "capabilities", "run_end"):
        return RUN
    if "arm" in event and "clock" in event:  # a probe's agent_error is shifted/probe's
        return f"{event['arm']}/{event['clock']}"
    return current


def egress_of(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The egress attempts among ``events`` (those of ``EGRESS_EVENTS``): how many, and
    where each was headed."""
    found = [e for e in events if e.get("event") in EGRESS_EVENTS]
    return {"count": len(found), "destinations": sorted(_destination(e) for e in found)}


def _destination(event: dict[str, Any]) -> str:
    """Where an attempt was headed: a call and its target, or a protocol, address and port
    on the wire (its time and call site left out: they differ between executions)."""
    if event.get("event") == "wire_attempt":
        port = event.get("port")
        address = str(event.get("address"))
        shown = address if port is None else f"{address}:{port}"
        return f"{event.get('protocol')} {shown} on the wire"
    return f"{event.get('call')} {event.get('target')}"


def _cell_facts(events: list[dict[str, Any]]) -> dict[str, Any]:
    failed = next(
        (e.get("status") for e in events if e.get("event") in ("cell_failed", "probe_failed")),
        None,
    )
    faults = [e.get("fault") or {} for e in events if e.get("event") == "agent_error"]
    fault = faults[-1] if faults else None
    retries = [str(e.get("failure")) for e in events if e.get("event") == "attempt_failed"]
    return {
        "egress_attempts": egress_of(events),
        "protocol_faults": [
            f.get("message") for f in faults if f.get("kind") == outcomes.PROTOCOL_VIOLATION
        ],
        # the failed attempts that were the agent's doing (its process exited); one of
        # ours (a sandbox that failed to start) is no fact about the agent
        "attempts": {
            "agent_process_exited": sum(
                r.startswith(outcomes.AGENT_PROCESS_EXITED) for r in retries
            )
        },
        # the fault by its kind: its message may quote what the agent raised, addresses
        # and all (a protocol fault's own words, ours, are compared above)
        "outcome": {
            "status": failed or (outcomes.AGENT_ERROR if fault else outcomes.COMPLETE),
            "fault": None if fault is None else fault.get("kind"),
        },
    }


def _first_fact_difference(
    old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], skipped: set[str]
) -> ReexecutionDivergence | None:
    """The first cell fact that differs, cell by cell, then the run's (unless a cell had no
    recorded result: what it did is not known)."""
    for cell in [*old, *(c for c in new if c not in old)]:
        if cell == RUN or cell in skipped:
            continue
        a, b = old.get(cell), new.get(cell)
        for name in _FACTS:
            recorded = None if a is None else a[name]
            again = None if b is None else b[name]
            if recorded != again:
                return ReexecutionDivergence(cell, None, None, recorded, again, field=name)
    if skipped:
        return None
    for name in ("valid", "invalidated_by"):
        if old[RUN][name] != new[RUN][name]:
            return ReexecutionDivergence(
                RUN, None, None, old[RUN][name], new[RUN][name], field=name
            )
    return None


def _as_seen(step: Step | None, at: Step) -> dict[str, Any] | None:
    """A step's score-bearing part; its place too where it is not the divergence's."""
    if step is None:
        return None
    if (step.cell, step.step, step.session) != (at.cell, at.step, at.session):
        return {"cell": step.cell, "step": step.step, "session": step.session, **step.said}
    return step.said


def rerun_config(
    config: dict[str, Any],
    *,
    bundle: str | os.PathLike[str],
    agent: AgentSpec,
    folder: str | os.PathLike[str],
    pass_env: tuple[str, ...] = (),
) -> RunConfig:
    """The config that runs a recorded run's cells again (its receipt's ``config``):
    the same release, window, arms, clocks, hold, probe and network policy, ``agent``
    reached as it is, model endpoints and the agent's settings (``agent_env``) as recorded,
    no prices (decisions never see them), the fault plan as recorded, outputs in
    ``folder``."""
    endpoints = tuple(f"https://{label}" for label in config.get("model_endpoints") or [])
    external = agent.external
    return RunConfig(
        bundle_path=os.fspath(bundle),
        forms=tuple(config["forms"]),
        start=config["start"],
        end=config["end"],
        arms=tuple(config["arms"]),
        clocks=tuple(config["clocks"]),
        hold_sessions=config["hold_sessions"],
        agent_cmd=shlex.join(external.argv)
        if external is not None and external.transport == "stdio"
        else "",
        agent_http=external.url if external is not None and external.transport == "http" else "",
        dialect=config.get("agent_dialect", "pit"),
        network_policy=config["network_policy"],
        model_endpoints=endpoints,
        pass_env=pass_env,
        # the settings the recorded run handed its agent, as recorded (not this shell's)
        agent_env=tuple((config.get("agent_env") or {}).items()),
        agent_process="in_process" if config["agent_process"] == "in_process" else "auto",
        probe=config["probe_items"],
        # the fault plan it ran under, whole: the same faults at the same steps
        fault_plan=plan_from_record(config["fault_plan"]) if config.get("fault_plan") else None,
        trajectory_path=str(Path(folder) / "trajectory.jsonl"),
        receipt_path=str(Path(folder) / "receipt.json"),
    )


def reexecute(
    receipt: str | os.PathLike[str],
    *,
    trajectory: str | os.PathLike[str],
    bundle: str | os.PathLike[str],
    agent: AgentSpec,
    pass_env: tuple[str, ...] | list[str] = (),
    sandbox: Any = None,
) -> Reexecution:
    """Run ``agent`` afresh over what the receipt's run was given and compare its
    decisions with the trajectory's. The receipt's hashes must hold (``verify`` first)."""
    report, body = check_receipt(receipt)
    if not report.ok:
        raise ValueError("the receipt's hashes do not hold: " + "; ".join(report.failures))
    config = body["config"]
    exchanges = counted_exchanges(trajectory) if config.get("model_endpoints") else None
    dialect = config.get("agent_dialect", "pit")
    external = agent.external
    if external is not None and external.dialect != dialect:
        raise ValueError(f"the run's agent spoke {dialect!r}, this one speaks {external.dialect!r}")
    with tempfile.TemporaryDirectory(prefix="pit-reexecute-") as folder:
        again = rerun_config(
            config, bundle=bundle, agent=agent, folder=folder, pass_env=tuple(pass_env)
        )
        kwargs = {} if sandbox is None else {"sandbox": sandbox}
        # the recorded run is never shown to the agent run again: it could repeat it
        shown_never = [os.fspath(trajectory), os.fspath(receipt)]
        rerun = run(agent, again, model_replay=exchanges, hide=shown_never, **kwargs)
        result = compare(trajectory, rerun.trajectory_path)
        result.agent_digest_reexecuted = rerun.body["config"].get("agent_source_sha256")
    result.agent = agent.name
    result.agent_digest_recorded = config.get("agent_source_sha256")
    if exchanges is not None:
        result.notes.append(_REPLAY_NOTE)
    if result.agent_digest_recorded != result.agent_digest_reexecuted:
        result.notes.append(
            "the agent re-executed is not byte for byte the one recorded (its digest differs): "
            "the comparison is of behaviour alone"
        )
    return result
