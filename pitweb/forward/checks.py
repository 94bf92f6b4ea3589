"""What a forward run proved: once its run is verified, the engine's forward check
(``harness.forward.check.forward_status``) is run over the stored receipt, trajectory and
release, and its answer is written on the :class:`ForwardRun`. The site never decides
"forward" itself; an execution that produced no verified run is the harness's failure and
says so, never the agent's result."""

from __future__ import annotations

import json
import logging

from harness.forward.check import forward_status
from pitweb.artifacts import copy_to, job_folder, release_copy
from pitweb.execution.models import ExecutionJob, ExecutionState
from pitweb.forward.models import ForwardRun
from pitweb.runs.models import JobState

log = logging.getLogger(__name__)

# an execution that ended without a run: the harness's side, never scored as the agent's
_NO_RUN = frozenset(ExecutionJob.FINAL) - {ExecutionState.EXECUTED}


def forward_check(*, forward_run_id: int) -> str:
    """Settle one forward run from its job and its run; idempotent (a settled row is left
    as it is). Returns its status."""
    row = ForwardRun.objects.select_related("job", "job__made", "release").get(pk=forward_run_id)
    if row.status != ForwardRun.Status.QUEUED:
        return row.status
    job = row.job
    if job.state in _NO_RUN:
        ForwardRun.objects.filter(pk=row.pk, status=ForwardRun.Status.QUEUED).update(
            status=ForwardRun.Status.FAILED,
            problems=[f"the execution ended {job.state}: {job.message}"[:2000]],
        )
        return ForwardRun.Status.FAILED
    run = job.made
    if run is None or run.status != JobState.VERIFIED:
        return row.status  # not yet proven: asked again when it is
    with job_folder("forward", row.pk) as work:
        receipt = json.loads(copy_to(run.receipt_name, work / "receipt.json").read_bytes())
        trajectory = copy_to(run.trajectory_name, work / "trajectory.jsonl")
        verdict = forward_status(receipt["body"], release_copy(row.release), trajectory)
    # what the engine says, and only what was asked of this row: a forward row is forward
    # only if the engine says "forward", a backtest only if it says "backtest"
    wanted = "forward" if row.kind == ForwardRun.Kind.FORWARD else "backtest"
    problems = list(verdict.problems)
    if verdict.status == wanted:
        status = ForwardRun.Status.FORWARD if wanted == "forward" else ForwardRun.Status.BACKTEST
    else:
        status = (
            ForwardRun.Status.NOT_FORWARD if wanted == "forward" else ForwardRun.Status.NOT_BACKTEST
        )
        if not problems:
            problems = [f"the engine says {verdict.status}, this run was queued as a {wanted} run"]
    ForwardRun.objects.filter(pk=row.pk, status=ForwardRun.Status.QUEUED).update(
        run=run, status=status, problems=problems
    )
    return status


def unsettled() -> list[int]:
    """Forward runs still queued whose job has ended (settled by the periodic sweep, so a
    lost signal or task loses nothing)."""
    return list(
        ForwardRun.objects.filter(status=ForwardRun.Status.QUEUED)
        .filter(job__state__in=ExecutionJob.FINAL)
        .values_list("pk", flat=True)
    )
