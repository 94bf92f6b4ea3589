"""The market index and the cost model on the command line: a run.json that names them,
`run` printing the figures, `verify --index` re-deriving them, `rescore` at a stated cost
level and against an index, and `prices synth --market` making a SYNTHETIC index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.harness.cli.test_verify_cli import cli, run_session, verify_args


@pytest.fixture()
def market_session(session: Path, march_market_prices: Path) -> Path:
    shutil.copy(march_market_prices, session / "prices.csv")
    config = json.loads((session / "run.json").read_text())
    stated = {"path": "prices.csv", "source": "SYNTHETIC", "pulled_at": "2026-01-01"}
    config |= {
        "agent": "harness.agents.baselines:earliest_five",
        "agent_process": "in_process",
        "prices": stated,
        "benchmark_index": {**stated, "symbol": "MKT"},
        "costs": {"bps_per_side": 10},
    }
    (session / "run.json").write_text(json.dumps(config))
    return session


def test_run_prints_the_figures_and_verify_re_derives_them_given_the_index(
    market_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_session(capsys, market_session)
    assert "after costs" in out and "excess" in out and "beta" in out
    priced = [*verify_args(market_session), "--prices", str(market_session / "prices.csv")]
    code, out, _ = cli(capsys, *priced)
    assert code == 0
    assert "scores re-derived ok" in out and "cell_market skipped" in out and "--index" in out
    code, out, _ = cli(capsys, *priced, "--index", str(market_session / "prices.csv"))
    assert code == 0 and "scores re-derived ok" in out and "skipped" not in out
    # another file given as the index: a mismatch, exit 1
    other = market_session / "other.csv"
    other.write_text(
        (market_session / "prices.csv").read_text().replace(",MKT,1000.0000,", ",MKT,999.0000,", 1)
    )
    code, out, _ = cli(capsys, *priced, "--index", str(other))
    assert code == 1 and "MISMATCH  protocol P4 benchmark_index" in out
    code, _, err = cli(capsys, *priced, "--index", str(market_session / "missing.csv"))
    assert code == 2 and "no such file" in err


def test_rescore_prices_a_run_at_a_stated_cost_level_and_against_an_index(
    market_session: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_session(capsys, market_session)
    prices = str(market_session / "prices.csv")
    base = [
        "rescore",
        str(market_session / "a" / "receipt.json"),
        "--trajectory",
        str(market_session / "a" / "trajectory.jsonl"),
        "--bundle",
        str(market_session / "release"),
        "--prices",
        prices,
        "--source",
        "reference",
    ]
    code, out, _ = cli(
        capsys, *base, "--cost-bps", "25", "--index", prices, "--index-symbol", "MKT", "--json"
    )
    assert code == 0
    figures = json.loads(out)
    assert (
        figures["costs"]["bps_per_side"] == 25.0 and figures["benchmark_index"]["symbol"] == "MKT"
    )
    cell = next(c for c in figures["cells"] if c["arm"] == "main" and c["clock"] == "pit")
    gross, net = cell["total_return"], cell["after_costs"]["total_return"]
    assert net == pytest.approx(gross - 0.0025 - 0.0025 * (1 + gross))
    assert cell["market"]["beta"] is not None
    code, _, err = cli(capsys, *base, "--index", prices)
    assert code == 2 and "--index-symbol" in err
    code, _, err = cli(capsys, *base, "--cost-bps", "-5")
    assert code == 2 and "bps_per_side" in err
    # without either, the figures are what they always were
    code, out, _ = cli(capsys, *base, "--json")
    assert code == 0 and "after_costs" not in out and "benchmark_index" not in out


def test_prices_synth_writes_a_market_each_stock_moves_on(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, market = session / "plain.csv", session / "market.csv"
    assert (
        cli(capsys, "prices", "synth", "--bundle", str(session / "release"), "--out", str(plain))[0]
        == 0
    )
    code, out, _ = cli(
        capsys, "prices", "synth", "--bundle", str(session / "release"), "--out", str(market),
        "--market", "MKT",
    )  # fmt: skip
    assert code == 0 and "market index MKT" in out
    lines = market.read_text().splitlines()
    assert any(",MKT," in line for line in lines)
    # the market is written beside the stocks, and moves them: they are not the plain walk
    stocks = [line for line in lines if ",MKT," not in line]
    assert (
        len(stocks) == len(plain.read_text().splitlines())
        and stocks != plain.read_text().splitlines()
    )
