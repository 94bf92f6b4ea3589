"""Site benchmarks (run by make bench after the harness ones).

1. 10,000 runs in the database; the leaderboard page and API under 8 concurrent
   keep-alive connections on loopback, beside the same server answering a static file
   (p50 / p95 latency, requests per second).
2. Upload-to-verified latency of a run with a ~10 MB trajectory, one worker.

Runs against its own database and folders under bench-out/site (SQLite unless
no Postgres answers on 127.0.0.1:5432).
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench-out" / "site"
PORT = 8765
RUNS = int(os.environ.get("PITWEB_BENCH_RUNS", "100000"))


def bench_database() -> str:
    """A fresh Postgres database when a server answers on loopback, else SQLite."""
    try:
        import psycopg

        with psycopg.connect(
            "postgres://postgres@127.0.0.1:5432/postgres", autocommit=True, connect_timeout=3
        ) as conn:
            conn.execute("DROP DATABASE IF EXISTS pitweb_bench WITH (FORCE)")
            conn.execute("CREATE DATABASE pitweb_bench")
        return "postgres://postgres@127.0.0.1:5432/pitweb_bench"
    except Exception:
        return f"sqlite:///{OUT / 'var' / 'bench.sqlite3'}"


DATABASE_URL = ""


def env() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pitweb.settings",
        "PITWEB_VAR_DIR": str(OUT / "var"),
        "DATABASE_URL": DATABASE_URL,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "bench-only-" + "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "REDIS_URL": "",
        "DATABASE_CONN_MAX_AGE": "60",
        "PYTHONPATH": str(ROOT),
    }


def manage(*args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env(),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def seed() -> None:
    """A real release and run, then 10,000 runs cloned from it (bulk, no verification)."""
    code = f"""
import django; django.setup()
from datetime import date
from pathlib import Path
from harness import RunConfig, run
from harness.agents import stub
from harness.market.prices import synth_prices
from harness.release.bundle import Bundle
from harness.release.synth import synth_release
from pitweb.releases.services import release_register
from pitweb.runs import services
from pitweb.runs.models import PlatformScore, Run
from pitweb.pricing.services import reference_prices_register
from django.contrib.auth.models import User
from django.db.models import OuterRef, Subquery
from django.db import transaction
out = Path({str(OUT)!r})
rel = out / "release"
if not (rel / "manifest.json").exists():
    synth_release(rel, start=date(2023, 3, 1), end=date(2023, 3, 31), seed=5, rows=40000, acceptance_fraction=0.05)
release, _ = release_register(path=rel)
user = User.objects.filter(username="bench").first() or User.objects.create_user("bench")
if not Run.objects.exists():
    run(stub(), RunConfig(bundle_path=str(rel), forms=("8-K",), start="2023-03-01", end="2023-03-10",
        trajectory_path=str(out / "seed" / "t.jsonl"), receipt_path=str(out / "seed" / "r.json")))
    with open(out / "seed" / "r.json", "rb") as r, open(out / "seed" / "t.jsonl", "rb") as t:
        template = services.run_submit(user=user, receipt=r, trajectory=t).run
    Run.objects.filter(pk=template.pk).update(status="verified")
    template.refresh_from_db()
    fields = {{f.name: getattr(template, f.name) for f in Run._meta.concrete_fields if f.name not in ("id", "run_id", "body_sha256", "submitted_at", "pit_main_return")}}
    fields.pop("platform", None)
    prices = out / "prices-SYNTHETIC.csv"
    tickers = sorted({{r["ticker"] for r in Bundle.load(rel).rows("main") if r["ticker"]}})
    synth_prices(prices, symbols=tickers, start=date(2023, 3, 1), end=date(2023, 5, 31), seed=5)
    reference, _ = reference_prices_register(release=release, path=prices, source="SYNTHETIC", pulled_at="", staff=None, reason="bench")
    template.refresh_from_db()
    figures = template.platform.figures
    with transaction.atomic():
        clones = Run.objects.bulk_create([Run(**fields, run_id=f"{{n:016x}}", body_sha256=f"sha256:{{n:064x}}", pit_main_return=(n % 997) / 10000.0) for n in range(1, {RUNS})], batch_size=500)
        # each clone its own platform figure and interval, so ranks are ranges of all sizes
        PlatformScore.objects.bulk_create([PlatformScore(run=r, prices=reference, state="scored", figures=figures, shifted_pit=(n % 997) / 10000.0, shifted_pit_low=(n % 997) / 10000.0 - 0.004, shifted_pit_high=(n % 997) / 10000.0 + 0.004, shifted_pit_priced=100, main_pit=0.01) for n, r in enumerate(clones, start=1)], batch_size=500)
        Run.objects.filter(platform__isnull=True).update(platform=Subquery(PlatformScore.objects.filter(run=OuterRef("pk")).values("pk")[:1]))
print(Run.objects.count())
"""
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env(), "CELERY_TASK_ALWAYS_EAGER": "true"},
        check=True,
    )


def load(path: str, seconds: float = 8.0, connections: int = 8) -> tuple[float, float, float]:
    """(p50 ms, p95 ms, requests/s) over ``connections`` keep-alive connections."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    errors: list[str] = []

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        mine = []
        while time.monotonic() < stop:
            started = time.perf_counter()
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            mine.append(time.perf_counter() - started)
            if response.status != 200:
                errors.append(f"{path}: {response.status}")
                break
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(connections)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(errors[0])
    elapsed = time.monotonic() - began
    ordered = sorted(latencies)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return statistics.median(ordered) * 1000, p95 * 1000, len(ordered) / elapsed


