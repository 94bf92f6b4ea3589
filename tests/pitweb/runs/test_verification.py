"""Verification jobs: states, re-derivation, retries, idempotence, the stale sweep."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.utils import timezone

from harness.receipt.build import receipt_text
from pitweb.core.errors import SubmissionError
from pitweb.runs import services
from pitweb.runs.models import JobState, Run, VerificationJob
from pitweb.runs.tasks import verify_run_task
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)


def submit(user: User, artifacts: Artifacts, **replace: bytes) -> Run:
    files = artifacts.files(**replace)
    return services.run_submit(
        user=user,
        receipt=files["receipt"],
        trajectory=files["trajectory"],
        prices=files.get("prices"),
    ).run


def test_verified_run_records_every_check(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    job = run.jobs.get()
    assert job.state == JobState.VERIFIED and job.attempts == 1 and job.worker
    assert all(c["status"] == "ok" for c in job.checks)
    per_cell = {
        c["name"].split(" ", 2)[2] for c in job.checks if c["name"].startswith("cell main/pit ")
    }
    assert per_cell == {  # each cell's events, its release facts and its score
        "status", "agent_fault", "sessions", "agent_errors", "tool_calls", "rows_served",
        "pit_fallbacks_served", "decisions_with_picks", "rejected_picks", "reachable",
        "unreached_rows", "entered_before_acceptance", "knowable_before_acceptance", "trades",
        "priced_trades", "trades_sha256", "total_return", "ignored_orders", "picks from orders",
    }  # fmt: skip
    assert len([c for c in job.checks if c["name"].startswith("cell ")]) == 9 * len(per_cell)
    names = {c["name"] for c in job.checks}
    assert {
        "knowability",
        "rankable",
        "attempts",
        "sessions",
        "capabilities agent_process",
        "capabilities",
        "limits",
        "protocol P3_retrieval_timestamps",
        "protocol P6_disaggregation",
    } <= names


def test_running_a_job_twice_is_a_no_op(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    job = run.jobs.get()
    finished = job.finished_at
    assert verify_run_task(job.pk) == "not claimed"
    job.refresh_from_db()
    assert (job.state, job.attempts, job.finished_at) == (JobState.VERIFIED, 1, finished)


def test_damage_to_the_servers_stored_copy_is_our_error_not_a_mismatch(
    registered: Any, submitter: User, stub_run: Artifacts, staff: User
) -> None:
    run = submit(submitter, stub_run)
    with default_storage.open(run.trajectory_name, "rb") as handle:
        data = handle.read()
    default_storage.delete(run.trajectory_name)
    default_storage.save(
        run.trajectory_name, io.BytesIO(data.replace(b'"picks":[', b'"picks":[ ', 1))
    )
    job = services.run_reverify(run=run, staff=staff, reason="storage audit")
    job.refresh_from_db()
    assert job.state == JobState.HARNESS_ERROR and job.mismatch_check == "trajectory_sha256"
    assert "stored copy" in job.message
    assert job.previous is not None and job.previous.state == JobState.VERIFIED
    run.refresh_from_db()
    assert run.status == JobState.HARNESS_ERROR and run.verification_level == "hashes_verified"


def test_verifier_failure_retries_then_is_a_harness_error_not_a_mismatch(
    registered: Any, submitter: User, stub_run: Artifacts, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitweb.runs import verification

    calls = []

    def broken(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(verification, "rederive", broken)
    run = submit(submitter, stub_run)
    job = run.jobs.get()
    assert job.state == JobState.HARNESS_ERROR
    assert len(calls) == services.MAX_ATTEMPTS == job.attempts
    assert "disk on fire" in job.message
    run.refresh_from_db()
    assert run.status == JobState.HARNESS_ERROR and run.verification_level == "self_reported"


def test_a_missing_release_is_its_own_state(
    registered: Any, submitter: User, stub_run: Artifacts, staff: User
) -> None:
    run = submit(submitter, stub_run)
    for name in default_storage.listdir(registered.storage_prefix)[1]:
        default_storage.delete(f"{registered.storage_prefix}/{name}")
    job = services.run_reverify(run=run, staff=staff, reason="release storage moved")
    job.refresh_from_db()
    assert job.state == JobState.UNKNOWN_RELEASE
    run.refresh_from_db()
    assert run.status == JobState.UNKNOWN_RELEASE and run.verification_level == "hashes_verified"


def test_reverify_needs_a_reason_and_refuses_while_a_job_runs(
    registered: Any, submitter: User, stub_run: Artifacts, staff: User
) -> None:
    run = submit(submitter, stub_run)
    with pytest.raises(SubmissionError, match="reason"):
        services.run_reverify(run=run, staff=staff, reason="  ")
    VerificationJob.objects.filter(run=run).update(state=JobState.VERIFYING)
    with pytest.raises(SubmissionError) as refused:
        services.run_reverify(run=run, staff=staff, reason="again")
    assert refused.value.code == "job_in_progress"


def test_stale_jobs_are_requeued_and_finish(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    import pitweb.runs.tasks as tasks

    # a worker claimed the job and died: it sits in verifying with an old heartbeat
    real = tasks.verify_run_task.delay
    tasks.verify_run_task.delay = lambda *a, **k: None  # type: ignore[method-assign]
    try:
        run = submit(submitter, stub_run)
    finally:
        tasks.verify_run_task.delay = real  # type: ignore[method-assign]
    job = run.jobs.get()
    assert services.verification_claim(job_id=job.pk, worker="dead-host:1")
    VerificationJob.objects.filter(pk=job.pk).update(
        heartbeat_at=timezone.now() - timedelta(minutes=10)
    )
    assert services.verification_requeue_stale() == [job.pk]
    job.refresh_from_db()
    assert job.state == JobState.VERIFIED and job.attempts == 2
    assert job.worker != "dead-host:1"


def test_a_fresh_heartbeat_is_not_swept(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    job = run.jobs.get()
    VerificationJob.objects.filter(pk=job.pk).update(
        state=JobState.VERIFYING, heartbeat_at=timezone.now(), worker="alive:1"
    )
    assert services.verification_requeue_stale() == []


def test_a_finished_job_cannot_be_finished_again(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    job = run.jobs.get()
    assert not services.verification_finish(
        job_id=job.pk, worker=job.worker, state=JobState.MISMATCH
    )
    job.refresh_from_db()
    assert job.state == JobState.VERIFIED
    with pytest.raises(ValueError):
        services.verification_finish(job_id=job.pk, worker=job.worker, state=JobState.VERIFYING)


def test_a_priced_run_without_its_price_file_is_refused(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    files = stub_run.files()
    with pytest.raises(SubmissionError) as refused:
        services.run_submit(
            user=submitter, receipt=files["receipt"], trajectory=files["trajectory"]
        )
    assert refused.value.code == "prices_required"
    assert Run.objects.count() == 0


def test_rerverifying_keeps_a_verified_run_ranked_and_a_verifier_failure_does_not_unrank_it(
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    staff: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.contrib.auth.models import AnonymousUser

    from pitweb.board.selectors import leaderboard
    from pitweb.runs import verification

    run = submit(submitter, stub_run)
    assert [r["run_id"] for r in leaderboard(user=AnonymousUser())["ranked"]] == [run.run_id]
    monkeypatch.setattr(
        verification,
        "rederive",
        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("verifier down")),
    )
    job = services.run_reverify(run=run, staff=staff, reason="new verifier")
    job.refresh_from_db()
    assert job.state == JobState.HARNESS_ERROR
    assert [r["run_id"] for r in leaderboard(user=AnonymousUser())["ranked"]] == [run.run_id]


def test_the_receipt_score_is_rederived_not_trusted(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    data = json.loads(stub_run.receipt.read_text())
    for cell in data["body"]["cells"]:
        if cell["total_return"] is not None:
            cell["total_return"] += 0.1  # an inflated but re-hashed receipt
    run = submit(
        submitter, stub_run, receipt=receipt_text(data["body"], data["emitted_at"]).encode()
    )
    job = run.jobs.get()
    assert job.state == JobState.MISMATCH and job.mismatch_check.endswith("total_return")


def test_staff_requeue_takes_only_silent_jobs_and_is_audited(
    registered: Any, submitter: User, stub_run: Artifacts, staff: User
) -> None:
    from pitweb.core.models import AuditEvent

    run = submit(submitter, stub_run)
    job = run.jobs.get()
    VerificationJob.objects.filter(pk=job.pk).update(
        state=JobState.VERIFYING, heartbeat_at=timezone.now(), worker="alive:1"
    )
    assert services.jobs_requeue(staff=staff, run=run, reason="queue looks stuck") == []
    job.refresh_from_db()
    assert job.state == JobState.VERIFYING and job.worker == "alive:1"
    event = AuditEvent.objects.get(action="requeue")
    assert event.actor == staff and "queue looks stuck" in event.reason


def test_the_sweep_gives_up_on_a_job_that_keeps_killing_its_workers(
    registered: Any, submitter: User, stub_run: Artifacts, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    import pitweb.runs.tasks as tasks

    monkeypatch.setattr(tasks.verify_run_task, "delay", lambda *a, **k: None)  # never runs
    run = submit(submitter, stub_run)
    job = run.jobs.get()
    long_ago = timezone.now() - timedelta(hours=1)
    # its last worker died mid-job on its last allowed attempt
    VerificationJob.objects.filter(pk=job.pk).update(
        state=JobState.VERIFYING,
        worker="gone:1",
        attempts=services.MAX_ATTEMPTS,
        heartbeat_at=long_ago,
    )
    assert services.verification_requeue_stale() == []
    job.refresh_from_db()
    run.refresh_from_db()
    assert job.state == JobState.HARNESS_ERROR and "gave up" in job.message
    assert run.status == JobState.HARNESS_ERROR
    assert run.verification_level == "self_reported" and run.failed_check == ""  # never theirs
