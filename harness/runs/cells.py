"""The cell loop: one fresh agent per cell, walked session by session over the window;
at each bell the task the observation seam builds (``harness.runs.observe``), the agent's
decision, its picks checked against the runner's own clock state, and every tool call
and decision written into the trajectory. A cell failed on our side is tried again
(``harness.runs.retries``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import outcomes
from harness.agents.base import Decision, Task
from harness.isolation.drivers import CellAgent
from harness.isolation.guard import NetworkAbort
from harness.market.clocks import REACHABLE, iso_utc
from harness.runs import observe
from harness.runs.retries import retrying
from harness.runs.state import Aborted, CellOutcome, RunContext
from harness.tools.toolbox import ArmRows, ClockIndex, Toolbox, knowable_test


def check_picks(
    decision: Decision, knowable: Callable[[str], bool]
) -> tuple[list[str], list[dict[str, str]]]:
    accepted: list[str] = []
    rejected: list[dict[str, str]] = []
    seen: set[str] = set()
    for pick in decision.picks:
        if not isinstance(pick, str):
            rejected.append({"row_key": repr(pick)[:80], "reason": "not_a_row_key"})
        elif pick in seen:
            rejected.append({"row_key": pick, "reason": "duplicate"})
        elif not knowable(pick):
            rejected.append({"row_key": pick, "reason": "not_knowable_at_bell"})
        else:
            seen.add(pick)
            accepted.append(pick)
    return accepted, rejected


def cell_with_retries(
    ctx: RunContext,
    cells: dict[tuple[str, str], CellOutcome],
    arm: str,
    clock: str,
    index: ClockIndex,
    rows: ArmRows,
    served: dict[int, None],
) -> tuple[CellOutcome, Toolbox | None]:
    holder: dict[str, Any] = {}

    def attempt() -> Toolbox | None:
        outcome = holder["outcome"] = cells[(arm, clock)] = CellOutcome(
            arm, clock, status="running"
        )
        cell_served: dict[int, None] | None = {} if arm == "shifted" else None
        holder["served"] = cell_served
        return run_sessions(ctx, outcome, index, rows, cell_served)

    tries = retrying(ctx, f"{arm}/{clock}", attempt, lambda: None)
    if not tries.ok:
        status = outcomes.INCOMPLETE if tries.agent_exited else outcomes.HARNESS_ERROR
        ctx.writer.write(
            "cell_failed", arm=arm, clock=clock, attempts=outcomes.RUNTIME_ATTEMPTS, status=status
        )
        cells[(arm, clock)] = CellOutcome(arm, clock, status=status)
        return cells[(arm, clock)], None
    for position in holder["served"] or ():
        served.setdefault(position)
    return holder["outcome"], tries.value


def open_agent(ctx: RunContext, outcome: CellOutcome) -> CellAgent | None:
    """A fresh agent for a cell; None (and the cell ends as agent_error) if it failed."""
    try:
        agent = ctx.drivers.open()
    except NetworkAbort as exc:
        ctx.record_attempts(ctx.drivers.orphan_attempts())
        raise Aborted(f"network egress at {exc.attempt.site}") from None
    except outcomes.AgentFault as fault:
        ctx.record_attempts(ctx.drivers.orphan_attempts())
        fatal(ctx, outcome, fault, session=None)
        return None
    ctx.record_attempts(agent)
    return agent


def fatal(
    ctx: RunContext, outcome: CellOutcome, fault: outcomes.AgentFault, session: str | None
) -> None:
    outcome.status = outcomes.AGENT_ERROR
    outcome.fault = fault.fault
    ctx.writer.write(
        "agent_error",
        arm=outcome.arm,
        clock=outcome.clock,
        session=session,
        fault=fault.fault.to_json(),
    )


def run_sessions(
    ctx: RunContext,
    outcome: CellOutcome,
    index: ClockIndex,
    rows: ArmRows,
    served: dict[int, None] | None,
) -> Toolbox | None:
    arm, clock = outcome.arm, outcome.clock
    writer, table, window = ctx.writer, ctx.table, ctx.window
    writer.write(
        "cell_start", arm=arm, clock=clock, reachable=REACHABLE[clock], agent=ctx.drivers.name
    )
    tools: Toolbox | None = None
    agent = open_agent(ctx, outcome)
    if agent is None:
        writer.write("cell_end", arm=arm, clock=clock)
        return None
    view = observe.CellView(
        ctx.dialect, arm=arm, clock=clock, hold_sessions=ctx.config.hold_sessions, rows=rows
    )
    faults = ctx.cell_faults(arm, clock)
    try:
        for s in window:
            tools = session_toolbox(ctx, outcome, index, rows, s, served)
            outcome.last_session = s
            task = view.trade_task(s, tools)
            shown: list[dict[str, Any]] = []
            if faults is not None:
                task, shown = faults.show(s - window.start, task)
            session_date = table.sessions[s].isoformat()
            writer.write(
                "session",
                arm=arm,
                clock=clock,
                session=session_date,
                bell=iso_utc(table.opens[s]),
                shown_session_date=tools.session_date,
                newly_knowable=tools.newly_knowable(),
            )
            outcome.sessions += 1
            write_faults(ctx, outcome, session_date, shown)
            decision, fault = decide(ctx, agent, task, tools)
            while fault is None and faults is not None and faults.refuses(decision):
                # refused under a rate limit: the identical task is presented again
                writer.write(
                    "presentation_refused",
                    arm=arm,
                    clock=clock,
                    session=session_date,
                    picks=[p for p in decision.picks if isinstance(p, str)],
                    text=ctx.redacted(decision.text[:4000]),
                    **({} if decision.wire is None else {"orders": decision.wire.get("orders")}),
                )
                decision, fault = decide(ctx, agent, task, tools)
            stated = decision
            said: dict[str, Any] = {}
            if fault is None:
                decision, said, fault = view.read(decision, task)
                outcome.ignored_orders += said.get("ignored_orders", 0)
            error = None
            if fault is not None:
                if fault.fatal:
                    fatal(ctx, outcome, fault, session=session_date)
                    break
                error = fault.fault.message
                outcome.agent_errors += 1
            # Checked against the runner's own clock state, never the agent's toolbox.
            accepted, rejected = check_picks(
                decision, knowable_test(index, ctx.positions, table.opens[s])
            )
            outcome.rejected += len(rejected)
            if accepted:  # scored as the main arm's filings they are
                outcome.picks.append((s, [ctx.main_keys[ctx.positions[k]] for k in accepted]))
                view.bought(s, accepted)
            writer.write(
                "decision",
                arm=arm,
                clock=clock,
                session=session_date,
                picks=accepted,
                rejected=rejected,
                text=ctx.redacted(decision.text[:4000]),
                agent_error=error,
                **said,
            )
            if faults is not None and fault is None:
                write_faults(ctx, outcome, session_date, faults.accepted(stated))
            ctx.session_walked()
        if faults is not None and outcome.status == "running":
            write_faults(ctx, outcome, None, faults.end())
    finally:
        agent.close()
    # what the agent's process sent between its last decision and its end is the cell's
    ctx.record_attempts(agent)
    if outcome.status == "running":
        outcome.status = outcomes.COMPLETE
    writer.write("cell_end", arm=arm, clock=clock)
    return tools


def write_faults(
    ctx: RunContext, outcome: CellOutcome, session: str | None, events: list[dict[str, Any]]
) -> None:
    """A fault plan's evidence, in the trajectory beside the step it concerns."""
    for event in events:
        fields = {"arm": outcome.arm, "clock": outcome.clock, "session": session, **event}
        ctx.writer.write("fault_event", **fields)
        outcome.fault_events.append(fields)


