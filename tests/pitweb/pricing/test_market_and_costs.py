"""Was it the market, would it survive costs, on the site: staff register a market index
with a reference-price version; every run's platform figures are computed at the site's
stated cost level and against the index; the board shows both beside the gross return,
and each number is the harness's own over the stored artifacts."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from harness.interchange.every_eval_ever import problems
from harness.market.frictions import CostModel
from harness.market.index import load_index
from harness.market.prices import load_prices
from harness.receipt.rescore import rescore
from pitweb.board.query import SECTIONS
from pitweb.core.errors import SubmissionError
from pitweb.pricing.models import PlatformScore
from pitweb.pricing.services import IndexGiven, reference_prices_register
from pitweb.releases.models import ReferencePrices
from tests.pitweb.conftest import Artifacts, make_run, submit_run, token_client
from tests.support.data import build_prices

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def market_file(tmp_path_factory: pytest.TempPathFactory, site_release: Path) -> Path:
    """Reference bars with a SYNTHETIC market index, MKT, every stock moves on."""
    return build_prices(
        tmp_path_factory.mktemp("market") / "reference-market.csv",
        site_release,
        seed=9,
        market="MKT",
    )


@pytest.fixture()
def indexed_release(registered: Any, market_file: Path, staff: User) -> Any:
    reference_prices_register(
        release=registered,
        path=market_file,
        source="SYNTHETIC reference prices",
        pulled_at="generated",
        staff=staff,
        reason="reference prices with a market index",
        index=IndexGiven(market_file, "MKT", "SYNTHETIC market", "generated"),
    )
    return registered


def _row(run_id: str) -> dict[str, Any]:
    board = Client().get("/api/leaderboard/?all=1").json()
    return next(r for name in SECTIONS for r in board[name] if r["run_id"] == run_id)


def test_a_run_is_scored_at_the_stated_cost_and_against_the_index(
    indexed_release: Any,
    submitter: User,
    stub_run: Artifacts,
    market_file: Path,
    site_release: Path,
    settings: Any,
) -> None:
    assert settings.PITWEB_COST_BPS == 10.0  # the site's stated level, by default
    run = submit_run(submitter, stub_run)
    row = _row(run.run_id)
    assert row["platform_cost_bps"] == 10.0 and row["index_symbol"] == "MKT"
    # the figures are the harness's own, recomputed here from the artifacts
    again = rescore(
        stub_run.receipt,
        trajectory=stub_run.trajectory,
        release=site_release,
        prices=load_prices(market_file, source="SYNTHETIC reference prices", pulled_at=""),
        costs=CostModel(10),
        index=load_index(market_file, symbol="MKT", source="x", pulled_at=""),
    )
    net = again.after_costs[("shifted", "pit")].total_return
    market = again.market[("shifted", "pit")]
    assert row["platform_shifted_pit_after_costs"] == pytest.approx(net)
    assert row["platform_shifted_pit_excess"] == pytest.approx(market["excess_return"])
    assert row["platform_shifted_pit_beta"] == pytest.approx(market["beta"])
    assert row["platform_shifted_pit_after_costs"] < row["platform_shifted_pit"]
    # the board shows them, in words a reader can check
    html = Client().get("/benchmarks/", follow=True).content.decode()
    assert "after costs" in html and "at 10 bps a side" in html and "vs MKT" in html
    csv = Client().get("/leaderboard.csv", follow=True).content.decode()
    assert "platform_shifted_pit_excess" in csv.splitlines()[0]
    # the run page draws the cumulative return beside the index's, from the stored series
    page = Client().get(f"/runs/{run.body_sha256[7:]}/?submission={run.pk}").content.decode()
    assert "After costs, and against the market" in page and 'id="fig-market"' in page
    score = PlatformScore.objects.get(run=run)
    series = next(
        c for c in score.figures["cells"] if c["arm"] == "shifted" and c["clock"] == "pit"
    )["series"]
    assert series == {
        "sessions": again.series[("shifted", "pit")].sessions,
        "returns": pytest.approx(again.series[("shifted", "pit")].returns),
        "index": pytest.approx(again.series[("shifted", "pit")].index),
    }
    # the run travels: Every Eval Ever's record of it, validated by the published schema
    exported = Client().get(f"/runs/{run.body_sha256[7:]}/every-eval-ever.json")
    assert exported.status_code == 200
    record = exported.json()
    assert problems(record) == [] and record["evaluation_id"].endswith(run.run_id)
    assert record["source_metadata"]["evaluator_relationship"] == "third_party"
    # the prices version says which index it carries
    listed = Client().get(f"/api/releases/{indexed_release.digest_hex}/prices/").json()
    assert listed[0]["index"]["symbol"] == "MKT" and listed[0]["index"]["levels"] > 50


def test_the_same_prices_with_an_index_are_a_new_version_and_rescore_every_run(
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    market_file: Path,
    staff: User,
) -> None:
    plain, created = reference_prices_register(
        release=registered, path=market_file, source="SYNTHETIC", pulled_at="",
        staff=staff, reason="prices alone",
    )  # fmt: skip
    assert created and plain.version == 1 and not plain.index_symbol
    run = submit_run(submitter, stub_run)
    before = _row(run.run_id)
    assert before["index_symbol"] is None and before["platform_shifted_pit_excess"] is None
    indexed, created = reference_prices_register(
        release=registered, path=market_file, source="SYNTHETIC", pulled_at="", staff=staff,
        reason="the market index added", index=IndexGiven(market_file, "MKT", "SYNTHETIC"),
    )  # fmt: skip
    assert created and indexed.version == 2
    after = _row(run.run_id)
    assert after["prices_version"] == 2 and after["platform_shifted_pit_excess"] is not None
    # the gross figure is the same prices' and did not move
    assert after["platform_shifted_pit"] == before["platform_shifted_pit"]
    assert PlatformScore.objects.filter(run=run).count() == 2


def test_a_bad_index_is_refused_and_changes_nothing(
    registered: Any, market_file: Path, staff: User, tmp_path: Path
) -> None:
    for given, code in (
        (IndexGiven(market_file, "NOPE", "SYNTHETIC"), "invalid_index"),
        (IndexGiven(tmp_path / "missing.csv", "MKT", "SYNTHETIC"), "invalid_index"),
        (IndexGiven(market_file, "MKT", "  "), "source_required"),
        (IndexGiven(market_file, "MKT", "x" * 501), "too_long"),
    ):
        with pytest.raises(SubmissionError) as caught:
            reference_prices_register(
                release=registered, path=market_file, source="SYNTHETIC", pulled_at="",
                staff=staff, reason="r", index=given,
            )  # fmt: skip
        assert caught.value.code == code
    assert ReferencePrices.objects.count() == 0


def test_staff_register_an_index_over_the_api_and_the_command_line(
    registered: Any, market_file: Path, staff: User
) -> None:
    url = f"/api/releases/{registered.digest_hex}/prices/"

    def form(**extra: Any) -> dict[str, Any]:
        prices = io.BytesIO(market_file.read_bytes())
        prices.name = "reference.csv"
        return {"prices": prices, "source": "SYNTHETIC", "reason": "with index", **extra}

    def index_file() -> io.BytesIO:
        handle = io.BytesIO(market_file.read_bytes())
        handle.name = "index.csv"
        return handle

    half = token_client(staff).post(url, form(index_symbol="MKT"), format="multipart")
    assert half.status_code == 400 and ReferencePrices.objects.count() == 0
    made = token_client(staff).post(
        url,
        form(index=index_file(), index_symbol="MKT", index_source="SYNTHETIC market"),
        format="multipart",
    )
    assert made.status_code == 201, made.content
    assert made.json()["index"]["symbol"] == "MKT"
    out = io.StringIO()
    call_command(
        "register_prices", registered.name, str(market_file), "--source", "SYNTHETIC",
        "--reason", "again", "--index", str(market_file), "--index-symbol", "MKT",
        "--index-source", "SYNTHETIC market", stdout=out,
    )  # fmt: skip
    # the same prices and index: the version they already are
    assert (
        out.getvalue().startswith("already registered as") and "market index MKT" in out.getvalue()
    )


def test_a_receipts_own_market_figures_never_travel_from_the_site(
    indexed_release: Any, submitter: User, market_file: Path, site_release: Path, tmp_path: Path
) -> None:
    """A submitter's receipt measured against their own index: the site cannot check
    those figures (it never holds their index file), so its export leaves them out; the
    net return, re-derived from the bound cost model, travels."""
    stated = {"path": str(market_file), "source": "SYNTHETIC", "pulled_at": "generated"}
    artifacts = make_run(
        site_release, tmp_path / "own-index", market_file,
        benchmark_index={**stated, "symbol": "MKT"}, costs={"bps_per_side": 5},
    )  # fmt: skip
    run = submit_run(submitter, artifacts)
    assert run.proven and run.body["cells"][0]["market"]["beta"] is not None
    record = Client().get(f"/runs/{run.body_sha256[7:]}/every-eval-ever.json").json()
    assert problems(record) == []
    ids = {r["evaluation_result_id"] for r in record["evaluation_results"]}
    assert "pit.cell.main.pit.total_return_after_costs" in ids
    assert not any(i.endswith((".excess_return", ".beta")) for i in ids)
