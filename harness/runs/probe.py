"""The mask probe, run: after the shifted arm's cells, a fresh agent is asked the real
date and issuer of rows the arm served (every ``stride``-th, by ``pick_items``), with the
last shifted cell's toolbox; each answer is scored as recorded
(``harness.rundata.probe_scoring``) and written as a ``probe_item``."""

from __future__ import annotations

from typing import Any

import msgspec

from harness import outcomes
from harness.receipt import model
from harness.rundata.probe_scoring import MAX_ANSWER, answer_key, score_answer, verdict
from harness.runs import observe
from harness.runs.cells import decide, open_agent
from harness.runs.retries import retrying
from harness.runs.state import CellOutcome, RunContext
from harness.tools.toolbox import ArmRows, Toolbox


def pick_items(served: list[int], count: int) -> tuple[int, list[int]]:
    """(stride, chosen positions): every ``stride``-th served row, ``count`` at most."""
    if count <= 0 or not served:
        return 0, []
    stride = max(1, len(served) // count)
    return stride, served[::stride][:count]


def probe_with_retries(
    ctx: RunContext,
    last: tuple[CellOutcome, Toolbox],
    rows: ArmRows,
    facts: list[dict[str, Any]],
    served: dict[int, None],
) -> model.Probe:
    outcome, tools = last
    # the probe's tool calls are counted in the last shifted cell, as they are served
    # with its toolbox; a retried probe puts the counters back first
    counters = dict(vars(outcome))
    tries = retrying(
        ctx,
        "probe",
        lambda: run_probe(ctx, tools, rows, facts, served),
        lambda: vars(outcome).update(counters),
    )
    if tries.ok:
        result: model.Probe = tries.value
        return result
    status = outcomes.INCOMPLETE if tries.agent_exited else outcomes.HARNESS_ERROR
    ctx.writer.write("probe_failed", attempts=outcomes.RUNTIME_ATTEMPTS, status=status)
    return msgspec.convert({"arm": "shifted", "status": status, "items": []}, model.Probe)


def run_probe(
    ctx: RunContext,
    tools: Toolbox,
    rows: ArmRows,
    facts: list[dict[str, Any]],
    served: dict[int, None],
) -> model.Probe:
    stride, chosen = pick_items(list(served), ctx.config.probe)
    probe_outcome = CellOutcome("shifted", "probe")
    agent = open_agent(ctx, probe_outcome)
    if agent is None:
        summary = probe_summary([], probe_outcome.fault, stride, len(served))
        return msgspec.structs.replace(summary, agent_errors=1, verdict="inconclusive")
    items = []
    fault: outcomes.Fault | None = None
    try:
        for n, position in enumerate(chosen):
            shown = rows.copy(position)
            task = observe.probe_task(shown, tools)
            decision, failed = decide(ctx, agent, task, tools)
            error = None if failed is None else failed.fault.message
            if failed is not None and failed.fatal:
                fault = failed.fault
            # scored as recorded: what a verifier re-scores is the answer without secrets
            answer = ctx.redacted(
                (decision.text or " ".join(str(p) for p in decision.picks))[:MAX_ANSWER]
            )
            key = answer_key(facts[position])
            item = {
                "item": n,
                "row_key": shown["row_key"],
                "answer": answer,
                "answer_key": key,
                "score": score_answer(answer, key),
                "agent_error": error,
            }
            ctx.writer.write("probe_item", **item)
            items.append(item)
            if fault is not None:
                break
    finally:
        agent.close()
    ctx.record_attempts(agent)
    return probe_summary(items, fault, stride, len(served))


def probe_summary(
    items: list[dict[str, Any]], fault: outcomes.Fault | None, stride: int, served: int
) -> model.Probe:
    summary = {
        "arm": "shifted",
        "status": outcomes.COMPLETE if fault is None else outcomes.AGENT_ERROR,
        "fault": None if fault is None else fault.to_json(),
        "stride": stride,
        "served_rows": served,
        "items": items,
        "total": len(items),
        "recovered": sum(1 for i in items if i["score"]["date_recovered"]),
        "year_only": sum(1 for i in items if i["score"]["year_recovered"]),
        "issuer_recovered": sum(1 for i in items if i["score"]["issuer_recovered"]),
        "agent_errors": sum(1 for i in items if i["agent_error"]),
        "verdict": verdict(items),
    }
    return msgspec.convert(summary, model.Probe)  # typed: what the types refuse, raises here
