"""The site on machines of its own: the web process and two workers, each in network and
mount namespaces of its own (private /tmp and var folders, no view of each other's files
or the test's), reaching PostgreSQL, Redis and an S3 server only over the network. An
upload is verified, an execution's cells are run across both workers, and a judging job
killed on one worker is resumed by the other from its journal's rows, paying for nothing
twice. Nothing any job needs is read from a path another process wrote."""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.db import connection

from pitweb import celery_app
from pitweb.accounts.services import token_issue
from pitweb.execution import services as execution
from pitweb.execution.models import ExecutionState
from pitweb.points import services as points
from pitweb.points.models import JournalLine, PointSet, PointsJob
from pitweb.runs.models import JobState, Run
from tests.pitweb.conftest import Artifacts
from tests.pitweb.jobs.test_worker_integration import real_broker_clean, stop, wait_for
from tests.pitweb.test_object_store import BUCKET, KEYS, object_store  # noqa: F401
from tests.support import hosts
from tests.support.chat_server import Chat
from tests.support.points_site import answered_by, judged_by, knows_first
from tests.support.sandbox import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)
WEB_PORT = 8000
MODEL_KEY = "PITWEB_TEST_MODEL_KEY"  # the model server is off the workers' loopback


@pytest.fixture()
def site_machines(
    object_store: str,  # noqa: F811
    settings: Any,
    chat: tuple[Chat, str],
    tmp_path: Path,
) -> Iterator[dict[str, Any]]:
    """web, worker-a and worker-b, each its own machine, and the shared services forwarded
    to each: the database, the broker, the bucket and the model server."""
    why = hosts.unavailable()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"machines of the test's own are needed in CI: {why}")
        pytest.skip(why)
    _, chat_url = chat
    store_port = int(object_store.rsplit(":", 1)[1])
    chat_port = int(chat_url.rsplit(":", 1)[1].split("/")[0])
    db = connection.settings_dict
    if "sqlite" in db["ENGINE"] or not os.environ.get("REDIS_URL"):
        pytest.skip(
            "machines share PostgreSQL and Redis over the network (not the embedded default)"
        )
    redis_db = os.environ["REDIS_URL"].rsplit("/", 1)[1]
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"bucket_name": BUCKET, "endpoint_url": object_store,
                    "region_name": "us-east-1", "access_key": "testing",
                    "secret_key": "testing", "file_overwrite": False, "default_acl": None},
    }}  # fmt: skip
    settings.PITWEB_AGENT_PACKAGES = {
        "pit-stdio-python": {"argv": ["python3", "{examples}/agents/pit_stdio.py"],
                             "dialect": "pit"},
    }  # fmt: skip
    celery_app.conf.task_always_eager = False
    real_broker_clean()
    with hosts.machines("web", "worker-a", "worker-b") as made, hosts.Forwarder() as forwarder:
        forwarder.forward(5432, ("127.0.0.1", int(db["PORT"] or 5432)))
        forwarder.forward(6379, ("127.0.0.1", 6379))
        forwarder.forward(store_port, ("127.0.0.1", store_port))
        forwarder.forward(chat_port, ("127.0.0.1", chat_port))

        def env(host: hosts.Host) -> dict[str, str]:
            return {
                "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
                "LANG": "C.UTF-8", "PYTHONPATH": str(hosts.REPO), "CI": "true",
                "DJANGO_DEBUG": "true",
                "DJANGO_ALLOWED_HOSTS": f"{host.address},127.0.0.1,localhost",
                "DATABASE_URL": f"postgres://{db['USER']}@{hosts.SERVICES}:5432/{db['NAME']}",
                "REDIS_URL": f"redis://{hosts.SERVICES}:6379/{redis_db}",
                "PITWEB_S3_BUCKET": BUCKET, **KEYS,
                "PITWEB_S3_ENDPOINT_URL": f"http://{hosts.SERVICES}:{store_port}",
                MODEL_KEY: "not-a-real-key",
                "PITWEB_S3_REGION": "us-east-1",
                "PITWEB_HEARTBEAT_SECONDS": "1", "PITWEB_STALE_AFTER_SECONDS": "3",
                # no key file: the key made on first use is the one row every machine reads
                "PITWEB_SIGNING_KEY_FILE": "",
            }  # fmt: skip

        model_url = f"http://{hosts.SERVICES}:{chat_port}/v1"
        yield {"hosts": {h.name: h for h in made}, "env": env, "logs": tmp_path,
               "model_url": model_url}  # fmt: skip


def _web(machines: dict[str, Any]) -> Any:
    host = machines["hosts"]["web"]
    return host.start(
        [sys.executable, "-m", "gunicorn", "pitweb.wsgi:application", "--bind",
         f"0.0.0.0:{WEB_PORT}", "--workers", "2"],
        machines["env"](host), machines["logs"] / "web.log",
    )  # fmt: skip


def _worker(machines: dict[str, Any], name: str) -> Any:
    host = machines["hosts"][name]
    return host.start(
        [sys.executable, "-m", "celery", "-A", "pitweb", "worker", "--pool=solo",
         "--loglevel=INFO", "-n", f"{name}@%h"],
        machines["env"](host), machines["logs"] / f"{name}.log",
    )  # fmt: skip