def serve() -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "pitweb.wsgi:application",
            "--bind",
            f"127.0.0.1:{PORT}",
            "--workers",
            "2",
            "--threads",
            "4",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=2)
            conn.request("GET", "/status/?format=json")
            if conn.getresponse().status == 200:
                return process
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


def cold_board() -> tuple[float, float]:
    """(kB transferred, ms to load) for the board in a fresh Chromium: nothing cached."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=os.environ.get("PITWEB_CHROMIUM", "/usr/bin/chromium"),
            headless=True,
            args=["--no-sandbox", "--disable-gpu"],
        )
        page = browser.new_context().new_page()
        page.goto(f"http://127.0.0.1:{PORT}/", wait_until="load")
        transfer, load = page.evaluate(
            """() => {
                const nav = performance.getEntriesByType("navigation")[0];
                const resources = performance.getEntriesByType("resource");
                const bytes = nav.transferSize + resources.reduce((s, r) => s + r.transferSize, 0);
                return [bytes, nav.loadEventEnd - nav.startTime];
            }"""
        )
        browser.close()
    return transfer / 1000, load


def upload_to_verified(repeats: int = 5) -> tuple[float, float]:
    """(median seconds, trajectory MB): submit through the upload service, one worker."""
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "pitweb",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "-n",
            "bench@%h",
        ],
        cwd=ROOT,
        env=env(),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    code = f"""
import django, json, statistics, sys, time; django.setup()
from pathlib import Path
from harness import RunConfig, run
from harness.agents import stub
from pitweb.runs import services
from pitweb.runs.models import VerificationJob, FINAL_STATES
from django.contrib.auth.models import User
out = Path({str(OUT)!r})
rel = out / "release"
user = User.objects.get(username="bench")
times, size = [], 0
for hold in range(1, {repeats} + 1):
    folder = out / f"upload-{{hold}}"
    run(stub(), RunConfig(bundle_path=str(rel), forms=("8-K", "4"), start="2023-03-01", end="2023-03-03",
        hold_sessions=hold, trajectory_path=str(folder / "t.jsonl"), receipt_path=str(folder / "r.json")))
    size = (folder / "t.jsonl").stat().st_size
    started = time.perf_counter()
    with open(folder / "r.json", "rb") as r, open(folder / "t.jsonl", "rb") as t:
        job = services.run_submit(user=user, receipt=r, trajectory=t).job
    while True:
        job.refresh_from_db()
        if job.state in FINAL_STATES:
            break
        time.sleep(0.02)
    assert job.state == "verified", (job.state, job.message)
    times.append(time.perf_counter() - started)
print(json.dumps([statistics.median(times), size / 1e6]))
"""
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env(),
            check=True,
            capture_output=True,
            text=True,
        )
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
    import json

    median, mb = json.loads(done.stdout.strip().splitlines()[-1])
    return float(median), float(mb)


def rows() -> list[tuple[str, str, str]]:
    global DATABASE_URL
    if (OUT / "var").exists():
        shutil.rmtree(OUT / "var")
    (OUT / "var").mkdir(parents=True)
    for old in OUT.glob("upload-*"):
        shutil.rmtree(old)
    DATABASE_URL = bench_database()
    manage("migrate", "--noinput")
    manage("collectstatic", "--noinput")
    seed()
    server = serve()
    try:
        static = load("/static/pitweb/site.css")
        page = load("/")
        api = load("/api/leaderboard/")
        cold_kb, cold_ms = cold_board()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    median, mb = upload_to_verified()

    def met(ok: bool) -> str:
        return "  met" if ok else "  MISSED"

    engine = "Postgres" if DATABASE_URL.startswith("postgres") else "SQLite"
    out = [
        (
            f"d. static file (8 connections, {RUNS:,} runs in {engine})",
            f"p50 {static[0]:.1f} / p95 {static[1]:.1f} ms",
            f"{static[2]:.0f} req/s",
        )
    ]
    for name, figures in (
        ("   leaderboard page /", page),
        ("   leaderboard API /api/leaderboard/", api),
    ):
        ok = figures[1] < 100 and figures[1] <= 5 * max(static[1], 1e-9)
        out.append(
            (
                name,
                f"p50 {figures[0]:.1f} / p95 {figures[1]:.1f} ms",
                f"p95 < 100 ms, <= 5x static ({figures[1] / static[1]:.1f}x){met(ok)}",
            )
        )
    out.append(
        (
            "   cold board in Chromium (nothing cached)",
            f"{cold_kb:.0f} kB in {cold_ms:.0f} ms",
            "< 300 kB, < 300 ms" + met(cold_kb < 300 and cold_ms < 300),
        )
    )
    out.append(
        (
            f"e. upload to verified, {mb:.1f} MB trajectory, one worker",
            f"median {median:.2f} s",
            "< 2 s" + met(median < 2),
        )
    )
    return out


if __name__ == "__main__":
    for row in rows():
        print(row)
