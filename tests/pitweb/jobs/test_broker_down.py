"""The broker down: an action that queues a job answers the success it earned once its
data is committed, the job stays queued, and once the broker is back the sweep sends it
and a real worker does it."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from pitweb import celery_app
from pitweb.execution.services import enqueue_assembly, enqueue_cell
from pitweb.jobs.tasks import sweep_stale_jobs
from pitweb.points.services import enqueue_points_job
from pitweb.pricing.services import enqueue_score
from pitweb.runs.models import JobState, Run, VerificationJob
from pitweb.runs.services import enqueue_verification
from tests.pitweb.conftest import Artifacts, token_client
from tests.pitweb.jobs.test_worker_integration import (
    real_broker,
    stop,
    wait_for,
    worker,
    worker_env,
)

pytestmark = pytest.mark.django_db(transaction=True)

__all__ = ["real_broker"]  # the fixture: a real broker for every test here


def closed_port() -> int:
    """A local port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def broker_down() -> Iterator[None]:
    """Celery's broker pointed at a closed port (connections refused) until the end."""
    saved = celery_app.conf.broker_url

    def connect_afresh() -> None:
        # the app keeps its connection and producer pools: let it make them again
        celery_app._pool = None
        celery_app.amqp._producer_pool = None

    celery_app.conf.broker_url = f"redis://127.0.0.1:{closed_port()}/0"
    connect_afresh()
    try:
        yield
    finally:
        celery_app.conf.broker_url = saved
        connect_afresh()


ENQUEUES: dict[str, Callable[[int], None]] = {
    "verification": enqueue_verification,
    "score": enqueue_score,
    "points": enqueue_points_job,
    "cell": enqueue_cell,
    "assembly": enqueue_assembly,
}


@pytest.mark.parametrize("kind", sorted(ENQUEUES))
def test_a_job_not_sent_for_the_broker_being_down_leaves_the_other_commit_hooks_run(
    kind: str,
) -> None:
    after: list[str] = []
    with broker_down(), transaction.atomic():
        ENQUEUES[kind](123456)
        transaction.on_commit(lambda: after.append("ran"))
    assert after == ["ran"]


def _upload(user: User, artifacts: Artifacts) -> Any:
    files = artifacts.files()
    return token_client(user).post(
        "/api/runs/",
        {"receipt": files["receipt"], "trajectory": files["trajectory"], "prices": files["prices"]},
        format="multipart",
    )


def test_an_upload_with_the_broker_down_answers_201_and_is_verified_once_it_is_back(
    registered: Any, submitter: User, stub_run: Artifacts, artifact_dir: Path, tmp_path: Path
) -> None:
    with broker_down():
        response = _upload(submitter, stub_run)
    assert response.status_code == 201, response.content
    run = Run.objects.get(body_sha256=response.json()["body_sha256"])
    job = VerificationJob.objects.get(run=run)
    assert job.state == JobState.RECEIVED  # stored and queued, its message never sent
    # the broker is back: the sweep (celery beat in production) sends the job again once
    # it has waited longer than PITWEB_STALE_AFTER_SECONDS, and a real worker verifies it
    log = tmp_path / "worker.log"
    process = worker(worker_env(artifact_dir), log, "after-outage")
    try:

        def swept() -> bool:
            sweep_stale_jobs.delay()
            time.sleep(1.0)
            job.refresh_from_db()
            return job.state != JobState.RECEIVED

        wait_for(swept, "the sweep to send the queued job", log)
        wait_for(lambda: _state(job) == JobState.VERIFIED, "the job to be verified", log)
    finally:
        stop(process)
    run.refresh_from_db()
    assert run.status == JobState.VERIFIED


def _state(job: VerificationJob) -> str:
    job.refresh_from_db()
    return job.state
