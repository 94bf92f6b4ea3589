"""What a forward run proved: once its run is verified, the engine's forward check
(``harness.forward.check.forward_status``) is run over the stored receipt, trajectory and
release, and its answer is written on the :class:`ForwardRun`. The site never decides
"forward" itself; an execution that produced no verified run is the harness's failure and
says so, never the agent's result."""

from __future__ import annotations

import json
import logging

from harness.forward.check import forward_status
from harness.rundata.trajectory import read_events
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
        events = read_events(copy_to(run.trajectory_name, work / "trajectory.jsonl"))
        verdict = forward_status(receipt["body"], release_copy(row.release), events)
    status = {
        "forward": ForwardRun.Status.FORWARD,
        "backtest": ForwardRun.Status.BACKTEST,
    }.get(verdict.status, ForwardRun.Status.NOT_FORWARD)
    problems = list(verdict.problems)
    if verdict.status == "backtest" and row.kind != ForwardRun.Kind.BACKTEST:
        status, problems = ForwardRun.Status.NOT_FORWARD, ["bound as a backtest", *problems]
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
