"""Was it the market? A cell's trades measured against an index: excess return, the daily
series' beta and alpha with their intervals, up and down sessions; recomputed here with
numpy from the trades and the index, a known beta given back, and re-derived by verify."""

from __future__ import annotations

import json
import random
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness import RunConfig, load_prices, run
from harness.agents.baselines import earliest_five
from harness.market.calendar import sessions_for
from harness.market.index import Fit, daily_series, load_index, market_figures
from harness.market.prices import PriceError, Prices
from harness.market.scoring import Trade, make_trades
from harness.receipt.build import receipt_text
from harness.receipt.rederive import rederive
from harness.rundata.config import ConfigError
from tests.support.data import shared_path


def _config(out: Path, release: Path, prices: Path, **extra: Any) -> RunConfig:
    return RunConfig(
        bundle_path=str(release),
        forms=("8-K",),
        start="2023-03-01",
        end="2023-03-17",
        agent="earliest_five",
        agent_process="in_process",
        prices={"path": str(prices), "source": "SYNTHETIC", "pulled_at": "2026-01-01"},
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
        probe=0,
        **extra,
    )


INDEX = {"source": "SYNTHETIC", "pulled_at": "2026-01-01", "symbol": "MKT"}


@pytest.fixture(scope="module")
def measured(
    march_release: Path, march_market_prices: Path, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    out = tmp_path_factory.mktemp("measured")
    config = _config(
        out,
        march_release,
        march_market_prices,
        benchmark_index={"path": str(march_market_prices), **INDEX},
        costs={"bps_per_side": 10},
    )
    return run(earliest_five, config)


def _numpy_figures(
    trades: list[Trade], prices: Prices, levels: dict[date, float]
) -> dict[str, Any]:
    """The module's account, written again with numpy: the excess over each hold, the
    mean one-session return of the open trades, least squares on the index's moves."""
    table = sessions_for(date(2023, 2, 1), date(2023, 5, 31))
    days = list(table.sessions)
    at = {d.isoformat(): n for n, d in enumerate(days)}
    priced = [t for t in trades if t.ret is not None]
    excess = np.array(
        [
            t.ret - (levels[days[at[t.exit_session]]] / levels[days[at[t.entry_session]]] - 1)
            for t in priced
        ]
    )
    moves: dict[int, list[float]] = {}
    for t in priced:
        for n in range(at[t.entry_session] + 1, at[t.exit_session] + 1):
            moves.setdefault(n, []).append(
                prices.price(t.ticker or "", days[n]) / prices.price(t.ticker or "", days[n - 1])
                - 1  # type: ignore[operator]
            )
    sessions = sorted(moves)
    y = np.array([np.mean(moves[n]) for n in sessions])
    x = np.array([levels[days[n]] / levels[days[n - 1]] - 1 for n in sessions])
    (alpha, beta), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(x), x]), y, rcond=None)
    return {
        "excess_return": float(excess.mean()),
        "beta": float(beta),
        "alpha_per_session": float(alpha),
        "up": float(y[x > 0].mean()),
        "down": float(y[x < 0].mean()),
        "sessions": len(sessions),
    }


def test_excess_return_beta_and_alpha_are_numpys_least_squares(
    measured: Any, march_market_prices: Path
) -> None:
    prices = load_prices(march_market_prices, source="SYNTHETIC", pulled_at="2026-01-01")
    index = load_index(march_market_prices, **INDEX)
    table = sessions_for(date(2023, 2, 1), date(2023, 5, 31))
    checked = 0
    for cell in measured.body["cells"]:
        trades = measured.trades(cell["arm"], cell["clock"])
        if sum(t.ret is not None for t in trades) < 3:
            continue
        ours = market_figures(trades, prices=prices, index=index, table=table, hold_sessions=5)
        theirs = _numpy_figures(trades, prices, index.levels)
        for key in ("excess_return", "beta", "alpha_per_session"):
            assert ours[key] == pytest.approx(theirs[key], abs=1e-9), key
        assert ours["sessions"] == theirs["sessions"]
        assert ours["up_sessions"]["mean_return"] == pytest.approx(theirs["up"], abs=1e-9)
        assert ours["down_sessions"]["mean_return"] == pytest.approx(theirs["down"], abs=1e-9)
        low, high = ours["beta_interval_95"]
        assert low <= ours["beta"] <= high
        # the receipt holds the same figures, fixed at six decimals
        assert cell["market"]["beta"] == pytest.approx(ours["beta"], abs=1e-6)
        assert cell["market"]["excess_return"] == pytest.approx(ours["excess_return"], abs=1e-6)
        checked += 1
    assert checked >= 3


