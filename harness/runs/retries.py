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
    invalidate as if the attempt had succeeded, so a retry cannot launder them. With a
    checkpoint (``ctx.saved``) each failed attempt is saved before the next starts, and a
    resumed run writes the ones saved first and has only the attempts left."""
    ctx.cell = label
    # a resumed run goes on from the attempts an earlier process saw fail (a checkpoint)
    made, exits = (0, 0) if ctx.saved is None else ctx.saved.replay(ctx, label)
    for attempt in range(made + 1, outcomes.RUNTIME_ATTEMPTS + 1):
        mark = ctx.writer.checkpoint()
        try:
            return Tries(True, attempt_fn())
        except outcomes.RuntimeFailure as exc:
            exited = isinstance(exc, outcomes.AgentProcessExited)
            exits += exited
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
            if ctx.saved is not None:
                ctx.saved.failed(
                    label, entry, [{k: v for k, v in e.items() if k != "seq"} for e in kept], exited
                )
    return Tries(False, agent_exited=exits == outcomes.RUNTIME_ATTEMPTS)
