"""A real Celery worker process on a real broker (Redis when REDIS_URL is set, the
filesystem transport otherwise) against the test database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone

from pitweb import celery_app
from pitweb.jobs.models import WorkerBeat
from pitweb.jobs.tasks import sweep_stale_jobs
from pitweb.pricing.models import PlatformScore
from pitweb.runs import services
from pitweb.runs.models import JobState, VerificationJob
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)
REPO = Path(__file__).resolve().parents[3]


def real_broker_clean() -> None:
    """The filesystem transport leaves old messages behind; start each test clean."""
    if not os.environ.get("REDIS_URL"):
        for item in (settings.BROKER_DIR / "queue").glob("*"):
            item.unlink()


@pytest.fixture(autouse=True)
def real_broker(eager_celery: None) -> Iterator[None]:
    celery_app.conf.task_always_eager = False
    real_broker_clean()
    yield


def worker_env(artifact_dir: Path) -> dict[str, str]:
    db = connection.settings_dict
    if "sqlite" in db["ENGINE"]:
        url = f"sqlite:///{db['NAME']}"
    else:
        url = f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    return {
        **os.environ,
        "DATABASE_URL": url,
        "PITWEB_ARTIFACT_DIR": str(artifact_dir),
        "PITWEB_VAR_DIR": str(settings.VAR_DIR),
        "PITWEB_HEARTBEAT_SECONDS": "1",
        "PITWEB_STALE_AFTER_SECONDS": "3",
        "PYTHONPATH": str(REPO),
    }


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = open(log, "wb")  # noqa: SIM115 - owned by the process
    return subprocess.Popen(
        args, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
    )


def worker(env: dict[str, str], log: Path, name: str) -> subprocess.Popen[bytes]:
    return start(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "pitweb",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "-n",
            f"{name}@%h",
        ],
        env,
        log,
    )


def gated_worker(
    env: dict[str, str], gate: Path, log: Path, **extra: str
) -> subprocess.Popen[bytes]:
    """A worker that stops at ``gate`` (tests/support/worker_with_gate.py) mid-job, so a
    test can kill it there; ``extra`` adds to its environment (PITWEB_TEST_GATE_AT)."""
    return start(
        [sys.executable, str(REPO / "tests" / "support" / "worker_with_gate.py")],
        {**env, "PITWEB_TEST_GATE": str(gate), **extra},
        log,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def wait_for(condition: Callable[[], bool], what: str, log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; worker log:\n{log.read_text()[-4000:]}")


def submit(user: User, artifacts: Artifacts) -> VerificationJob:
    files = artifacts.files()
    submission = services.run_submit(
        user=user, receipt=files["receipt"], trajectory=files["trajectory"], prices=files["prices"]
    )
    assert submission.job is not None
    return submission.job


def state(job: VerificationJob) -> str:
    job.refresh_from_db()
    return job.state


def beats() -> list[WorkerBeat]:
    return list(WorkerBeat.objects.filter(stopped_at=None))


def test_upload_is_verified_and_priced_by_a_real_worker_that_beats_while_idle(
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    artifact_dir: Path,
    tmp_path: Path,
    settings: Any,
) -> None:
    # visitors here never compute a stored board they already have: the worker does
    settings.PITWEB_BOARD_STALE_SECONDS = 3600
    assert Client().get("/api/leaderboard/").json()["ranked"] == []
    log = tmp_path / "worker.log"
    process = worker(worker_env(artifact_dir), log, "w1")
    try:
        # idle, with no job yet: its heartbeat advances, and the status page says live
        wait_for(lambda: bool(beats()), "the idle worker's first heartbeat", log)
        first = beats()[0].last_seen
        wait_for(lambda: beats()[0].last_seen > first, "a second idle heartbeat", log)
        status = Client().get("/status/?format=json").json()
        assert [w["state"] for w in status["workers"]] == ["live"]
        # the worker probed its machine for agent isolation when it started, and says so
        [isolation] = [w["agent_isolation"] for w in status["workers"]]
        from harness.isolation.sandbox.outside import availability

        available, why = availability()
        assert isolation == ("available" if available else f"unavailable: {why}")
        job = submit(submitter, stub_run)
        wait_for(lambda: state(job) == JobState.VERIFIED, "the job to be verified", log)
        assert job.worker.split(":")[0] and job.attempts == 1
        assert all(c["status"] == "ok" for c in job.checks)
        # the same worker computes its platform figures with the reference prices
        wait_for(
            lambda: PlatformScore.objects.filter(run=job.run, state="scored").exists(),
            "the platform score",
            log,
        )

        def on_the_board() -> bool:
            board = Client().get("/api/leaderboard/").json()
            rows = [r for section in ("ranked", "unranked") for r in board[section]]
            return any(r["run_id"] == job.run.run_id for r in rows)

        # the worker computed the stored board again once the score was stored
        wait_for(on_the_board, "the scored run on the stored board", log)
        assert "refresh_boards_task" in log.read_text()
    finally:
        stop(process)
    # killed: its heartbeat stops, and once past the stale limit the page says so
    WorkerBeat.objects.update(last_seen=timezone.now() - timedelta(seconds=60))
    assert [w["state"] for w in Client().get("/status/?format=json").json()["workers"]] == ["stale"]


def test_two_workers_racing_for_one_job_give_one_result(
    registered: Any, submitter: User, stub_run: Artifacts, artifact_dir: Path, tmp_path: Path
) -> None:
    from pitweb.runs.tasks import verify_run_task

    env = worker_env(artifact_dir)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    processes = [worker(env, logs[0], "racer-a"), worker(env, logs[1], "racer-b")]
    try:
        wait_for(lambda: len(beats()) == 2, "both workers to be ready", logs[0])
        job = submit(submitter, stub_run)
        for _ in range(6):  # the same job sent again and again: both workers get copies
            verify_run_task.delay(job.pk)
        wait_for(lambda: state(job) == JobState.VERIFIED, "the job to be verified", logs[0])
        # let every copy (the upload's and six more) be run, then look: one claim, one result
        wait_for(
            lambda: sum(log.read_text().count(" succeeded in ") for log in logs) >= 7,
            "every copy to be run",
            logs[1],
        )
        ran = [log.read_text().count(" succeeded in ") for log in logs]
        assert all(ran), ran  # both workers took copies
        job.refresh_from_db()
        assert job.attempts == 1 and job.state == JobState.VERIFIED
        assert VerificationJob.objects.filter(run=job.run).count() == 1
    finally:
        for process in processes:
            stop(process)


def test_a_job_whose_worker_is_killed_is_finished_by_the_next(
    registered: Any, submitter: User, stub_run: Artifacts, artifact_dir: Path, tmp_path: Path
) -> None:
    env = worker_env(artifact_dir)
    gate = tmp_path / "gate"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = gated_worker(env, gate, first_log)
    second = None
    try:
        job = submit(submitter, stub_run)
        wait_for(
            lambda: gate.with_suffix(".started").exists(),
            "the first worker to start the job",
            first_log,
        )
        assert state(job) == JobState.VERIFYING
        first_worker = job.worker
        stop(first)  # killed mid-job: no result, no ack, no more heartbeats
        assert state(job) == JobState.VERIFYING
        second = worker(env, second_log, "w2")

        # the periodic sweep (celery beat in production) hands the job on once its
        # heartbeat is older than PITWEB_STALE_AFTER_SECONDS
        def swept() -> bool:
            sweep_stale_jobs.delay()
            time.sleep(1.0)
            return state(job) != JobState.VERIFYING

        wait_for(swept, "the sweep to requeue the job", second_log)
        wait_for(lambda: state(job) == JobState.VERIFIED, "the second worker to verify", second_log)
        assert job.attempts == 2 and job.worker not in ("", first_worker)
    finally:
        stop(first)
        if second is not None:
            stop(second)


def test_a_score_whose_worker_is_killed_beats_until_then_and_is_scored_by_the_next(
    priced_release: Any, submitter: User, stub_run: Artifacts, artifact_dir: Path, tmp_path: Path
) -> None:
    env = worker_env(artifact_dir)
    gate = tmp_path / "gate"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = gated_worker(env, gate, first_log, PITWEB_TEST_GATE_AT="score")
    second = None
    try:
        job = submit(submitter, stub_run)
        wait_for(lambda: gate.with_suffix(".started").exists(), "the score to start", first_log)
        assert state(job) == JobState.VERIFIED
        score = PlatformScore.objects.get(run=job.run)
        assert score.state == PlatformScore.State.SCORING and score.started_at is not None
        started = score.started_at

        def beaten() -> bool:
            score.refresh_from_db()
            return score.heartbeat_at is not None and score.heartbeat_at > started

        wait_for(beaten, "the scoring worker's heartbeat", first_log)
        first_worker = score.worker
        stop(first)  # killed mid-score: no figures, no more heartbeats
        second = worker(env, second_log, "w2")

        def swept() -> bool:
            sweep_stale_jobs.delay()
            time.sleep(1.0)
            score.refresh_from_db()
            return score.state != PlatformScore.State.SCORING

        wait_for(swept, "the sweep to requeue the score", second_log)

        def scored() -> bool:
            score.refresh_from_db()
            return score.state == PlatformScore.State.SCORED

        wait_for(scored, "the second worker to score", second_log)
        assert score.attempts == 2 and score.worker not in ("", first_worker)
        assert score.shifted_pit_priced is not None
    finally:
        stop(first)
        if second is not None:
            stop(second)
