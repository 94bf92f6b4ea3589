"""The closed sets of values the forward track shows (its pages, its API's enums), each
value with the words the pages use for it (as ``pitweb.execution.enums`` does)."""

from __future__ import annotations

from pitweb.forward.models import ForwardRun, LogEntry

Choices = list[tuple[str, str]]

ENTRY_KIND_WORDS = {
    LogEntry.Kind.COMMIT: "commit: an agent package committed to a benchmark",
    LogEntry.Kind.WITHDRAW: "withdraw: a commitment withdrawn (it stays in the log)",
    LogEntry.Kind.ANSWERS: "answers: an answer set received for a sealed point set before "
    "its reveal (its digest, stamped before the labels were public)",
    LogEntry.Kind.SEAL: "seal: a live-shadow cohort sealed (its plan's commitment), before "
    "any of its as-of dates",
}
COMMITMENT_STATE_WORDS = {
    "live": "live: committed and not withdrawn",
    "withdrawn": "withdrawn: a later entry of the log withdrew it",
}
RUN_KIND_WORDS = {
    ForwardRun.Kind.FORWARD: "forward: over sessions after the commitment",
    ForwardRun.Kind.BACKTEST: "backtest: as many sessions just before the commitment",
}
RUN_STATUS_WORDS = {
    ForwardRun.Status.QUEUED: "queued: its execution is queued or running",
    ForwardRun.Status.FORWARD: "forward-tested: executed, verified, every traded row after "
    "the commitment",
    ForwardRun.Status.BACKTEST: "backtest: executed and verified",
    ForwardRun.Status.NOT_FORWARD: "not forward: executed, but the forward check failed",
    ForwardRun.Status.NOT_BACKTEST: "not a backtest: executed, but a row in its window was "
    "accepted after the commitment",
    ForwardRun.Status.FAILED: "failed: the execution made no verified run (the harness's side)",
}

ENTRY_KIND: Choices = [(str(k), ENTRY_KIND_WORDS[k]) for k in LogEntry.Kind]
COMMITMENT_STATE: Choices = list(COMMITMENT_STATE_WORDS.items())
RUN_KIND: Choices = [(str(k), RUN_KIND_WORDS[k]) for k in ForwardRun.Kind]
RUN_STATUS: Choices = [(str(s), RUN_STATUS_WORDS[s]) for s in ForwardRun.Status]