def test_uploads_verify_and_executions_spread_over_workers_on_machines_of_their_own(
    site_machines: dict[str, Any], site_release: Path, reference_file: Path, submitter: User,
    staff: User, stub_run: Artifacts, tmp_path: Path,
) -> None:  # fmt: skip
    require_sandbox()
    from pitweb.pricing.services import reference_prices_register
    from pitweb.releases.services import release_register

    release, _ = release_register(path=site_release)
    reference_prices_register(
        release=release, path=reference_file, source="SYNTHETIC", pulled_at="",
        staff=None, reason="reference prices in the bucket",
    )  # fmt: skip
    web = site_machines["hosts"]["web"]
    logs = site_machines["logs"]
    processes = [_web(site_machines), _worker(site_machines, "worker-a"),
                 _worker(site_machines, "worker-b")]  # fmt: skip
    try:
        base = f"http://{web.address}:{WEB_PORT}"
        wait_for(lambda: _answers(f"{base}/"), "the web machine", logs / "web.log")
        # an upload, over the network, to the web machine
        files = stub_run.files()
        answer = httpx.post(
            f"{base}/api/runs/", headers={"Authorization": f"Token {token_issue(user=submitter)}"},
            files={name: (name, handle.read()) for name, handle in files.items()}, timeout=60,
        )  # fmt: skip
        assert answer.status_code in (201, 202), answer.text
        run = Run.objects.get(body_sha256=answer.json()["body_sha256"])
        wait_for(lambda: _verified(run), "a worker machine to verify", logs / "worker-a.log")
        # an execution, its cells taken by both workers
        agent = execution.agent_register(
            by=staff, name="ref", owner=submitter, package="pit-stdio-python"
        )
        job = execution.execution_request(
            by=submitter, agent=agent, release=release, start=date(2023, 3, 1),
            end=date(2023, 3, 8), forms=["8-K"], probe=4,
        )  # fmt: skip
        wait_for(lambda: _ended(job), "the execution", logs / "worker-b.log", timeout=300)
        job.refresh_from_db()
        assert job.state == ExecutionState.EXECUTED and job.made is not None, job.message
        made = job.made
        wait_for(lambda: _verified(made), "the executed run's verification", logs / "worker-a.log")
    finally:
        for process in processes:
            stop(process)
    workers = Counter(cell.worker.split(":")[0] for cell in job.cells.all())
    assert set(workers) == {"worker-a", "worker-b"}, workers
    # the machines wrote nothing where the test (or another machine) could read it
    assert not Path(hosts.VAR).exists() or not any(Path(hosts.VAR).iterdir())


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _verified(run: Run) -> bool:
    run.refresh_from_db()
    return run.status == JobState.VERIFIED


def _ended(job: Any) -> bool:
    job.refresh_from_db()
    return job.state in {ExecutionState.EXECUTED, ExecutionState.HARNESS_ERROR}


def test_a_judging_job_killed_on_one_machine_resumes_on_another_from_its_journal(
    site_machines: dict[str, Any], chat: tuple[Chat, str], point_set: PointSet,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv(MODEL_KEY, "not-a-real-key")
    server, _ = chat
    # the model server as every machine reaches it: over the network
    url = site_machines["model_url"]
    agent = points.model_register(
        user=None, name="agent", base_url=url, model="agent-x", api_key_env=MODEL_KEY
    )
    judge = points.model_register(
        user=None, name="judge", base_url=url, model="gpt-5.6-sol", effort="xhigh",
        rate_per_minute=6000, concurrency=1, api_key_env=MODEL_KEY,
    )  # fmt: skip
    knows_first(server, point_set)
    lock = threading.Lock()
    clean: Counter[str] = Counter()  # what a job never interrupted pays, call by call
    server.judge_hook = lambda prompt: _paid(prompt, clean, lock)
    celery_app.conf.task_always_eager = True
    try:  # answered and judged once here, before the machines start
        answers = answered_by(point_set, agent)
        judged_by(answers, judge)
    finally:
        celery_app.conf.task_always_eager = False
    paid: Counter[str] = Counter()
    hold, held = threading.Event(), threading.Event()

    def judged_until_held(prompt: str) -> None:
        if sum(paid.values()) >= 3 and not hold.is_set():
            held.set()
            hold.wait()
            return None
        return _paid(prompt, paid, lock)

    server.judge_hook = judged_until_held
    logs = site_machines["logs"]
    first = _worker(site_machines, "worker-a")
    try:
        job = points.judge_job_request(user=None, answer_set=answers, endpoint=judge)
        wait_for(held.is_set, "the judge to hold a call", logs / "worker-a.log")
        stop(first)  # the machine is gone, mid-judging
    finally:
        stop(first)
    hold.set()
    assert JournalLine.objects.filter(job=job).count() == 1 + 3
    PointsJob.objects.filter(pk=job.pk).update(heartbeat_at=None)
    assert points.points_requeue_stale() == [job.pk]
    server.judge_hook = lambda prompt: _paid(prompt, paid, lock)
    second = _worker(site_machines, "worker-b")
    try:
        wait_for(lambda: _done(job), "the other machine to finish", logs / "worker-b.log")
    finally:
        stop(second)
    job.refresh_from_db()
    assert job.attempts == 2 and job.judged_set is not None and job.worker.startswith("worker-b:")
    assert paid == clean  # every call paid exactly as often as a clean job pays it
    assert not JournalLine.objects.filter(job=job).exists()


def _paid(prompt: str, paid: Counter[str], lock: threading.Lock) -> None:
    with lock:
        paid[prompt] += 1


def _done(job: PointsJob) -> bool:
    job.refresh_from_db()
    return job.state == "done"
