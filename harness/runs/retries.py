"""Retries: a cell or the probe that fails on our side (a transport or sandbox failure)
is run again, at most ``RUNTIME_ATTEMPTS`` times, and what a failed attempt did that
counts (its egress, its model exchanges) stays in the trajectory and the ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness import outcomes
from harness.runs.state import RunContext

# What a failed attempt did that outlives it: its egress attempts count against the run
# and its model exchanges are recorded, whatever became of the attempt.
KEPT_FROM_FAILED_ATTEMPTS = ("network_attempt", "wire_attempt", "model_exchange")


@dataclass(frozen=True)
class Tries:
    ok: bool
    value: Any = None
    agent_exited: bool = False  # every failed attempt: the agent's own process exited


def retrying(
    ctx: RunContext, label: str, attempt_fn: Callable[[], Any], on_retry: Callable[[], None]
) -> Tries:
    """Run ``attempt_fn`` until it does not fail on our side, at most RUNTIME_ATTEMPTS
    times. A failed attempt's decisions and tool calls leave the trajectory; in their
    place go an ``attempt_failed`` event (the ledger entry, which the hashed body holds
    too) and, again, every egress attempt and model exchange it made: those count and
    invalidate as if the attempt had succeeded, so a retry cannot launder them."""
    exits = 0
    ctx.cell = label
    for attempt in range(1, outcomes.RUNTIME_ATTEMPTS + 1):
        mark = ctx.writer.checkpoint()
        try:
            return Tries(True, attempt_fn())
        except outcomes.RuntimeFailure as exc:
            exits += isinstance(exc, outcomes.AgentProcessExited)
            # model traffic the proxy still holds belongs to this attempt
            ctx.record_attempts(ctx.drivers.orphan_attempts())
            kept = ctx.writer.events_since(mark, KEPT_FROM_FAILED_ATTEMPTS)
            ctx.writer.rollback(mark)
            on_retry()
            entry = {
                "cell": label,
                "attempt": attempt,
                "failure": str(exc)[:500],
                "egress_attempts": [
                    {k: v for k, v in e.items() if k not in ("event", "seq")}
                    for e in kept
                    if e["event"] in ("network_attempt", "wire_attempt")
                ],
                "model_exchanges": sum(e["event"] == "model_exchange" for e in kept),
            }
            ctx.ledger.append(entry)
            ctx.writer.write("attempt_failed", **entry)
            for event in kept:
                fields = {k: v for k, v in event.items() if k not in ("event", "seq")}
                ctx.writer.write(str(event["event"]), **fields)
    return Tries(False, agent_exited=exits == outcomes.RUNTIME_ATTEMPTS)
