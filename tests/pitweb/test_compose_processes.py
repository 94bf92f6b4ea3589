"""docker-compose.yml started as it is written, without a container engine
(deploy/compose_processes.py): every service a machine of its own, its command, its
environment and its volumes as the file names them, the worker scaled to two. The site
answers through nginx, a release copied in is registered with the site's own command,
runs uploaded through the proxy are verified, and both worker replicas take work."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.pitweb.conftest import Artifacts, make_run
from tests.support import hosts

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "compose_processes.py"
RUNS = 6  # enough for two replicas of two processes each to share


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Compose:
    def __init__(self, state: Path) -> None:
        self.state = state

    def run(self, *args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--state", str(self.state), *args],
            input=stdin, capture_output=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-4000:])
        return done.stdout.decode()

    def logs(self) -> str:
        return "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
            for log in sorted(self.state.glob("*.log"))
        )


def _lines(process: subprocess.Popen[bytes], into: queue.Queue[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        into.put(line.decode(errors="replace").rstrip())


def test_the_compose_file_runs_as_written_with_two_workers(
    tmp_path: Path, site_release: Path, site_prices: Path
) -> None:
    why = hosts.unavailable()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the compose check needs namespaces in CI: {why}")
        pytest.skip(why)
    env_file = tmp_path / ".env"
    env_file.write_text(
        (REPO / ".env.example")
        .read_text()
        .replace("DJANGO_SECRET_KEY=change-me\n", "DJANGO_SECRET_KEY=compose-check-not-a-secret\n")
    )
    runs: list[Artifacts] = [
        make_run(site_release, tmp_path / f"run-{n}", site_prices,
                 end=(date(2023, 3, 8) - timedelta(days=n)).isoformat())
        for n in range(RUNS)
    ]  # fmt: skip
    port = _free_port()
    compose = Compose(tmp_path / "state")
    up = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--state", str(compose.state), "up", "--env-file",
         str(env_file), "--scale", "worker=2", "--publish", f"8080={port}", "--timeout", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(up, said), daemon=True).start()
    try:
        _wait_ready(said, compose)
        base = f"http://127.0.0.1:{port}"
        home = httpx.get(f"{base}/", timeout=30)
        assert home.status_code == 200 and home.headers["server"].startswith("nginx")
        # staff's way in: the release copied into the web service and registered there
        compose.run("cp", str(site_release), "web:/srv/pitweb/var/release-inbox")
        compose.run(
            "exec", "web", "python", "manage.py", "register_release",
            "/srv/pitweb/var/release-inbox/release",
        )  # fmt: skip
        token = compose.run("exec", "web", "python", "manage.py", "issue_token", "alice",
                            "--create").strip()  # fmt: skip
        # each service sees its own files only: what was copied into web is not on a worker
        compose.run("exec", "worker", "sh", "-c", "test ! -e /srv/pitweb/var/release-inbox")
        compose.run("exec", "web", "sh", "-c", "test -d /srv/pitweb/var/release-inbox/release")
        shas = [_upload(base, token, run) for run in runs]
        for sha in shas:
            _wait_verified(base, sha, compose)
        said = compose.run("exec", "web", "python", "manage.py", "shell", "-c", TOOK)
        took = json.loads(said.strip().splitlines()[-1])  # after the shell's own line
        assert set(took) == {"worker-1", "worker-2"}, took
        board = compose.run("exec", "board", "sh", "-c", "celery -A pitweb inspect stats -j")
        assert '"board@board-1"' in board
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        up.wait(timeout=120)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "pwc-" not in listed  # every machine removed on the way out


TOOK = (
    "import json; from pitweb.runs.models import VerificationJob as J; "
    "print(json.dumps(sorted({j.worker.split(':')[0] for j in J.objects.all()})))"
)


def _wait_ready(said: queue.Queue[str], compose: Compose) -> None:
    deadline = time.monotonic() + 600
    seen = []
    while time.monotonic() < deadline:
        try:
            line = said.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        if line == "compose: ready":
            return
        if line.startswith("compose:") and "restarted" not in line:
            break
    raise AssertionError("\n".join(seen) + "\n" + compose.logs())


def _upload(base: str, token: str, run: Artifacts) -> str:
    files = {name: (name, handle.read()) for name, handle in run.files().items()}
    answer = httpx.post(
        f"{base}/api/runs/", headers={"Authorization": f"Token {token}"}, files=files,
        timeout=120,
    )  # fmt: skip
    assert answer.status_code in (201, 202), answer.text
    return str(answer.json()["body_sha256"]).removeprefix("sha256:")


def _wait_verified(base: str, sha: str, compose: Compose) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        answer: Any = httpx.get(f"{base}/api/runs/{sha}/", timeout=30).json()
        if answer.get("status") == "verified":
            return
        assert answer.get("status") in ("received", "verifying"), answer
        time.sleep(0.5)
    raise AssertionError(f"run {sha} not verified\n{compose.logs()}")