def test_a_basket_of_known_beta_gives_its_beta_back(tmp_path: Path) -> None:
    """Stocks that move 1.4 times the market, plus a little noise of their own."""
    table = sessions_for(date(2024, 1, 2), date(2024, 12, 31))
    rng = random.Random(7)
    lines = ["date,symbol,open"]
    level, stocks = 4000.0, {f"S{k}": 50.0 + k for k in range(8)}
    for day in table.sessions:
        lines.append(f"{day},IDX,{level:.6f}")
        lines += [f"{day},{s},{p:.6f}" for s, p in stocks.items()]
        move = rng.gauss(0.0004, 0.01)
        level *= 1 + move
        stocks = {s: p * (1 + 1.4 * move + rng.gauss(0, 0.002)) for s, p in stocks.items()}
    path = tmp_path / "prices.csv"
    path.write_text("\n".join(lines) + "\n")
    prices = load_prices(path, source="test", pulled_at="")
    index = load_index(path, symbol="IDX", source="test", pulled_at="")
    rows = {f"r{k}": {"ticker": f"S{k % 8}", "form": "8-K"} for k in range(200)}
    picks = [(n, [f"r{(n * 3 + j) % 200}" for j in range(3)]) for n in range(0, 230, 2)]
    trades = make_trades(picks, main_by_key=rows, table=table, hold_sessions=5, prices=prices)
    figures = market_figures(trades, prices=prices, index=index, table=table, hold_sessions=5)
    assert figures["beta"] == pytest.approx(1.4, abs=0.02)
    low, high = figures["beta_interval_95"]
    assert low < 1.4 < high and high - low < 0.1
    assert figures["up_sessions"]["mean_return"] > 0 > figures["down_sessions"]["mean_return"]


def test_a_flat_index_or_too_few_sessions_give_no_beta(tmp_path: Path) -> None:
    table = sessions_for(date(2024, 1, 2), date(2024, 3, 29))
    lines = ["date,symbol,open"] + [f"{d},IDX,100" for d in table.sessions]
    lines += [f"{d},S,{10 + n}" for n, d in enumerate(table.sessions)]
    path = tmp_path / "flat.csv"
    path.write_text("\n".join(lines) + "\n")
    prices = load_prices(path, source="t", pulled_at="")
    index = load_index(path, symbol="IDX", source="t", pulled_at="")
    trades = make_trades(
        [(0, ["r"])], main_by_key={"r": {"ticker": "S", "form": "8-K"}}, table=table,
        hold_sessions=5, prices=prices,
    )  # fmt: skip
    figures = market_figures(trades, prices=prices, index=index, table=table, hold_sessions=5)
    assert figures["beta"] is None and figures["beta_interval_95"] is None
    assert figures["excess_return"] == pytest.approx(trades[0].ret)  # the index did not move
    assert Fit.of([0.01, -0.01], [0.02, -0.02]) is None  # two sessions: no fit


def test_a_close_only_index_is_read_at_the_close_before_each_auction() -> None:
    """FRED's S&P 500 has closes only: against trades at the opening auction it is read
    at the close before it, and the statement says so."""
    path = shared_path("data", "prices", "us-indices-1d.csv")
    index = load_index(path, symbol="SPX", source="FRED", pulled_at="")
    assert index.series.basis == "close"
    assert "close before each opening auction" in index.statement("open")["basis"]
    table = sessions_for(date(2023, 3, 1), date(2023, 3, 31))
    march_2 = table.sessions.index(date(2023, 3, 2))
    assert index.level(table, march_2, "open") == index.levels[date(2023, 3, 1)]
    assert index.level(table, march_2, "close") == index.levels[date(2023, 3, 2)]
    with pytest.raises(PriceError, match="no levels for 'NOPE'"):
        load_index(path, symbol="NOPE", source="FRED", pulled_at="")


