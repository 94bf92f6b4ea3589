"""Execution benchmark (run by make bench): the seed-shaped run (ten sessions of 8-Ks,
nine cells and the probe) of the reference stdio agent, in the sandbox, three ways on
the same machine in one go: the CLI (``harness.run``), the site with one worker, the
site with two. The site's wall time is from the request to the executed run stored; the
queue's own latency (a cell's wait from enqueued to claimed, and the assembly's) is
printed apart. Targets: two workers at most 0.65x one worker's wall time; one worker
within 1.3x of the CLI plus the queue's latency.

Runs against its own database and folders under bench-out/execution (Postgres on
loopback; the broker is Redis when one answers on 127.0.0.1:6379, else the filesystem).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench-out" / "execution"
REPEATS = int(os.environ.get("PITWEB_BENCH_EXECUTIONS", "3"))


def _database() -> str:
    import psycopg

    with psycopg.connect(
        "postgres://postgres@127.0.0.1:5432/postgres", autocommit=True, connect_timeout=3
    ) as conn:
        conn.execute("DROP DATABASE IF EXISTS pitweb_bench_exec WITH (FORCE)")
        conn.execute("CREATE DATABASE pitweb_bench_exec")
    return "postgres://postgres@127.0.0.1:5432/pitweb_bench_exec"


def _broker() -> str:
    try:
        import redis

        client = redis.Redis.from_url("redis://127.0.0.1:6379/12", socket_connect_timeout=2)
        client.flushdb()
        return "redis://127.0.0.1:6379/12"
    except Exception:
        return ""


def _env(database: str, broker: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pitweb.settings",
        "PITWEB_VAR_DIR": str(OUT / "var"),
        "PITWEB_ARTIFACT_DIR": str(OUT / "var" / "artifacts"),
        "DATABASE_URL": database,
        "REDIS_URL": broker,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "bench-only-" + "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PYTHONPATH": str(ROOT),
    }


SCRIPT = """
import django, json, statistics, sys, time; django.setup()
from datetime import date
from pathlib import Path
from django.contrib.auth.models import User
from harness import RunConfig, run
from harness.agents.external import command_agent
from harness.market.prices import synth_prices
from harness.release.bundle import Bundle
from harness.release.synth import synth_release
from pitweb.execution import services
from pitweb.execution.models import ExecutionJob
from pitweb.pricing.services import reference_prices_register
from pitweb.releases.services import release_register
from pitweb.runs.models import FINAL_STATES, VerificationJob

out = Path(sys.argv[1])
phase = sys.argv[2]
rel = out / "release"
if phase == "seed":
    if not (rel / "manifest.json").exists():
        synth_release(rel, start=date(2023, 3, 1), end=date(2023, 3, 31), seed=5, rows=40000,
                      acceptance_fraction=0.05)
    release, _ = release_register(path=rel)
    prices = out / "reference-SYNTHETIC.csv"
    tickers = sorted({r["ticker"] for r in Bundle.load(rel).rows("main") if r["ticker"]})
    synth_prices(prices, symbols=tickers, start=date(2023, 3, 1), end=date(2023, 5, 31), seed=5)
    reference_prices_register(release=release, path=prices, source="SYNTHETIC", pulled_at="bench",
                              staff=None, reason="bench")
    staff = User.objects.create_user("staff", is_staff=True)
    owner = User.objects.create_user("owner")
    services.agent_register(by=staff, name="ref", owner=owner, package="pit-stdio-python")
    print(json.dumps({}))
    sys.exit(0)

argv = services.package_argv("pit-stdio-python")
if phase == "cli":
    times = []
    for n in range(int(sys.argv[3])):
        started = time.perf_counter()
        run(command_agent(argv), RunConfig(bundle_path=str(rel), forms=("8-K",), start="2023-03-01",
            end="2023-03-10", agent_process="isolated", trajectory_path=str(out / "cli" / "t.jsonl"),
            receipt_path=str(out / "cli" / "r.json")))
        times.append(time.perf_counter() - started)
    print(json.dumps({"wall": min(times)}))
    sys.exit(0)

