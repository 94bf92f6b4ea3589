"""The claimable-job machine itself: its legal moves, its claim, its heartbeat and its
stale sweep, on real rows of the two kinds of job the site runs (a verification, a
platform score) and, for the race, on two real database connections."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from pitweb.jobs import machine
from pitweb.pricing.models import PlatformScore
from pitweb.runs import services
from pitweb.runs.models import JobState, Run, VerificationJob
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)
LONG_AGO = timedelta(minutes=10)


@pytest.fixture()
def queued(
    registered: Any, submitter: User, stub_run: Artifacts, monkeypatch: pytest.MonkeyPatch
) -> VerificationJob:
    """A stored run whose verification job waits in received (no worker was sent)."""
    import pitweb.runs.tasks as tasks

    monkeypatch.setattr(tasks.verify_run_task, "delay", lambda *a, **k: None)
    files = stub_run.files()
    submission = services.run_submit(
        user=submitter,
        receipt=files["receipt"],
        trajectory=files["trajectory"],
        prices=files["prices"],
    )
    assert submission.job is not None and submission.job.state == JobState.RECEIVED
    return submission.job


def _silence(job: VerificationJob) -> None:
    VerificationJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - LONG_AGO)


def test_an_illegal_move_is_refused_and_writes_nothing(queued: VerificationJob) -> None:
    with pytest.raises(machine.IllegalMove, match="received -> verified"):
        machine.transition(
            VerificationJob, pk=queued.pk, source=JobState.RECEIVED, target=JobState.VERIFIED
        )
    with pytest.raises(machine.IllegalMove, match="not a final state"):
        machine.finish(VerificationJob, pk=queued.pk, worker="w:1", state=JobState.RECEIVED)
    queued.refresh_from_db()
    assert queued.state == JobState.RECEIVED and queued.attempts == 0


def test_a_final_state_is_left_only_where_the_kind_allows() -> None:
    assert not VerificationJob.may_move(JobState.VERIFIED, JobState.RECEIVED)
    assert not PlatformScore.may_move(PlatformScore.State.SCORED, PlatformScore.State.PENDING)
    # a refused score is queued again when its run is proven again: a clean slate
    assert PlatformScore.may_move(PlatformScore.State.REFUSED, PlatformScore.State.PENDING)
    assert VerificationJob.GAVE_UP in VerificationJob.FINAL
    assert PlatformScore.GAVE_UP in PlatformScore.FINAL


def test_a_legal_move_from_a_state_the_job_has_left_changes_nothing(
    queued: VerificationJob,
) -> None:
    assert machine.claim(VerificationJob, pk=queued.pk, worker="w:1")
    assert not machine.claim(VerificationJob, pk=queued.pk, worker="w:2")
    # only the worker that holds a job finishes it
    assert not machine.finish(
        VerificationJob, pk=queued.pk, worker="w:2", state=JobState.HARNESS_ERROR
    )
    queued.refresh_from_db()
    assert queued.state == JobState.VERIFYING and queued.worker == "w:1"


def test_of_two_workers_claiming_at_once_exactly_one_wins(queued: VerificationJob) -> None:
    start = threading.Barrier(2)
    won: dict[str, bool] = {}

    def claimer(name: str) -> None:
        try:
            start.wait()
            won[name] = machine.claim(VerificationJob, pk=queued.pk, worker=name)
        finally:
            connection.close()  # each thread had a connection of its own

    threads = [threading.Thread(target=claimer, args=(f"racer:{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won.values()) == [False, True]
    queued.refresh_from_db()
    [winner] = [name for name, ok in won.items() if ok]
    assert queued.worker == winner and queued.attempts == 1


def test_a_silent_job_is_requeued_then_given_up_after_its_attempts(
    queued: VerificationJob,
) -> None:
    for attempt in range(1, machine.MAX_ATTEMPTS + 1):
        assert machine.claim(VerificationJob, pk=queued.pk, worker=f"dies:{attempt}")
        _silence(queued)
        swept = machine.sweep_stale(VerificationJob)
        queued.refresh_from_db()
        if attempt < machine.MAX_ATTEMPTS:
            assert swept.requeued == [queued.pk] and swept.gave_up == []
            assert queued.state == JobState.RECEIVED and queued.worker == ""
            assert "requeued" in queued.message
    assert swept.requeued == [] and swept.gave_up == [queued.pk]
    assert queued.state == JobState.HARNESS_ERROR and queued.attempts == machine.MAX_ATTEMPTS
    assert queued.finished_at is not None and "gave up" in queued.message


def test_the_sweep_mirrors_a_given_up_job_on_its_run_as_our_error(
    queued: VerificationJob,
) -> None:
    VerificationJob.objects.filter(pk=queued.pk).update(attempts=machine.MAX_ATTEMPTS - 1)
    assert services.verification_claim(job_id=queued.pk, worker="dies:1")
    _silence(queued)
    assert services.verification_requeue_stale() == []
    run = Run.objects.get(pk=queued.run_id)
    # the harness failed, not the submission: the run's level is untouched
    assert run.status == JobState.HARNESS_ERROR and run.verification_level == "self_reported"
    assert run.failed_check == ""


def test_a_beating_job_is_not_swept(queued: VerificationJob, settings: Any) -> None:
    settings.PITWEB_HEARTBEAT_SECONDS = 0.01
    assert machine.claim(VerificationJob, pk=queued.pk, worker="alive:1")
    _silence(queued)
    cutoff = machine.stale_cutoff(timedelta(minutes=1))

    def beaten() -> bool:
        queued.refresh_from_db()
        return queued.heartbeat_at is not None and queued.heartbeat_at > cutoff

    with machine.Heartbeat(VerificationJob, queued.pk, "alive:1"):
        deadline = timezone.now() + timedelta(seconds=30)
        while not beaten() and timezone.now() < deadline:
            threading.Event().wait(0.01)
        assert beaten(), "the heartbeat never reached the row"
        swept = machine.sweep_stale(VerificationJob, older_than=timedelta(minutes=1))
    assert swept.requeued == swept.gave_up == []
    queued.refresh_from_db()
    assert queued.state == JobState.VERIFYING and queued.worker == "alive:1"


def test_a_heartbeat_of_a_worker_that_lost_the_job_writes_nothing(
    queued: VerificationJob,
) -> None:
    assert machine.claim(VerificationJob, pk=queued.pk, worker="slow:1")
    _silence(queued)
    assert machine.sweep_stale(VerificationJob).requeued == [queued.pk]
    assert not machine.heartbeat(VerificationJob, pk=queued.pk, worker="slow:1")
    queued.refresh_from_db()
    assert queued.heartbeat_at is not None and queued.heartbeat_at < timezone.now() - LONG_AGO / 2


def test_a_job_waiting_past_the_limit_is_listed_for_dispatch(queued: VerificationJob) -> None:
    VerificationJob.objects.filter(pk=queued.pk).update(created_at=timezone.now() - LONG_AGO)
    swept = machine.sweep_stale(VerificationJob)
    assert swept.waiting == swept.to_dispatch == [queued.pk]


def test_the_queue_summary_counts_waiting_and_running(queued: VerificationJob) -> None:
    summary = machine.queue_summary(VerificationJob)
    assert summary["depth"] == 1 and summary["running"] == 0 and summary["oldest"] is not None
    assert machine.claim(VerificationJob, pk=queued.pk, worker="w:1")
    assert machine.queue_summary(VerificationJob) == {"depth": 0, "oldest": None, "running": 1}


def test_every_task_a_service_sends_by_name_is_a_registered_task() -> None:
    from pitweb.execution.services import ASSEMBLY_TASK, CELL_TASK
    from pitweb.jobs.dispatch import task_named
    from pitweb.pricing.services import SCORE_TASK
    from pitweb.runs.services.verifying import VERIFY_TASK

    for name in (VERIFY_TASK, SCORE_TASK, CELL_TASK, ASSEMBLY_TASK):
        assert task_named(name).name == name


def test_every_app_registers_its_share_of_the_sweep() -> None:
    from pitweb.jobs import sweeps

    assert set(sweeps.registered()) == {"verification", "board", "pricing", "points", "execution"}


def test_a_failure_of_ours_retries_while_attempts_remain_then_gives_up() -> None:
    assert machine.retry_outcome(VerificationJob, 4) == machine.Outcome("retrying", 4)
    assert machine.retry_outcome(PlatformScore, None) == machine.Outcome(
        PlatformScore.GAVE_UP, None
    )
