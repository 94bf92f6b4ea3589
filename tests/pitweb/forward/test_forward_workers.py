"""The forward track on a real Celery worker over the real broker: a committed stub and a
committed memorising agent, each executed on the days appended after their commitment,
their runs verified, checked forward and priced with the line's reference prices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from harness.agents import memory_cheat
from pitweb.execution import services as execution
from pitweb.forward.models import Commitment, ForwardRun
from pitweb.forward.services import commitment_create
from pitweb.jobs.models import WorkerBeat
from pitweb.pricing.models import PlatformScore
from pitweb.runs.models import JobState
from tests.pitweb.execution.test_execution_workers import real_broker  # noqa: F401 - autouse
from tests.pitweb.forward.test_forward_execution import (
    BENCH,
    COMMITTED_AT,
    EXAMPLES,
    Line,
    _register,
    line,  # noqa: F401 - the module's fixture
)
from tests.pitweb.jobs.test_worker_integration import stop, wait_for, worker, worker_env
from tests.support.sandbox import require_sandbox

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _settled(release: Any) -> bool:
    rows = ForwardRun.objects.filter(release=release)
    return rows.count() == 4 and not rows.filter(status=ForwardRun.Status.QUEUED).exists()


def test_workers_run_the_committed_agents_on_each_appended_day(
    line: Line,  # noqa: F811
    settings: Any, staff: User, submitter: User, artifact_dir: Path, tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    packages = {
        "pit-stdio-python": {"argv": ["python3", str(EXAMPLES / "pit_stdio.py")], "dialect": "pit"},
        "cheat": {"argv": ["python3", memory_cheat.__file__, str(line.memory)], "dialect": "pit"},
    }  # fmt: skip
    settings.PITWEB_AGENT_PACKAGES = packages
    packages_file = tmp_path / "packages.json"
    packages_file.write_text(json.dumps(packages))
    env = {**worker_env(artifact_dir), "PITWEB_AGENT_PACKAGES_FILE": str(packages_file)}
    log = tmp_path / "worker.log"
    process = worker(env, log, "forward")
    try:
        wait_for(lambda: WorkerBeat.objects.filter(stopped_at=None).exists(), "a worker", log)
        first = _register(line.folders[0], line.prices, staff)
        commitments: list[Commitment] = []
        for name, package in (("stub", "pit-stdio-python"), ("cheat", "cheat")):
            agent = execution.agent_register(by=staff, name=name, owner=submitter, package=package)
            commitments.append(commitment_create(
                by=submitter, agent=agent, release=first, at=COMMITTED_AT, **BENCH
            ))  # fmt: skip
        for folder in line.folders[1:]:
            version = _register(folder, line.prices, staff)
            wait_for(lambda v=version: _settled(v), f"the forward runs on {folder.name}", log, 600)
            for row in ForwardRun.objects.filter(release=version).select_related("run"):
                assert row.status == row.kind, (row.kind, row.status, row.problems)
                assert row.run is not None and row.run.status == JobState.VERIFIED
                assert row.run.executed
        wait_for(
            lambda: not PlatformScore.objects.filter(
                state__in=(PlatformScore.State.PENDING, PlatformScore.State.SCORING)
            ).exists(),
            "the runs priced", log, 300,
        )  # fmt: skip
        forward = ForwardRun.objects.filter(kind=ForwardRun.Kind.FORWARD).select_related("run")
        assert forward.count() == 4
        for row in forward:
            assert row.run is not None
            assert PlatformScore.objects.filter(
                run=row.run, state=PlatformScore.State.SCORED
            ).exists()
    finally:
        stop(process)