def test_verify_re_derives_the_market_figures_and_refuses_a_forged_beta(
    measured: Any, march_release: Path, march_market_prices: Path, tmp_path: Path
) -> None:
    prices = load_prices(march_market_prices, source="SYNTHETIC", pulled_at="2026-01-01")
    index = load_index(march_market_prices, **INDEX)
    args = {"trajectory": measured.trajectory_path, "release": march_release, "prices": prices}
    honest = rederive(measured.receipt_path, index=index, **args)
    assert honest.ok, honest.first_mismatch
    names = {c.name for c in honest.checks if c.status == "ok"}
    assert "cell main/pit market" in names and "cell main/pit total_return_after_costs" in names
    # without the index file the market figures are skipped, said so, and nothing fails
    unindexed = rederive(measured.receipt_path, **args)
    assert unindexed.ok and any(c.name == "cell_market" for c in unindexed.checks)
    # a beta made better, the body hashed again: refused
    receipt = json.loads(Path(measured.receipt_path).read_text())
    cell = next(c for c in receipt["body"]["cells"] if c["market"]["beta"] is not None)
    cell["market"]["beta"] = 0.0
    forged = tmp_path / "receipt.json"
    forged.write_text(receipt_text(receipt["body"], receipt["emitted_at"]))
    caught = rederive(forged, index=index, check_release=False, **args)
    assert not caught.ok
    assert caught.first_mismatch is not None and "market" in caught.first_mismatch.name
    # market figures a run never bound an index for: refused, even without an index file
    plain = tmp_path / "plain"
    unbound = run(earliest_five, _config(plain, march_release, march_market_prices))
    receipt = json.loads(Path(unbound.receipt_path).read_text())
    receipt["body"]["cells"][0]["market"] = measured.body["cells"][0]["market"]
    grafted = tmp_path / "grafted.json"
    grafted.write_text(receipt_text(receipt["body"], receipt["emitted_at"]))
    refused = rederive(
        grafted, trajectory=unbound.trajectory_path, release=march_release, prices=prices,
        check_release=False,
    )  # fmt: skip
    assert not refused.ok and refused.first_mismatch is not None
    assert refused.first_mismatch.name.endswith(" market")
    # another index file than the one P4 states: refused before anything is scored
    wrong = tmp_path / "other.csv"
    text = Path(march_market_prices).read_text()
    assert ",MKT,1000.0000," in text
    wrong.write_text(text.replace(",MKT,1000.0000,", ",MKT,1001.0000,", 1))
    misread = rederive(
        measured.receipt_path, index=load_index(wrong, **INDEX), check_release=False, **args
    )
    assert not misread.ok and misread.first_mismatch is not None
    assert misread.first_mismatch.name == "protocol P4 benchmark_index"