def session_toolbox(
    ctx: RunContext,
    outcome: CellOutcome,
    index: ClockIndex,
    rows: ArmRows,
    s: int,
    served: dict[int, None] | None,
) -> Toolbox:
    """The cell's tools at session ``s``: every call counted in ``outcome`` and written
    into the trajectory."""
    arm, clock, table = outcome.arm, outcome.clock, ctx.table
    session_date = table.sessions[s].isoformat()

    def record(
        tool: str,
        args: dict[str, Any],
        result: dict[str, Any],
        row_texts: list[str] | None,
    ) -> None:
        outcome.tool_calls += 1
        served_rows = result.get("rows") or ([result["row"]] if "row" in result else [])
        outcome.rows_served += len(served_rows)
        outcome.fallbacks_served += sum(
            1 for r in served_rows if clock == "pit" and r.get("known_at_source") == "published_at"
        )
        ctx.writer.write_tool_call(
            result,
            row_texts,
            arm=arm,
            clock=clock,
            session=session_date,
            tool=tool,
            args=ctx.redacted(args),
        )

    return Toolbox(
        arm=arm,
        index=index,
        rows=rows,
        positions=ctx.positions,
        bell=table.opens[s],
        previous_bell=table.opens[s - 1] if s > ctx.window.start else None,
        session_date=session_date,
        record=record,
        served=served.setdefault if served is not None else None,
    )


def decide(
    ctx: RunContext, agent: CellAgent, task: Task, tools: Toolbox
) -> tuple[Decision, outcomes.AgentFault | None]:
    """The agent's decision, or an empty one and its fault; its egress attempts recorded
    either way. Under the abort policy an attempt ends the run."""
    try:
        decision, fault = agent.decide(task, tools), None
        outcomes.require_json_data(decision.text, "decision text")
        outcomes.require_json_data(
            [p for p in decision.picks if isinstance(p, str)], "decision picks"
        )
    except NetworkAbort as exc:
        ctx.record_attempts(agent)
        raise Aborted(f"network egress at {exc.attempt.site}") from None
    except outcomes.AgentFault as exc:
        decision, fault = Decision(), exc
    except outcomes.RuntimeFailure:
        # the attempt fails; what it did before (egress, model exchanges) is its own
        ctx.record_attempts(agent)
        raise
    ctx.record_attempts(agent)
    wrong = tools.take_fault()
    if wrong is not None:  # a tool argument of the wrong type: the first fault, and final
        decision, fault = Decision(), wrong
    return decision, fault
