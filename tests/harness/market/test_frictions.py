"""Would it survive costs? A fee a side on the notional traded, with an optional minimum:
every trade's return changed by exactly its cost, the cell's figure after costs beside the
gross one, and a bad cost model refused before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, run
from harness.agents.baselines import earliest_five
from harness.market.frictions import CostError, CostModel, cost_model, return_after_costs
from harness.rundata.config import ConfigError


@pytest.fixture(scope="module")
def costed(
    march_release: Path, march_prices: Path, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    out = tmp_path_factory.mktemp("costed")
    return run(
        earliest_five,
        RunConfig(
            bundle_path=str(march_release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-10",
            agent="earliest_five",
            agent_process="in_process",
            prices={"path": str(march_prices), "source": "SYNTHETIC", "pulled_at": "2026-01-01"},
            costs={"bps_per_side": 10},
            trajectory_path=str(out / "trajectory.jsonl"),
            receipt_path=str(out / "receipt.json"),
            probe=0,
        ),
    )


def test_ten_basis_points_change_every_trade_by_exactly_its_cost(costed: Any) -> None:
    costs = CostModel(10)
    seen = 0
    for cell in costed.body["cells"]:
        trades = costed.trades(cell["arm"], cell["clock"])
        for trade in trades:
            if trade.ret is None:
                continue
            # 10 bps of the unit at entry, 10 bps of what the unit became at exit
            paid = 0.001 + 0.001 * (1 + trade.ret)
            assert costs.net(trade.ret) == pytest.approx(trade.ret - paid, abs=1e-15)
            seen += 1
        gross = [t.ret for t in trades if t.ret is not None]
        if gross:
            net = return_after_costs(trades, costs)
            assert net == pytest.approx(
                sum(gross) / len(gross) - 0.002 - 0.001 * sum(gross) / len(gross)
            )
            assert cell["total_return_after_costs"] == pytest.approx(net, abs=1e-6)
            assert cell["total_return_after_costs"] < cell["total_return"]
        else:
            assert cell["total_return_after_costs"] is None
    assert seen > 20


def test_a_minimum_fee_binds_small_trades_only() -> None:
    # $20 minimum on a $10,000 trade is 20 bps: above 10 bps a side, it is what is paid
    costs = CostModel(10, min_fee_per_side=20, notional=10_000)
    assert costs.cost(0.0) == pytest.approx(0.004)
    # on a $1,000,000 trade the minimum is 0.2 bps: the basis points are paid
    large = CostModel(10, min_fee_per_side=20, notional=1_000_000)
    assert large.cost(0.05) == pytest.approx(0.001 + 0.00105)
    assert CostModel(0).net(0.03) == 0.03  # no fee: the gross return
    assert CostModel(10).cost(-1.0) == pytest.approx(0.001)  # nothing left to sell: no exit fee


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"bps_per_side": -1}, "at least 0"),
        ({"bps_per_side": 1001}, "at most 1000"),
        ({"bps_per_side": float("nan")}, "finite|at least"),
        ({"bps_per_side": True}, "must be a number"),
        ({"bps_per_side": "10"}, "must be a number"),
        ({"min_fee_per_side": 1}, "bps_per_side: required"),
        ({"bps_per_side": 10, "notional": 0}, "notional"),
        ({"bps_per_side": 10, "min_fee_per_side": 50, "notional": 10}, "less than the notional"),
        ({"bps_per_side": 10, "slippage": 5}, "unknown key"),
        ([10], "must be an object"),
    ],
)
def test_a_bad_cost_model_is_refused(data: Any, message: str, tmp_path: Path) -> None:
    with pytest.raises(CostError, match=message):
        cost_model(data)
    with pytest.raises(ConfigError, match=message):
        RunConfig.from_dict({"costs": data})
