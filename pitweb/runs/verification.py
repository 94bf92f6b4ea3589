"""The work behind the verification task: claim the job, re-derive the run with the
harness while the job heart-beats (its scores, then the reasoning audit of what its agent
wrote, from the same copies), and record the outcome on the side it belongs to: what the
submitted bytes cause is theirs (mismatch), our own faults are retried and then
harness_error, a timeout is final.
"""

from __future__ import annotations

import logging
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from harness.market.prices import Prices, load_prices
from harness.receipt.audit import AuditError, reasoning_audit, run_bundle
from harness.receipt.rederive import Rederivation, rederive
from pitweb.artifacts import copy_to, job_folder, release_copy, release_held
from pitweb.jobs import machine
from pitweb.jobs.machine import Outcome, retry_outcome
from pitweb.runs import services
from pitweb.runs.models import JobState, Run, VerificationJob
from pitweb.runs.services.audits import StoredAudit, reasoning_audit_store

log = logging.getLogger(__name__)
# Checks that passed at upload or at registration: failing now means our stored copy is
# damaged, which is our problem, never the submitter's.
SERVER_SIDE_CHECKS = frozenset(
    {
        "body_sha256",
        "trajectory_sha256",
        "config_sha256",
        "release_files",
        "bundle_content_digest",
        "prices_file",
    }
)


def _submitted_prices(run: Run, work: Path) -> Prices | None:
    if not run.prices_name:
        return None
    stated = run.receipt.protocol.p4.prices
    if stated is None:  # intake refuses a price file the receipt states no prices for
        return None
    return load_prices(
        copy_to(run.prices_name, work / "prices.csv"),
        source=stated.source,
        pulled_at=stated.pulled_at,
    )


def _rederived(job_id: int, run: Run, release_dir: Path) -> tuple[Rederivation, StoredAudit | None]:
    """The run re-derived from copies of its artifacts, made for this job (the folder is
    removed however the job ends; a killed worker's by the next sweep), and, once every
    check holds, its reasoning audit from the same copies, stored."""
    with job_folder("verify", job_id) as work:
        trajectory = copy_to(run.trajectory_name, work / "trajectory.jsonl")
        result = rederive(
            copy_to(run.receipt_name, work / "receipt.json"),
            trajectory=trajectory,
            release=release_dir,
            prices=_submitted_prices(run, work),
            check_release=False,  # the copy was checked against the release's digest
        )
        if not result.ok:
            return result, None
        try:
            artifact = reasoning_audit(trajectory, run_bundle(release_dir, trajectory))
        except AuditError as exc:  # the bytes the submitter sent cannot be read as a run's
            result.add("reasoning_audit", False, f"the trajectory cannot be audited: {exc}")
            return result, None
        result.add("reasoning_audit", True)
        return result, reasoning_audit_store(artifact=artifact)


def verify_job(*, job_id: int, worker: str) -> Outcome:
    """Re-derive a run from its stored artifacts and record the verdict."""
    if not services.verification_claim(job_id=job_id, worker=worker):
        return Outcome("not claimed")  # another worker has it, or it is finished
    run = VerificationJob.objects.select_related("run", "run__release").get(pk=job_id).run
    if run.release is None or not release_held(run.release):
        return _finish(
            job_id, worker, JobState.UNKNOWN_RELEASE,
            message=f"the server does not hold release {run.release_digest}",
        )  # fmt: skip
    try:
        with machine.Heartbeat(VerificationJob, job_id, worker):
            result, audit = _rederived(job_id, run, release_copy(run.release))
    except SoftTimeLimitExceeded:  # the same bytes would take as long again: final, ours
        limit = settings.CELERY_TASK_SOFT_TIME_LIMIT
        return _finish(
            job_id, worker, JobState.HARNESS_ERROR,
            message=f"the verifier ran past its time limit ({limit} s)",
        )  # fmt: skip
    except Exception as exc:  # our failure, never the submitter's
        log.exception("verification job %s failed in the verifier", job_id)
        return _our_failure(job_id, worker, f"verifier error: {type(exc).__name__}: {exc}")
    return _verdict(job_id, worker, result, audit)


def _finish(job_id: int, worker: str, state: str, **fields: object) -> Outcome:
    services.verification_finish(job_id=job_id, worker=worker, state=state, **fields)  # type: ignore[arg-type]
    return Outcome(state)


def _our_failure(job_id: int, worker: str, message: str) -> Outcome:
    """Retried with backoff while attempts remain, then a final harness_error."""
    retry_in = services.verification_retry(job_id=job_id, worker=worker, message=message)
    return retry_outcome(VerificationJob, retry_in)


def _verdict(job_id: int, worker: str, result: Rederivation, audit: StoredAudit | None) -> Outcome:
    checks = [c.to_json() for c in result.checks]
    mismatch = result.first_mismatch
    if mismatch is None:
        return _finish(job_id, worker, JobState.VERIFIED, checks=checks, audit=audit)
    if mismatch.name in SERVER_SIDE_CHECKS:
        return _finish(
            job_id, worker, JobState.HARNESS_ERROR, checks=checks, mismatch_check=mismatch.name,
            message=f"the server's stored copy failed {mismatch.name}: {mismatch.detail}",
        )  # fmt: skip
    return _finish(
        job_id, worker, JobState.MISMATCH, checks=checks, mismatch_check=mismatch.name,
        # by name only: a refuted value is repeated nowhere but in the run page's claim box
        message=f"{mismatch.name} differs from what the system re-derived",
    )  # fmt: skip
