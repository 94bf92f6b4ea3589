"""The forward board: each committed agent's forward return (every forward window
joined), its backtest and the decay, recomputed here from the runs' stored artifacts by
the harness alone; every commitment of a family counted; too few trades listed, not
ranked. Celery runs eagerly (the real workers are in test_forward_workers.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.test import Client

from harness.forward.standing import Window, pooled, standing, trades_of
from harness.market.prices import load_prices
from harness.receipt.attempts import family_interval
from harness.receipt.rescore import bootstrap_tails, rescore
from pitweb.forward.models import Commitment, ForwardRun
from pitweb.forward.services import commitment_create, commitment_withdraw
from pitweb.releases.models import Release
from pitweb.runs.models import Run
from tests.pitweb.forward.test_forward_execution import (
    BENCH,
    LINE,
    Line,
    _register,
    committed,  # noqa: F401 - the module's fixture
    line,  # noqa: F401 - the module's fixture
    packages,  # noqa: F401 - the module's fixture
)

pytestmark = pytest.mark.django_db(transaction=True)


def _board(**params: str) -> list[dict[str, Any]]:
    answer = Client().get("/forward/board/", {"format": "json", **params})
    assert answer.status_code == 200, answer.content[:300]
    return answer.json()["forward-board"]


def _trades(run: Run, source: Line, work: Path) -> list[Any]:
    """A run's main/pit trades, re-derived from its stored receipt and trajectory and
    priced with the line's reference prices: the harness alone, no stored figure."""
    folder = work / run.run_id
    folder.mkdir(exist_ok=True)
    for name, stored in (
        ("receipt.json", run.receipt_name),
        ("trajectory.jsonl", run.trajectory_name),
    ):
        with default_storage.open(stored, "rb") as handle:
            (folder / name).write_bytes(handle.read())
    assert run.release is not None
    prices = load_prices(source.prices, source="SYNTHETIC test bars", pulled_at="test")
    release = source.folders[run.release.version - 1]
    result = rescore(folder / "receipt.json", trajectory=folder / "trajectory.jsonl",
                     release=release, prices=prices)  # fmt: skip
    return result.trades[("main", "pit")]


def test_the_board_is_the_engine_s_figures_over_the_stored_runs(
    settings: Any,
    line: Line,  # noqa: F811
    committed: list[Commitment],  # noqa: F811
    staff: User,
    tmp_path: Path,
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    for folder in line.folders[1:]:
        _register(folder, line.prices, staff)
    rows = {r["agent"]: r for r in _board()}
    assert set(rows) == {"stub", "cheat"}
    for commitment in committed:
        row = rows[commitment.agent.name]
        runs = ForwardRun.objects.filter(commitment=commitment).select_related("run", "release")
        forward = sorted(
            (r for r in runs if r.kind == "forward"), key=lambda r: r.release.window_end
        )
        assert [r.status for r in forward] == ["forward", "forward"]
        windows = [Window(r.end.isoformat(), _trades(r.run, line, tmp_path)) for r in forward]
        behind = next(r for r in runs if r.kind == "backtest" and r.release == forward[-1].release)
        expected = standing(windows, _trades(behind.run, line, tmp_path))
        assert row["forward_return"] == pytest.approx(expected.forward.total_return, abs=1e-12)
        assert row["forward_interval_95"] == pytest.approx(
            [expected.forward.low, expected.forward.high]
        )
        assert row["forward_priced_trades"] == expected.forward.priced
        assert expected.backtest is not None
        assert row["backtest_return"] == pytest.approx(expected.backtest.total_return)
        assert row["decay"] == pytest.approx(expected.decay)
        assert row["decay_interval_95"] == pytest.approx(list(expected.decay_interval or []))
        assert row["forward_sessions"] == 5 and row["forward_versions"] == 2
        assert row["backtest_sessions"] == 5
        assert row["commitments"] == 1 and row["ranked"]
        # one commitment: the family-wise interval is the plain 95% one
        assert row["forward_interval_family_wise"] == pytest.approx(row["forward_interval_95"])
    # the cheat declared no cutoff here; the board says so rather than guess
    assert rows["cheat"]["cutoff_precedes_backtest"] == "not_declared"
    # the page shows the same numbers, the decay drawn, and every run linked
    page = Client().get("/forward/board/").content.decode()
    assert 'id="forward-board-table"' in page and 'id="fig-decay"' in page
    assert 'id="fig-curves"' in page
    for sha in rows["stub"]["run_shas"]:
        assert f"/runs/{sha}/" in page


def test_every_commitment_of_a_family_counts(
    settings: Any,
    line: Line,  # noqa: F811
    committed: list[Commitment],  # noqa: F811
    staff: User,
    submitter: User,
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    for folder in line.folders[1:]:
        _register(folder, line.prices, staff)
    first = {r["agent"]: r for r in _board()}["stub"]
    stub = committed[0]
    # the owner withdraws and commits the same agent again: two attempts of one family
    commitment_withdraw(by=submitter, commitment=stub, reason="a second try")
    newest = Release.objects.get(name=LINE, children__isnull=True)
    commitment_create(by=submitter, agent=stub.agent, release=newest, **BENCH)
    again = {r["agent"]: r for r in _board()}["stub"]
    assert again["commitments"] == 2
    assert again["forward_return"] == first["forward_return"]
    score = Run.objects.get(body_sha256="sha256:" + again["run_shas"][-1]).platform
    assert score is not None
    lows, highs = again["forward_interval_family_wise"], first["forward_interval_family_wise"]
    assert lows[0] <= highs[0] and lows[1] >= highs[1]  # no narrower: the luckier of two tries
    assert again["ranked_confidence"] > first["ranked_confidence"] == 0.95
    forward = ForwardRun.objects.filter(commitment=stub, kind="forward").select_related(
        "run__platform", "release"
    )
    ordered = sorted(forward, key=lambda r: r.release.window_end)
    trades = pooled(
        [
            Window(r.end.isoformat(), trades_of(r.run.platform.trades, "main", "pit") or [])
            for r in ordered
        ]
    )
    tails = bootstrap_tails(trades)
    assert tails is not None
    assert lows == pytest.approx(list(family_interval(tails, 2)))


def test_too_few_trades_are_listed_not_ranked(
    settings: Any,
    line: Line,  # noqa: F811
    committed: list[Commitment],  # noqa: F811
    staff: User,
) -> None:
    settings.PITWEB_MIN_RANKED_TRADES = 100_000
    _register(line.folders[1], line.prices, staff)
    rows = _board()
    assert rows and all(not r["ranked"] and r["position"] is None for r in rows)
    assert all(r["needs_trades"] == 100_000 - r["forward_priced_trades"] for r in rows)
    page = Client().get("/forward/board/").content.decode()
    assert "not ranked" in page and "more trade" in page


def test_an_unknown_benchmark_is_a_404_and_a_bad_format_the_page(db: None) -> None:
    assert Client().get("/forward/board/", {"benchmark": "nope"}).status_code == 404
    page = Client().get("/forward/board/", {"format": "xml"})
    assert page.status_code == 200 and b"Forward board" in page.content
