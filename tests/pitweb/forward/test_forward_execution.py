"""Forward runs on the site: a release line grows by a version, and every live commitment
on it is executed over the sessions after its commitment and, like for like, over as many
sessions before it; the engine's forward check settles each run. A run whose window opens
before the commitment, or whose agent is not the committed package, is never forward.

Celery runs eagerly here (the schedule, each cell, the assembly, the verification, the
check); the real workers are in test_forward_workers.py."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.test import Client

from harness.agents import memory_cheat
from harness.cli import main
from harness.market.prices import load_prices
from harness.release.append import append_synthetic
from harness.release.synth import synth_release
from pitweb.execution import services as execution
from pitweb.execution.models import ExecutionJob
from pitweb.forward.checks import forward_check
from pitweb.forward.models import Commitment, ForwardRun, LogEntry
from pitweb.forward.schedule import forward_queue
from pitweb.forward.selectors import forward_run_rows
from pitweb.forward.services import commitment_create
from pitweb.pricing.services import reference_prices_register
from pitweb.releases.models import Release
from pitweb.releases.services import release_register
from pitweb.runs.models import JobState, Run
from pitweb.runs.verify_commands import verify_commands
from tests.support.data import build_prices
from tests.support.sandbox import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"
LINE = "forward-line"
# stated: 16:30 New York, after the first version's last session (Friday 2023-03-10) closed
# and before EDGAR's 17:30 cut-off (a filing dated Monday may have been sent after it)
COMMITTED_AT = datetime(2023, 3, 10, 21, 30, tzinfo=UTC)
BENCH: dict[str, Any] = {
    "forms": ["8-K"], "hold_sessions": 3, "clocks": ["pit"], "arms": ["main", "shifted"],
}  # fmt: skip


@dataclass
class Line:
    folders: list[Path]
    prices: Path
    memory: Path


@pytest.fixture(scope="module")
def line(tmp_path_factory: pytest.TempPathFactory) -> Line:
    """A synthetic line: version 1 and two later ones of three and two sessions."""
    root = tmp_path_factory.mktemp("line")
    folders = [root / f"v{n}" for n in (1, 2, 3)]
    synth_release(folders[0], start=date(2023, 3, 1), end=date(2023, 3, 10), seed=5, rows=160,
                  acceptance_fraction=0.4, name=LINE)  # fmt: skip
    append_synthetic(folders[0], folders[1], days=3)
    append_synthetic(folders[1], folders[2], days=2)
    prices = build_prices(root / "prices.csv", folders[2], seed=9, news=True)
    memory = root / "memory.json"
    memory_cheat.write_memory(memory, memory_cheat.remember(
        folders[0], load_prices(prices, source="SYNTHETIC", pulled_at="test"), forms=("8-K",),
        start="2023-03-01", end="2023-03-10", hold_sessions=3,
    ))  # fmt: skip
    return Line(folders, prices, memory)


@pytest.fixture()
def packages(settings: Any, line: Line, tmp_path: Path) -> Path:
    memory = tmp_path / "memory.json"  # the cheat's own copy: a test may change it
    memory.write_bytes(line.memory.read_bytes())
    settings.PITWEB_AGENT_PACKAGES = {
        "pit-stdio-python": {"argv": ["python3", str(EXAMPLES / "pit_stdio.py")], "dialect": "pit"},
        "cheat": {"argv": ["python3", memory_cheat.__file__, str(memory)], "dialect": "pit"},
    }  # fmt: skip
    return memory


def _register(folder: Path, prices: Path, staff: User) -> Release:
    release, _ = release_register(path=folder)
    reference_prices_register(release=release, path=prices, source="SYNTHETIC test bars",
                              pulled_at="test", staff=staff, reason="test prices")  # fmt: skip
    return release


@pytest.fixture()
def committed(
    line: Line, packages: Path, staff: User, submitter: User
) -> Iterator[list[Commitment]]:
    require_sandbox()
    first = _register(line.folders[0], line.prices, staff)
    made = []
    for name, package in (("stub", "pit-stdio-python"), ("cheat", "cheat")):
        agent = execution.agent_register(by=staff, name=name, owner=submitter, package=package)
        made.append(commitment_create(by=submitter, agent=agent, release=first, at=COMMITTED_AT,
                                      **BENCH))  # fmt: skip
    yield made


def test_each_version_runs_every_commitment_forward_and_its_backtest(
    line: Line, committed: list[Commitment], staff: User, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    second = _register(line.folders[1], line.prices, staff)  # the signal queues the runs
    rows = list(ForwardRun.objects.filter(release=second).select_related("run", "commitment"))
    assert sorted((r.commitment.agent.name, r.kind) for r in rows) == [
        ("cheat", "backtest"), ("cheat", "forward"), ("stub", "backtest"), ("stub", "forward"),
    ]  # fmt: skip
    for row in rows:
        assert row.run is not None and row.run.status == JobState.VERIFIED, row.problems
        assert row.status == ("forward" if row.kind == "forward" else "backtest"), row.problems
        binding = row.run.body["config"]["forward"]
        assert binding["entry"] == row.commitment.entry.digest
        assert binding["stamped_at"] == "2023-03-10T21:30:00Z"
        assert binding["kind"] == row.kind
        assert row.sessions == 3
        # forward-tested: the forward run, settled forward; never its backtest
        assert row.run.forward_tested == (row.kind == "forward"), row.run.run_id
    ahead = {r.kind: (r.start, r.end) for r in rows if r.commitment.agent.name == "stub"}
    assert ahead["forward"] == (date(2023, 3, 13), date(2023, 3, 15))
    assert ahead["backtest"][1] <= date(2023, 3, 10)

    third = _register(line.folders[2], line.prices, staff)
    later = ForwardRun.objects.filter(release=third, kind=ForwardRun.Kind.FORWARD)
    assert {(r.start, r.end, r.sessions, r.status) for r in later} == {
        (date(2023, 3, 13), date(2023, 3, 17), 5, "forward")
    }
    # asked again (the sweep, a retried task): nothing more is queued
    assert forward_queue(release=third) == []
    assert ForwardRun.objects.count() == 8

    # each run verifies offline as forward (or backtest), looked up in the published log
    log = tmp_path / "commitments-log.json"
    log.write_bytes(Client().get("/forward/log.json").content)
    assert main(["commitments", "verify", str(log)]) == 0
    for row in ForwardRun.objects.filter(release=second).select_related("run"):
        assert row.run is not None
        folder = tmp_path / row.run.run_id
        folder.mkdir()
        for name, stored in (("receipt.json", row.run.receipt_name),
                             ("trajectory.jsonl", row.run.trajectory_name)):  # fmt: skip
            with default_storage.open(stored, "rb") as handle:
                (folder / name).write_bytes(handle.read())
        capsys.readouterr()
        code = main(["verify", str(folder / "receipt.json"), "--trajectory",
                     str(folder / "trajectory.jsonl"), "--bundle", str(line.folders[1]),
                     "--log", str(log)])  # fmt: skip
        printed = capsys.readouterr().out
        assert code == 0, printed
        assert f"{row.kind} ok  committed 2023-03-10T21:30:00Z" in printed
        assert "--log commitments-log.json" in verify_commands(row.run, site="http://x").text

    # the page's table: every run, priced with the line's reference prices
    table = Client().get("/forward/?table=runs&format=json").json()
    listed = table["forward-runs"]
    assert len(listed) == 8
    assert all(r["priced"] and r["main_return"] is not None for r in listed), listed
    assert {r["status"] for r in listed} == {"forward", "backtest"}


def test_a_withdrawn_commitment_is_not_run(
    line: Line, committed: list[Commitment], staff: User, submitter: User
) -> None:
    from pitweb.forward.services import commitment_withdraw

    commitment_withdraw(by=submitter, commitment=committed[1], reason="changed my mind")
    second = _register(line.folders[1], line.prices, staff)
    names = {r.commitment.agent.name for r in ForwardRun.objects.filter(release=second)}
    assert names == {"stub"}


def test_a_package_changed_after_its_commitment_is_never_forward(
    line: Line, committed: list[Commitment], packages: Path, staff: User
) -> None:
    # the cheat learns the future after committing: its memory file is swapped
    packages.write_text(packages.read_text().replace('"rose":false', '"rose":true'))
    second = _register(line.folders[1], line.prices, staff)
    cheat = ForwardRun.objects.get(
        release=second, kind=ForwardRun.Kind.FORWARD, commitment=committed[1]
    )
    assert cheat.status == ForwardRun.Status.NOT_FORWARD
    assert any(p.startswith("agent_digest_differs") for p in cheat.problems), cheat.problems
    # the badge is never on a run whose agent digest differs from its commitment's
    ran = Run.objects.filter(forward_run__commitment=committed[1])
    assert ran.exists() and not ran.filter(forward_tested=True).exists()
    assert all(r.agent_digest != committed[1].agent_digest for r in ran)
    stub = Run.objects.filter(forward_run__commitment=committed[0])
    assert stub.exists()
    assert all(r.forward_tested == (r.forward_run.kind == "forward") for r in stub)


def test_a_window_opening_before_the_commitment_is_never_forward(
    line: Line, committed: list[Commitment], staff: User
) -> None:
    """A forward binding on sessions the commitment had already seen (a scheduler's bug,
    or a forged request) is executed, and the check refuses to call it forward."""
    second = _register(line.folders[1], line.prices, staff)
    commitment = committed[0]
    ForwardRun.objects.filter(commitment=commitment, release=second).delete()
    job = execution.forward_execution_queue(
        agent=commitment.agent, release=second, start=date(2023, 3, 6), end=date(2023, 3, 15),
        forward={"kind": "forward", "entry": commitment.entry.digest,
                 "seq": commitment.entry.seq, "stamped_at": "2023-03-10T21:30:00Z",
                 "agent_digest": commitment.agent_digest,
                 "log_head": {"seq": 2, "digest": LogEntry.objects.get(seq=2).digest}},
        reason="test: a window before the commitment", **BENCH,
    )  # fmt: skip
    row = ForwardRun.objects.create(
        commitment=commitment, kind=ForwardRun.Kind.FORWARD, release=second,
        start=date(2023, 3, 6), end=date(2023, 3, 15), sessions=8, job=job,
        priced_through=date(2023, 3, 21),
    )  # fmt: skip
    job.refresh_from_db()
    assert job.state == "executed", job.message
    assert forward_check(forward_run_id=row.pk) == ForwardRun.Status.NOT_FORWARD
    row.refresh_from_db()
    assert row.problems and any("before" in p for p in row.problems), row.problems


def test_an_execution_that_made_no_run_is_the_harness_s_failure(
    line: Line, committed: list[Commitment], staff: User
) -> None:
    second = _register(line.folders[1], line.prices, staff)
    row = ForwardRun.objects.filter(release=second).first()
    assert row is not None
    ForwardRun.objects.filter(pk=row.pk).update(status=ForwardRun.Status.QUEUED)
    ExecutionJob.objects.filter(pk=row.job_id).update(
        state="harness_error", message="cell main/pit: the worker died"
    )
    assert forward_check(forward_run_id=row.pk) == ForwardRun.Status.FAILED
    row.refresh_from_db()
    assert "the worker died" in row.problems[0]


def test_a_forward_run_awaits_prices_that_reach_the_end_of_its_hold(
    line: Line, committed: list[Commitment], staff: User, tmp_path: Path
) -> None:
    """Bars that stop before the hold ends price some trades; the page shows no figure
    until a price version reaches the last exit session."""
    with open(line.prices, newline="") as handle:
        reader = csv.DictReader(handle)
        kept = [row for row in reader if row["date"] <= "2023-03-15"]
        fields = reader.fieldnames
    short = tmp_path / "short.csv"
    with open(short, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields or []))
        writer.writeheader()
        writer.writerows(kept)
    second, _ = release_register(path=line.folders[1])
    reference_prices_register(release=second, path=short, source="SYNTHETIC, cut short",
                              pulled_at="test", staff=staff, reason="prices so far")  # fmt: skip
    rows = {(r["agent"], r["kind"]): r for r in forward_run_rows()}
    ahead = rows[("stub", "forward")]
    assert ahead["status"] == "forward" and ahead["run_id"]
    assert ahead["priced_through"] == "2023-03-21"  # entered 03-16 (after 03-15), three held
    assert not ahead["priced"] and ahead["main_return"] is None
    assert ahead["prices_end"] == "2023-03-15"
    page = Client().get("/forward/").content.decode()
    assert "awaiting prices through 2023-03-21" in page
    # the bars that reach it: a new version of the reference prices, and the figure shows
    reference_prices_register(release=second, path=line.prices, source="SYNTHETIC test bars",
                              pulled_at="test", staff=staff, reason="the rest")  # fmt: skip
    ahead = {(r["agent"], r["kind"]): r for r in forward_run_rows()}[("stub", "forward")]
    assert ahead["priced"] and ahead["main_return"] is not None