def test_the_index_and_the_costs_are_bound_into_the_run_id(
    measured: Any, march_release: Path, march_market_prices: Path, tmp_path: Path
) -> None:
    plain = run(earliest_five, _config(tmp_path / "plain", march_release, march_market_prices))
    body = plain.body
    assert "market" not in body["cells"][0] and "total_return_after_costs" not in body["cells"][0]
    assert "benchmark_index" not in body["config"] and "costs" not in body["config"]
    assert body["protocol"]["P4_costs_and_frictions"]["costs"] == "none modelled"
    assert measured.body["run_id"] != body["run_id"]
    costlier = run(
        earliest_five,
        _config(
            tmp_path / "costlier",
            march_release,
            march_market_prices,
            benchmark_index={"path": str(march_market_prices), **INDEX},
            costs={"bps_per_side": 20},
        ),
    )
    assert costlier.body["run_id"] != measured.body["run_id"]
    # what the run does not guarantee says what the costs and the index are
    assert any("no costs, no slippage" in line for line in body["limits"])
    assert not any("no costs" in line for line in measured.body["limits"])
    assert any("fees as the config's cost model" in line for line in measured.body["limits"])
    assert any(line.startswith("market: beta and alpha") for line in measured.body["limits"])
    p4 = measured.body["protocol"]["P4_costs_and_frictions"]
    assert p4["costs"]["bps_per_side"] == 10.0
    assert p4["benchmark_index"]["symbol"] == "MKT"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"benchmark_index": {"path": "x.csv", "source": "s"}}, "benchmark_index.symbol"),
        ({"benchmark_index": {**INDEX, "path": "x.csv", "colour": 1}}, "unknown key"),
        ({"benchmark_index": "x.csv"}, "must be an object"),
        ({"benchmark_index": {**INDEX, "path": "missing.csv"}}, "no such price file"),
    ],
)
def test_a_bad_index_is_refused_before_anything_runs(
    march_release: Path, march_market_prices: Path, tmp_path: Path, extra: Any, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        run(earliest_five, _config(tmp_path, march_release, march_market_prices, **extra))
    assert not (tmp_path / "receipt.json").exists()


def test_an_index_without_prices_is_refused(march_release: Path, tmp_path: Path) -> None:
    config = RunConfig(
        bundle_path=str(march_release),
        agent="earliest_five",
        agent_process="in_process",
        benchmark_index={"path": "x.csv", **INDEX},
        trajectory_path=str(tmp_path / "t.jsonl"),
        receipt_path=str(tmp_path / "r.json"),
    )
    with pytest.raises(ConfigError, match="needs the run's prices"):
        run(earliest_five, config)


def test_the_series_is_made_only_of_sessions_a_trade_was_open(
    measured: Any, march_market_prices: Path
) -> None:
    prices = load_prices(march_market_prices, source="SYNTHETIC", pulled_at="2026-01-01")
    index = load_index(march_market_prices, **INDEX)
    table = sessions_for(date(2023, 2, 1), date(2023, 5, 31))
    trades = [t for t in measured.trades("main", "pit") if t.ret is not None]
    series = daily_series(trades, prices=prices, index=index, table=table)
    first = min(t.entry_session for t in trades)
    last = max(t.exit_session for t in trades)
    assert series.sessions and first < series.sessions[0] and series.sessions[-1] <= last


def test_the_figures_travel_in_every_eval_evers_schema(measured: Any) -> None:
    from datetime import UTC, datetime

    from harness.interchange.every_eval_ever import Source, problems
    from harness.interchange.run_record import run_record

    record = run_record(measured.body, source=Source(), retrieved_at=datetime.now(UTC))
    assert problems(record) == []
    scores = {
        r["evaluation_result_id"]: r["score_details"]["score"] for r in record["evaluation_results"]
    }
    cell = next(c for c in measured.body["cells"] if (c["arm"], c["clock"]) == ("main", "pit"))
    assert scores["pit.cell.main.pit.total_return_after_costs"] == cell["total_return_after_costs"]
    assert scores["pit.cell.main.pit.excess_return"] == cell["market"]["excess_return"]
    assert scores["pit.cell.main.pit.beta"] == cell["market"]["beta"]


def test_export_eee_re_derives_the_market_figures_or_refuses(
    measured: Any, march_release: Path, march_market_prices: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from harness.cli import main

    args = [
        "export-eee", str(measured.receipt_path), "--trajectory", str(measured.trajectory_path),
        "--bundle", str(march_release), "--prices", str(march_market_prices),
        "--out", str(tmp_path / "record.json"),
    ]  # fmt: skip
    assert main(args) == 1  # the market figures could not be checked without the index
    assert "cell_market skipped" in capsys.readouterr().out
    assert not (tmp_path / "record.json").exists()
    assert main([*args, "--index", str(march_market_prices)]) == 0
    record = json.loads((tmp_path / "record.json").read_text())
    assert any(r["evaluation_result_id"].endswith(".beta") for r in record["evaluation_results"])
