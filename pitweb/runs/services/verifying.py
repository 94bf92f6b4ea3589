"""Verification jobs: requested, claimed, heart-beaten, finished, retried and swept, on
the claimable-job machine. Jobs move (``VerificationJob.LEGAL_MOVES``)::

    received  -> verifying                      (a worker claims it)
    verifying -> verified | mismatch | harness_error | unknown_release
    verifying -> received                       (our failure, or a dead worker: again)

and the machine refuses any other; a new verification is a new job linked to the last
one. Each move is mirrored on the run (its ``status``) and tells the board. A verified
run is proven: ``run_proven`` is sent, and pricing scores it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Case, Q, Value, When

from pitweb.board.changes import board_changed
from pitweb.core.errors import SubmissionError
from pitweb.jobs import machine
from pitweb.jobs.dispatch import send_on_commit
from pitweb.runs.models import JobState, Run, VerificationJob, VerificationLevel
from pitweb.runs.services.audits import (
    StoredAudit,
    reasoning_audit_record,
    reasoning_audit_remove,
)
from pitweb.runs.signals import run_proven, run_taken_down


def verification_request(
    *, run: Run, kind: str, requested_by: User | None, reason: str
) -> VerificationJob:
    """A new job, linked to the run's last one, queued once the transaction commits."""
    with transaction.atomic():
        Run.objects.select_for_update().filter(pk=run.pk).first()  # one request per run at a time
        previous = run.jobs.first()
        if previous is not None and not previous.is_final:
            raise SubmissionError(
                "job_in_progress", f"job {previous.pk} of this run is still {previous.state}", 409
            )
        job = VerificationJob.objects.create(
            run=run, kind=kind, requested_by=requested_by, reason=reason, previous=previous
        )
        Run.objects.filter(pk=run.pk).update(status=JobState.RECEIVED)
        board_changed(runs=[run.pk])
        enqueue_verification(job.pk)
    return job


VERIFY_TASK = "pitweb.runs.tasks.verify_run_task"


def enqueue_verification(job_id: int) -> None:
    """Send job ``job_id`` to a worker once the transaction commits: the one place these
    services reach the tasks, by name (tasks import services, never the other way).
    Robust: a broker hiccup must not turn a stored upload into a 500; the sweep
    re-dispatches jobs left waiting in received."""
    send_on_commit(VERIFY_TASK, job_id)


def _mirror(run_fields: dict[str, Any] | None = None) -> Callable[[int, str], None]:
    """After a job moved: its state on its run (with ``run_fields``), and the board told."""

    def then(job_id: int, state: str) -> None:
        runs = Run.objects.filter(jobs__pk=job_id)
        runs.update(status=state, **(run_fields or {}))
        board_changed(runs=runs.values_list("pk", flat=True))

    return then


def verification_claim(*, job_id: int, worker: str) -> bool:
    """received -> verifying, for exactly one worker."""
    return machine.claim(VerificationJob, pk=job_id, worker=worker, then=_mirror())


def verification_heartbeat(*, job_id: int, worker: str) -> None:
    machine.heartbeat(VerificationJob, pk=job_id, worker=worker)


def verification_finish(
    *,
    job_id: int,
    worker: str,
    state: str,
    checks: Iterable[dict[str, str]] = (),
    mismatch_check: str = "",
    message: str = "",
    audit: StoredAudit | None = None,
) -> bool:
    """verifying -> a final state, only by the worker that holds the job. A verdict
    (verified, mismatch) sets the run's level; a harness error says nothing about it.
    ``audit``: the reasoning audit the verification re-derived, the run's from now on if
    it verified the run (before the run is announced proven, so that whoever listens
    finds it); a refuted run keeps none."""
    run_fields: dict[str, Any] = {}
    if state in (JobState.VERIFIED, JobState.MISMATCH):
        run_fields = {
            # a run the site executed, or whose agent it re-executed, keeps that level
            # while its arithmetic still holds
            "verification_level": Case(
                When(
                    Q(executed=True) | Q(verification_level=VerificationLevel.REEXECUTED),
                    then=Value(VerificationLevel.REEXECUTED),
                ),
                default=Value(VerificationLevel.HASHES_VERIFIED),
            )
            if state == JobState.VERIFIED
            else VerificationLevel.SELF_REPORTED,
            "failed_check": mismatch_check[:200] if state == JobState.MISMATCH else "",
        }
    with transaction.atomic():
        done = machine.finish(
            VerificationJob,
            pk=job_id,
            worker=worker,
            state=state,
            then=_mirror(run_fields),
            checks=list(checks),
            mismatch_check=mismatch_check,
            message=message,
        )
        if done and state == JobState.VERIFIED:
            run = Run.objects.get(jobs__pk=job_id)
            if audit is not None:  # the run's before it is announced proven
                reasoning_audit_record(run=run, stored=audit)
            run_proven.send(sender=Run, run=run)
        elif done and state == JobState.MISMATCH:
            run = Run.objects.get(jobs__pk=job_id)
            reasoning_audit_remove(run=run)
            run_taken_down.send(
                sender=Run, run=run,
                reason=f"a verification refuted it: {mismatch_check or 'a check'} differs",
            )  # fmt: skip
    return done


def verification_retry(*, job_id: int, worker: str, message: str) -> int | None:
    """Our own failure: verifying -> received while attempts remain (the seconds to wait
    are returned), else a final harness_error."""
    return machine.give_up_or_release(
        VerificationJob, pk=job_id, worker=worker, message=message, then=_mirror()
    )


def verification_requeue_stale(*, older_than: timedelta | None = None) -> list[int]:
    """The sweep. Jobs whose worker stopped heart-beating go back to received and are
    dispatched again; a job that has used its attempts (it keeps killing workers) ends
    as harness_error; a job left waiting in received (its message was lost) is
    dispatched again."""
    swept = machine.sweep_stale(VerificationJob, older_than=older_than, then=_mirror())
    for pk in swept.to_dispatch:
        enqueue_verification(pk)
    return swept.requeued
