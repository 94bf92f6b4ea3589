"""Executions on real Celery workers over the real broker: two workers share one run's
cells and the run they assemble equals the CLI's; a worker killed mid-cell loses no cell
(the sweep hands the cell to the other, and the run is the same run)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage

from pitweb.execution import services
from pitweb.execution.models import ExecutionCell, ExecutionJob, ExecutionState
from pitweb.jobs.models import WorkerBeat
from pitweb.jobs.tasks import sweep_stale_jobs
from pitweb.runs.models import JobState, VerificationLevel
from tests.pitweb.execution.test_execution import EXAMPLES, WINDOW, _cli_run
from tests.pitweb.jobs.test_worker_integration import (
    gated_worker,
    stop,
    wait_for,
    worker,
    worker_env,
)
from tests.support.golden import body_text
from tests.support.sandbox import require_sandbox

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture(autouse=True)
def real_broker(eager_celery: None) -> Any:
    from pitweb import celery_app
    from tests.pitweb.jobs.test_worker_integration import real_broker_clean

    celery_app.conf.task_always_eager = False
    real_broker_clean()
    yield


def _state(job: ExecutionJob) -> str:
    job.refresh_from_db()
    return job.state


def _same_as_the_cli(job: ExecutionJob, release: Any, site_release: Path, tmp_path: Path) -> None:
    made = job.made
    assert made is not None and made.executed
    reference = release.reference_prices.get()
    prices = tmp_path / Path(reference.file_name).name
    with default_storage.open(reference.file_name, "rb") as src, open(prices, "wb") as dst:
        shutil.copyfileobj(src, dst)
    cli = _cli_run(
        site_release, tmp_path / "cli", prices, ["python3", str(EXAMPLES / "pit_stdio.py")]
    )
    with default_storage.open(made.trajectory_name, "rb") as handle:
        assert handle.read() == cli.trajectory.read_bytes()
    receipt = tmp_path / "site-receipt.json"
    with default_storage.open(made.receipt_name, "rb") as handle:
        receipt.write_bytes(handle.read())
    assert body_text(receipt) == body_text(cli.receipt)


def test_two_workers_share_the_cells_and_the_run_equals_the_cli_run(
    priced_release: Any, submitter: User, staff: User, artifact_dir: Path, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    env = worker_env(artifact_dir)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    processes = [worker(env, logs[0], "exec-a"), worker(env, logs[1], "exec-b")]
    try:
        wait_for(
            lambda: WorkerBeat.objects.filter(stopped_at=None).count() == 2, "two workers", logs[0]
        )
        agent = services.agent_register(
            by=staff, name="ref", owner=submitter, package="pit-stdio-python"
        )
        job = services.execution_request(
            by=submitter, agent=agent, release=priced_release, **WINDOW
        )
        wait_for(lambda: _state(job) in ExecutionJob.FINAL, "the execution", logs[0], timeout=300)
        assert job.state == ExecutionState.EXECUTED, job.message
        cells = list(job.cells.all())
        assert all(c.state == ExecutionCell.State.DONE and c.attempts == 1 for c in cells)
        # the run's cells were spread over both workers
        assert len({c.worker for c in cells}) == 2, [c.worker for c in cells]
        made = job.made
        assert made is not None
        wait_for(lambda: (made.refresh_from_db(), made.status)[1] == JobState.VERIFIED,
                 "the made run's verification", logs[1])  # fmt: skip
        assert made.verification_level == VerificationLevel.REEXECUTED
        _same_as_the_cli(job, priced_release, site_release, tmp_path)
    finally:
        for process in processes:
            stop(process)


def test_a_worker_killed_mid_cell_loses_no_cell(
    priced_release: Any, submitter: User, staff: User, artifact_dir: Path, site_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    env = worker_env(artifact_dir)
    gate = tmp_path / "gate"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = gated_worker(env, gate, first_log, PITWEB_TEST_GATE_AT="cell")
    second = None
    try:
        agent = services.agent_register(
            by=staff, name="ref", owner=submitter, package="pit-stdio-python"
        )
        job = services.execution_request(
            by=submitter, agent=agent, release=priced_release, **WINDOW
        )
        wait_for(lambda: gate.with_suffix(".started").exists(), "a cell to start", first_log)
        held = ExecutionCell.objects.get(job=job, state=ExecutionCell.State.RUNNING)
        stop(first)  # killed mid-cell: no record, no ack, no more heartbeats
        second = worker(env, second_log, "w2")

        def swept() -> bool:
            sweep_stale_jobs.delay()
            time.sleep(1.0)
            held.refresh_from_db()
            return held.state != ExecutionCell.State.RUNNING or held.attempts > 1

        wait_for(swept, "the sweep to hand the cell on", second_log, timeout=120)
        wait_for(
            lambda: _state(job) in ExecutionJob.FINAL, "the execution", second_log, timeout=300
        )
        assert job.state == ExecutionState.EXECUTED, job.message
        held.refresh_from_db()
        assert held.state == ExecutionCell.State.DONE and held.attempts == 2
        assert job.cells.filter(state=ExecutionCell.State.DONE).count() == 9
        _same_as_the_cli(job, priced_release, site_release, tmp_path)
    finally:
        stop(first)
        if second is not None:
            stop(second)
