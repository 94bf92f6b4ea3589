"""Faults leave nothing: a job's folder and an upload's spooled files are removed on every
way out, and what a killed process left is swept by the next process on the machine;
a live process's never is. Real processes throughout: Celery workers killed mid-job,
a gunicorn worker killed mid-upload, child processes alive, dead and not yet reaped."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import User

from harness.receipt.rederive import rederive
from pitweb import celery_app
from pitweb.artifacts import job_folder, scratch_root, scratch_sweep
from pitweb.jobs.tasks import sweep_stale_jobs
from pitweb.runs.models import JobState, VerificationJob
from tests.pitweb.conftest import Artifacts
from tests.pitweb.jobs.test_worker_integration import (
    REPO,
    beats,
    gated_worker,
    real_broker_clean,
    start,
    state,
    stop,
    submit,
    wait_for,
    worker,
    worker_env,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture()
def broker(eager_celery: None) -> None:
    """Tasks go to the real broker, for a real worker."""
    celery_app.conf.task_always_eager = False
    real_broker_clean()


@pytest.fixture()
def root(settings: Any, tmp_path: Path) -> Path:
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "scratch")
    return scratch_root()


def _owned_by_a_child(root: Path) -> tuple[subprocess.Popen[str], Path]:
    """A child process that makes a job folder the site's way and holds it open."""
    code = (
        "import sys, django; django.setup()\n"
        "from django.conf import settings; settings.FILE_UPLOAD_TEMP_DIR = sys.argv[1]\n"
        "from pitweb.artifacts import job_folder\n"
        "with job_folder('verify', 7) as folder:\n"
        "    print(folder, flush=True); sys.stdin.read()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(root)],
        cwd=REPO,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "pitweb.settings"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, Path(child.stdout.readline().strip())


def _renamed(folder: Path, **fields: str) -> Path:
    """The same entry under another owner: pitweb-kind-label-machine-boot-pid-start-tail."""
    parts = dict(zip(("pitweb", "kind", "label", "machine", "boot", "pid", "start", "tail"),
                     folder.name.split("-"), strict=True))  # fmt: skip
    other = folder.with_name("-".join({**parts, **fields}.values()))
    other.mkdir()
    (other / "copy").write_bytes(b"x" * 1000)
    return other


def test_a_sweep_removes_what_dead_processes_left_and_keeps_what_live_ones_use(
    root: Path,
) -> None:
    living, held = _owned_by_a_child(root)
    dying, orphan = _owned_by_a_child(root)
    try:
        with job_folder("verify", 8) as mine:
            start_time = int(mine.name.split("-")[6])
            reused = _renamed(mine, start=str(start_time + 1))  # our pid, another process
            rebooted = _renamed(mine, boot="0badb007")
            elsewhere = _renamed(mine, machine="0e15e0e1", pid=str(dying.pid))  # another host's
            foreign = [root / "pitweb-job-abc123", root / "not-ours"]
            for path in foreign:
                path.mkdir()
            # the child killed: ended, but not yet reaped (a zombie), then reaped
            os.kill(dying.pid, signal.SIGKILL)
            os.waitid(os.P_PID, dying.pid, os.WEXITED | os.WNOWAIT)
            assert held.is_dir() and orphan.is_dir()
            assert sorted(scratch_sweep(root)) == sorted([reused, rebooted, orphan])
            dying.wait()
            assert scratch_sweep(root) == []
            assert mine.is_dir() and held.is_dir() and elsewhere.is_dir()
            assert all(path.is_dir() for path in foreign)
        assert not mine.exists()  # its owner removed it on the way out
        living.kill()
        living.wait()
        assert scratch_sweep(root) == [held]
    finally:
        for child in (living, dying):
            child.kill()
            child.wait()


def _watching(error: BaseException | None, seen: list[Path]) -> Any:
    """The verifier, noting the folder it was given, then failing with ``error``."""

    def watched(receipt: Path, **kwargs: Any) -> Any:
        seen.append(receipt.parent)
        assert {p.name for p in receipt.parent.iterdir()} >= {"receipt.json", "trajectory.jsonl"}
        if error is not None:
            raise error
        return rederive(receipt, **kwargs)

    return watched


@pytest.mark.parametrize(
    "error", [RuntimeError("the verifier broke"), SoftTimeLimitExceeded(), None]
)
def test_a_job_folder_is_removed_however_the_job_ends(
    error: BaseException | None,
    root: Path,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Path] = []
    monkeypatch.setattr("pitweb.runs.verification.rederive", _watching(error, seen))
    job = submit(submitter, stub_run)  # verified at once (eager): retried, finished
    job.refresh_from_db()
    assert job.state == (JobState.VERIFIED if error is None else JobState.HARNESS_ERROR)
    assert seen and {f.parent for f in seen} == {root}
    assert all(f.name.startswith(f"pitweb-verify-{job.pk}-") for f in seen)
    assert list(root.iterdir()) == []  # the job's folders and the upload's, every one


def _private_var(tmp_path: Path) -> Path:
    """A var folder of the test's own (so no other worker on this machine sweeps it), that
    shares the filesystem transport's queue with the test."""
    var = tmp_path / "var"
    var.mkdir()
    (var / "broker").symlink_to(settings.BROKER_DIR)
    return var


def _held_folder(job: VerificationJob, work: Path, gate: Path, log: Path) -> Path:
    wait_for(lambda: gate.with_suffix(".started").exists(), "the job to start", log)
    [folder] = work.glob(f"pitweb-verify-{job.pk}-*")
    assert f"-{gate.with_suffix('.started').read_text()}-" in folder.name  # the owner's pid
    return folder


def _ready(process: subprocess.Popen[bytes]) -> bool:
    return any(b.name.endswith(f":{process.pid}") for b in beats())


def _sweeps_run(log: Path) -> int:
    return sum("sweep_stale_jobs" in x and "succeeded" in x for x in log.read_text().splitlines())


def _requeued_and_verified(job: VerificationJob, log: Path) -> None:
    """The periodic sweep (beat, in production), sent until it hands the job on."""

    def swept() -> bool:
        runs = _sweeps_run(log)
        sweep_stale_jobs.delay()
        wait_for(lambda: _sweeps_run(log) > runs, "a sweep to run", log)
        return state(job) != JobState.VERIFYING

    wait_for(swept, "the sweep to requeue the job", log)
    wait_for(lambda: state(job) == JobState.VERIFIED, "the job to be verified", log)


def test_a_worker_killed_mid_verification_leaves_no_folder_once_a_worker_restarts(
    broker: None,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    artifact_dir: Path,
    tmp_path: Path,
) -> None:
    var = _private_var(tmp_path)
    env = {**worker_env(artifact_dir), "PITWEB_VAR_DIR": str(var)}
    gate, logs = tmp_path / "gate", (tmp_path / "first.log", tmp_path / "second.log")
    first, second = gated_worker(env, gate, logs[0]), None
    try:
        job = submit(submitter, stub_run)
        folder = _held_folder(job, var / "work", gate, logs[0])
        copied = folder / "trajectory.jsonl"
        assert copied.stat().st_size == stub_run.trajectory.stat().st_size
        stop(first)  # SIGKILL, mid-verification
        assert copied.exists()  # nothing of the dead process ran: its folder is still there
        second = worker(env, logs[1], "restarted")
        wait_for(lambda: _ready(second), "the restarted worker to be ready", logs[1])
        assert not folder.exists()  # swept as the worker started, before it took any job
        assert state(job) == JobState.VERIFYING
        _requeued_and_verified(job, logs[1])  # nothing lost: the job ends right
        job.refresh_from_db()
        assert job.attempts == 2 and all(c["status"] == "ok" for c in job.checks)
        assert list((var / "work").iterdir()) == []
        assert all(len(p.name) == 64 for p in (var / "release-cache").iterdir())  # no partial
    finally:
        stop(first)
        if second is not None:
            stop(second)


def test_a_live_workers_job_folder_survives_every_other_sweep(
    broker: None,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    artifact_dir: Path,
    tmp_path: Path,
) -> None:
    var = _private_var(tmp_path)
    env = {**worker_env(artifact_dir), "PITWEB_VAR_DIR": str(var)}
    gate, logs = tmp_path / "gate", (tmp_path / "held.log", tmp_path / "other.log")
    held, other = gated_worker(env, gate, logs[0]), None
    try:
        job = submit(submitter, stub_run)
        folder = _held_folder(job, var / "work", gate, logs[0])
        other = worker(env, logs[1], "other")
        wait_for(lambda: _ready(other), "the other worker to be ready", logs[1])
        assert folder.is_dir()  # the other worker's start sweep left it
        assert scratch_sweep(var / "work") == [] and folder.is_dir()  # so does this process
        sweep_stale_jobs.delay()  # the periodic sweep, on the other worker
        wait_for(lambda: _sweeps_run(logs[1]) == 1, "the sweep to run", logs[1])
        assert folder.is_dir() and state(job) == JobState.VERIFYING
        assert (folder / "trajectory.jsonl").stat().st_size == stub_run.trajectory.stat().st_size
        stop(held)
        _requeued_and_verified(job, logs[1])
        assert not folder.exists() and list((var / "work").iterdir()) == []
    finally:
        stop(held)
        if other is not None:
            stop(other)


def test_a_web_worker_killed_mid_upload_leaves_no_spooled_file(
    submitter: User, artifact_dir: Path, tmp_path: Path
) -> None:
    import urllib.error
    import urllib.request

    from pitweb.accounts.services import token_issue

    var = _private_var(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**worker_env(artifact_dir), "PITWEB_VAR_DIR": str(var), "DJANGO_DEBUG": "true"}
    log = tmp_path / "gunicorn.log"
    server = start(
        [sys.executable, "-m", "gunicorn", "pitweb.wsgi", "--workers", "1",
         "--bind", f"127.0.0.1:{port}"],
        env, log,
    )  # fmt: skip
    token = token_issue(user=submitter)

    def up() -> bool:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/leaderboard/", timeout=5)
            return True
        except (urllib.error.URLError, ConnectionError):
            return False

    def post(body: bytes, length: int) -> socket.socket:
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(
            f"POST /api/runs/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Token {token}\r\n"
            f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {length}\r\n\r\n"
            .encode() + body
        )  # fmt: skip
        return client

    try:
        wait_for(up, "gunicorn to serve", log)
        head = b'--b\r\nContent-Disposition: form-data; name="receipt"; filename="r"\r\n\r\n'
        client = post(head + b"x" * (2 * 1024 * 1024), 8 * 1024 * 1024)  # the rest never comes
        wait_for(lambda: any((var / "work").glob("pitweb-upload-receipt-*")), "a spool", log)
        [spooled] = (var / "work").glob("pitweb-upload-receipt-*")
        os.kill(int(spooled.name.split("-")[5]), signal.SIGKILL)  # the worker that owns it
        client.close()
        assert spooled.exists()
        wait_for(up, "gunicorn to boot a new worker", log)
        other = (
            b'--b\r\nContent-Disposition: form-data; name="x"; filename="x"\r\n\r\nx\r\n--b--\r\n'
        )
        answer = post(other, len(other))
        assert b" 400 " in answer.recv(65536).split(b"\r\n")[0]  # refused: unknown field
        answer.close()
        assert not spooled.exists() and list((var / "work").iterdir()) == []
    finally:
        stop(server)
