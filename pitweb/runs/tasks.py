"""Thin tasks: take an id, claim the job, call harness, record the outcome."""

from __future__ import annotations

import logging
import threading

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files.storage import default_storage

from harness.platform import RescoreRefused, rescore
from harness.prices import load_prices
from harness.rederive import rederive
from pitweb.releases.services import release_local_path
from pitweb.runs import services, workers  # noqa: F401 - workers: heartbeat signals
from pitweb.runs.models import JobState, VerificationJob

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3
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


class _Heartbeat:
    """Marks the job alive while the worker works; a killed worker stops beating and
    the sweep hands its job to another."""

    def __init__(self, job_id: int, worker: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, args=(job_id, worker), daemon=True)

    def _beat(self, job_id: int, worker: str) -> None:
        while not self._stop.wait(settings.PITWEB_HEARTBEAT_SECONDS):
            services.verification_heartbeat(job_id=job_id, worker=worker)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@shared_task(acks_late=True, reject_on_worker_lost=True)
def verify_run_task(job_id: int) -> str:
    worker = services.worker_name()
    if not services.verification_claim(job_id=job_id, worker=worker):
        return "not claimed"  # another worker has it, or it is finished: running twice is a no-op
    job = VerificationJob.objects.select_related("run", "run__release").get(pk=job_id)
    run = job.run
    try:
        with _Heartbeat(job_id, worker):
            release_dir = release_local_path(run.release) if run.release else None
            if release_dir is None or not (release_dir / "manifest.json").exists():
                services.verification_finish(
                    job_id=job_id,
                    worker=worker,
                    state=JobState.UNKNOWN_RELEASE,
                    message=f"the server does not hold release {run.release_digest}",
                )
                return JobState.UNKNOWN_RELEASE
            prices = None
            if run.prices_name:
                stated = run.body["protocol"]["P4_costs_and_frictions"]["prices"]
                prices = load_prices(
                    default_storage.path(run.prices_name),
                    source=stated["source"],
                    pulled_at=stated["pulled_at"],
                )
            result = rederive(
                default_storage.path(run.receipt_name),
                trajectory=default_storage.path(run.trajectory_name),
                release=release_dir,
                prices=prices,
                check_release=False,  # checked whole at registration; every segment read is checked
            )
    except SoftTimeLimitExceeded:
        # the same bytes would take as long again: final, and ours (never retried)
        services.verification_finish(
            job_id=job_id,
            worker=worker,
            state=JobState.HARNESS_ERROR,
            message=f"the verifier ran past its time limit ({settings.CELERY_TASK_SOFT_TIME_LIMIT} s)",
        )
        return JobState.HARNESS_ERROR
    except Exception as exc:  # our failure, never the submitter's
        log.exception("verification job %s failed in the verifier", job_id)
        message = f"verifier error: {type(exc).__name__}: {exc}"[:2000]
        attempts = (
            VerificationJob.objects.filter(pk=job_id).values_list("attempts", flat=True).first()
            or 0
        )
        if attempts < MAX_ATTEMPTS and services.verification_release(
            job_id=job_id, worker=worker, message=message
        ):
            verify_run_task.apply_async((job_id,), countdown=2**attempts)
            return "retrying"
        services.verification_finish(
            job_id=job_id, worker=worker, state=JobState.HARNESS_ERROR, message=message
        )
        return JobState.HARNESS_ERROR
    mismatch = result.first_mismatch
    if mismatch is not None and mismatch.name in SERVER_SIDE_CHECKS:
        # these passed at upload or at registration: failing now means our stored copy
        # is damaged, which is our problem, never the submitter's
        services.verification_finish(
            job_id=job_id,
            worker=worker,
            state=JobState.HARNESS_ERROR,
            checks=[c.to_json() for c in result.checks],
            mismatch_check=mismatch.name,
            message=f"the server's stored copy failed {mismatch.name}: {mismatch.detail}",
        )
        return JobState.HARNESS_ERROR
    services.verification_finish(
        job_id=job_id,
        worker=worker,
        state=JobState.VERIFIED if mismatch is None else JobState.MISMATCH,
        checks=[c.to_json() for c in result.checks],
        mismatch_check=mismatch.name if mismatch else "",
        # by name only: a refuted value is repeated nowhere but in the run page's claim box
        message=f"{mismatch.name} differs from what the system re-derived" if mismatch else "",
    )
    return JobState.VERIFIED if mismatch is None else JobState.MISMATCH


@shared_task(acks_late=True, reject_on_worker_lost=True)
def rescore_run_task(score_id: int) -> str:
    """Platform figures for one run with one reference-price version."""
    from pitweb.runs import platform
    from pitweb.runs.models import PlatformScore

    worker = services.worker_name()
    if not platform.platform_claim(score_id=score_id, worker=worker):
        return "not claimed"
    score = PlatformScore.objects.select_related("run", "run__release", "prices").get(pk=score_id)
    run, reference = score.run, score.prices
    try:
        prices = load_prices(
            platform.reference_prices_path(reference),
            source=reference.source,
            pulled_at=reference.pulled_at,
        )
        result = rescore(
            default_storage.path(run.receipt_name),
            trajectory=default_storage.path(run.trajectory_name),
            release=release_local_path(run.release),  # type: ignore[arg-type]
            prices=prices,
            check_release=False,
        )
    except RescoreRefused as exc:
        platform.platform_finish(
            score_id=score_id,
            worker=worker,
            state=PlatformScore.State.REFUSED,
            message="the artifacts do not hold together: "
            + ", ".join(c.name for c in exc.failed),  # by name: no stated value repeated
        )
        return PlatformScore.State.REFUSED
    except Exception as exc:  # our failure, never the run's
        log.exception("platform score %s failed", score_id)
        message = f"scorer error: {type(exc).__name__}: {exc}"[:2000]
        if score.attempts < MAX_ATTEMPTS and platform.platform_release(
            score_id=score_id, worker=worker, message=message
        ):
            rescore_run_task.apply_async((score_id,), countdown=2**score.attempts)
            return "retrying"
        platform.platform_finish(
            score_id=score_id,
            worker=worker,
            state=PlatformScore.State.HARNESS_ERROR,
            message=message,
        )
        return PlatformScore.State.HARNESS_ERROR
    platform.platform_finish(
        score_id=score_id,
        worker=worker,
        state=PlatformScore.State.SCORED,
        figures=result.to_json(),
    )
    return PlatformScore.State.SCORED


@shared_task
def sweep_stale_jobs() -> list[int]:
    from pitweb.runs.platform import platform_requeue_stale

    platform_requeue_stale()
    return services.verification_requeue_stale()