from pitweb.execution.models import RegisteredAgent
agent = RegisteredAgent.objects.get(name="ref")
from pitweb.releases.models import Release
release = Release.objects.get()
walls, queues, spans, assemblies = [], [], [], []
for n in range(int(sys.argv[3])):
    started = time.perf_counter()
    job = services.execution_request(by=agent.owner, agent=agent, release=release,
                                     start=date(2023, 3, 1), end=date(2023, 3, 10), forms=["8-K"])
    while True:
        job.refresh_from_db()
        if job.is_final:
            break
        time.sleep(0.05)
    wall = time.perf_counter() - started
    assert job.state == "executed", (job.state, job.message)
    cells = list(job.cells.all())
    # the queue's own latency: the first cell's wait to be claimed, and the assembly's
    first_wait = min(c.started_at for c in cells) - job.created_at
    last_done = max(c.finished_at for c in cells)
    assembly_wait = job.started_at - last_done
    queues.append(first_wait.total_seconds() + assembly_wait.total_seconds())
    spans.append((last_done - min(c.started_at for c in cells)).total_seconds())
    assemblies.append((job.finished_at - job.started_at).total_seconds())
    walls.append(wall)
    while VerificationJob.objects.exclude(state__in=FINAL_STATES).exists():
        time.sleep(0.05)  # the made run's verification ends before the next execution
print(json.dumps({"wall": statistics.median(walls), "queue": statistics.median(queues),
                  "cells": statistics.median(spans), "assembly": statistics.median(assemblies)}))
"""


def _script(env: dict[str, str], *args: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(OUT), *args],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _worker(env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "pitweb", "worker", "--pool=solo",
         "--loglevel=WARNING", "-n", f"{name}@%h"],
        cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def rows() -> list[tuple[str, str, str]]:
    from harness.isolation.sandbox.outside import availability

    available, why = availability()
    if not available:
        return [("g. site executions", "skipped", f"the sandbox is unavailable here: {why}")]
    if (OUT / "var").exists():
        shutil.rmtree(OUT / "var")
    (OUT / "var").mkdir(parents=True)
    env = _env(_database(), _broker())
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    _script(env, "seed")
    cli = _script(env, "cli", str(REPEATS))["wall"]
    workers = [_worker(env, "bench-a")]
    try:
        _script(env, "site", "1")  # warm: the worker's copy of the release, its imports
        one = _script(env, "site", str(REPEATS))
        workers.append(_worker(env, "bench-b"))
        _script(env, "site", "1")
        two = _script(env, "site", str(REPEATS))
    finally:
        for process in workers:
            os.killpg(process.pid, signal.SIGKILL)
    ratio = two["wall"] / one["wall"]
    allowance = 1.3 * cli + one["queue"]
    return [
        ("g. seed-shaped run, reference stdio agent: CLI", f"{cli:.2f} s", "the baseline"),
        (
            "   executed by the site, one worker",
            f"{one['wall']:.2f} s",
            f"<= 1.3x CLI + queue ({allowance:.2f} s){'  met' if one['wall'] <= allowance else '  MISSED'}",
        ),
        ("   of which the queue's own latency", f"{one['queue']:.2f} s", "printed apart"),
        (
            "   of which the cells / the assembly",
            f"{one['cells']:.2f} / {one['assembly']:.2f} s",
            "each cell forked from the sandbox its worker keeps; the assembly runs the probe and stores the run",
        ),
        (
            "   executed by the site, two workers",
            f"{two['wall']:.2f} s",
            f"<= 0.65x one worker ({ratio:.2f}x){'  met' if ratio <= 0.65 else '  MISSED'}",
        ),
        (
            "   of which the cells / the assembly",
            f"{two['cells']:.2f} / {two['assembly']:.2f} s",
            f"on {os.cpu_count()} cores",
        ),
    ]


if __name__ == "__main__":
    for row in rows():
        print(*row, sep="  ")
