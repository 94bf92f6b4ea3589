"""What a forward run proved: once its run is verified, the engine's forward check
(``harness.forward.check.forward_status``) is run over the stored receipt, trajectory and
release, with the binding looked up in the site's own commitment log, and its answer is
written on the :class:`ForwardRun`. The site never decides "forward" itself; an execution
that produced no verified run is the harness's failure and says so, never the agent's
result. A forward row settled as forward marks its run forward-tested
(``services.forward_tested_mark``), in the same transaction."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.db import transaction

from harness.forward.check import forward_status
from harness.forward.log import LogError, verify_log
from pitweb.artifacts import copy_to, job_folder, release_copy
from pitweb.execution.models import ExecutionJob, ExecutionState
from pitweb.forward.models import ForwardRun
from pitweb.forward.selectors import log_document
from pitweb.forward.services import forward_tested_mark
from pitweb.runs.models import JobState

log = logging.getLogger(__name__)

# an execution that ended without a run: the harness's side, never scored as the agent's
_NO_RUN = frozenset(ExecutionJob.FINAL) - {ExecutionState.EXECUTED}
# a run whose verification ended anywhere but verified proves nothing either way
_NOT_PROVEN = frozenset({JobState.MISMATCH, JobState.HARNESS_ERROR, JobState.UNKNOWN_RELEASE})


def _settle(row: ForwardRun, status: str, problems: list[str], **more: Any) -> str:
    ForwardRun.objects.filter(pk=row.pk, status=ForwardRun.Status.QUEUED).update(
        status=status, problems=[p[:2000] for p in problems], **more
    )
    return status


def _as_queued(row: ForwardRun, binding: dict[str, Any], config: dict[str, Any]) -> list[str]:
    """The run's binding and window are the ones the scheduler queued for this row: a run
    that names another commitment, kind or window is not this row's run."""
    commitment = row.commitment
    expected = {
        "kind": row.kind,
        "entry": commitment.entry.digest,
        "seq": commitment.entry.seq,
        "stamped_at": commitment.entry.body["stamped_at"],
        "agent_digest": commitment.agent_digest,
    }
    wrong = [
        f"binding_differs: the run's {key} is {binding.get(key)!r}, this row's is {value!r}"
        for key, value in expected.items()
        if binding.get(key) != value
    ]
    window = (config.get("start"), config.get("end"))
    if window != (row.start.isoformat(), row.end.isoformat()):
        wrong.append(
            f"binding_differs: the run's window {window}, this row's {row.start}..{row.end}"
        )
    return wrong


def forward_check(*, forward_run_id: int) -> str:
    """Settle one forward run from its job and its run; idempotent (a settled row is left
    as it is). Returns its status."""
    row = ForwardRun.objects.select_related("job", "job__made", "release", "commitment__entry").get(
        pk=forward_run_id
    )
    if row.status != ForwardRun.Status.QUEUED:
        return row.status
    job = row.job
    if job.state in _NO_RUN:
        return _settle(
            row, ForwardRun.Status.FAILED, [f"the execution ended {job.state}: {job.message}"]
        )
    run = job.made
    if run is not None and run.status in _NOT_PROVEN:
        return _settle(
            row, ForwardRun.Status.FAILED, [f"the executed run's verification ended {run.status}"]
        )
    if run is None or run.status != JobState.VERIFIED:
        return row.status  # not yet proven: asked again when it is
    if not run.executed:
        # an upload with the same body as the execution's stored run: the upload is not
        # the site's execution, whatever it computes to
        return _settle(
            row, ForwardRun.Status.NOT_FORWARD,
            ["not_executed: the run stored for this execution is an upload, not ours"],
        )  # fmt: skip
    try:
        entries = verify_log(log_document())
    except LogError as exc:  # the site's own log is damaged: ours, never the agent's
        return _settle(
            row, ForwardRun.Status.FAILED, [f"the commitment log does not verify: {exc}"]
        )
    with job_folder("forward", row.pk) as work:
        receipt = json.loads(copy_to(run.receipt_name, work / "receipt.json").read_bytes())
        trajectory = copy_to(run.trajectory_name, work / "trajectory.jsonl")
        body = receipt["body"]
        verdict = forward_status(body, release_copy(row.release), trajectory, entries)
    config = body.get("config") or {}
    problems = _as_queued(row, config.get("forward") or {}, config) + list(verdict.problems)
    # what the engine says, and only what was asked of this row: a forward row is forward
    # only if the engine says "forward", a backtest only if it says "backtest"
    wanted = "forward" if row.kind == ForwardRun.Kind.FORWARD else "backtest"
    if verdict.status == wanted and not problems:
        status = ForwardRun.Status.FORWARD if wanted == "forward" else ForwardRun.Status.BACKTEST
    else:
        status = (
            ForwardRun.Status.NOT_FORWARD if wanted == "forward" else ForwardRun.Status.NOT_BACKTEST
        )
        if not problems:
            problems = [f"the engine says {verdict.status}, this run was queued as a {wanted} run"]
    with transaction.atomic():  # settled and its runs marked together
        settled = _settle(row, status, problems, run=run)
        if settled == ForwardRun.Status.FORWARD:
            forward_tested_mark(forward_run_id=row.pk)
    return settled


def unsettled() -> list[int]:
    """Forward runs still queued whose job has ended (settled by the periodic sweep, so a
    lost signal or task loses nothing)."""
    return list(
        ForwardRun.objects.filter(status=ForwardRun.Status.QUEUED)
        .filter(job__state__in=ExecutionJob.FINAL)
        .values_list("pk", flat=True)
    )
