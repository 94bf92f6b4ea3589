"""Pages and read APIs: what they show, their exports, their query counts, the schema."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, exiting_agent, make_run

pytestmark = pytest.mark.django_db(transaction=True)


def submit(user: User, artifacts: Artifacts) -> Run:
    files = artifacts.files()
    return services.run_submit(
        user=user,
        receipt=files["receipt"],
        trajectory=files["trajectory"],
        prices=files.get("prices"),
    ).run


def clone_runs(template: Run, count: int, first: int = 0) -> None:
    """Many runs for query counting, copied from a real one (no verification needed);
    written around intake, so each is a family of its own (one row each on the board)."""
    services.board_changed()  # written behind the services' back: say the board changed
    template.refresh_from_db()  # services update rows in the database, not this object
    for n in range(first, count):
        Run.objects.create(
            **{
                f.name: getattr(template, f.name)
                for f in Run._meta.concrete_fields
                if f.name not in ("id", "run_id", "body_sha256", "submitted_at", "family")
            },
            run_id=f"{n:016x}",
            body_sha256=f"sha256:{n:064x}",
        )


def test_leaderboard_ranks_on_the_platform_shifted_pit_return_and_exports(
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    reference_file: Path,
    site_release: Path,
    settings: Any,
) -> None:
    from harness.market.prices import load_prices
    from harness.receipt.rescore import rescore

    settings.PITWEB_MIN_RANKED_TRADES = 1
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    board = Client().get("/api/leaderboard/").json()
    ranked = board["ranked"]
    assert {r["run_id"] for r in ranked} == {a.run_id, b.run_id}
    assert ranked[0]["platform_shifted_pit"] >= ranked[1]["platform_shifted_pit"]
    assert [r["position"] for r in ranked] == [1, 2]
    reference = load_prices(reference_file, source="SYNTHETIC reference prices", pulled_at="")
    expected = rescore(
        stub_run.receipt, trajectory=stub_run.trajectory, release=site_release, prices=reference
    )
    shifted = expected.cells[("shifted", "pit")]
    row = next(r for r in ranked if r["run_id"] == a.run_id)
    # the board's figures are the harness's, priced with the reference file
    assert row["platform_shifted_pit"] == pytest.approx(shifted.total_return)
    assert [row["platform_shifted_pit_low"], row["platform_shifted_pit_high"]] == pytest.approx(
        [shifted.low, shifted.high]
    )
    assert row["platform_shifted_pit_priced"] == shifted.priced
    assert row["platform_delta_shifted_pit"] == pytest.approx(
        expected.deltas()["pit"]["main_minus_shifted"]
    )
    assert row["prices_version"] == 1
    assert row["prices_sha256"] == expected.prices["file_sha256"]
    body = json.loads(stub_run.receipt.read_text())["body"]
    # the receipt's own figures, labelled, beside
    assert (
        row["self_reported_delta_shifted_pit"] == body["contamination"]["pit"]["main_minus_shifted"]
    )
    assert row["mask_verdict"] == body["probe"]["verdict"]
    assert row["protocol_gaps"] == "P1_model_version,P2_training_cutoffs"
    assert "the agent was not re-run" in row["verification_level_words"]
    assert "declared by the submitter's harness (not verifiable)" in row["isolation"]
    rows = list(
        csv.DictReader(io.StringIO(Client().get("/leaderboard.csv", follow=True).content.decode()))
    )
    assert [r["run_id"] for r in rows if r["section"] == "ranked"] == [r["run_id"] for r in ranked]
    assert {r["prices_sha256"] for r in rows} == {expected.prices["file_sha256"]}
    html = Client().get("/benchmarks/", follow=True).content.decode()
    assert a.run_id in html and "cdn" not in html.lower()
    # the board is drawn above its table; Plotly (4.8 MB) is fetched once the page has
    # loaded (site.js), so the table does not wait for it
    assert 'id="plotly-later" data-src="/static/plotly/plotly.min.js"' in html
    assert '<script defer src="/static/plotly/plotly.min.js">' not in html
    run_page = Client().get(f"/runs/{a.body_sha256[7:]}/").content.decode()
    assert "plotly.min.js" in run_page
    assert "the agent was not re-run" in html and "(not verifiable)" in html


def test_a_run_with_too_few_priced_trades_is_listed_apart_with_the_count(
    priced_release: Any, submitter: User, picky_run: Artifacts, settings: Any
) -> None:
    run = submit(submitter, picky_run)
    run.refresh_from_db()
    priced = run.platform.shifted_pit_priced
    settings.PITWEB_MIN_RANKED_TRADES = priced + 1
    services.board_changed()
    board = Client().get("/api/leaderboard/").json()
    assert board["ranked"] == []
    [row] = board["unranked"]
    assert row["why_apart"].startswith(f"{priced} priced trades in shifted/pit, fewer than")
    settings.PITWEB_MIN_RANKED_TRADES = priced
    services.board_changed()
    assert [r["run_id"] for r in Client().get("/api/leaderboard/").json()["ranked"]] == [run.run_id]


def test_failed_pending_and_invalid_runs_are_shown_apart(
    priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    clone_runs(run, 5)
    Run.objects.filter(run_id=f"{3:016x}").update(mask_verdict="mask_leaks")
    Run.objects.filter(run_id=f"{4:016x}").update(error_cells="main/pit agent_error")
    Run.objects.filter(run_id=f"{0:016x}").update(
        status="mismatch",
        verification_level="self_reported",
        failed_check="cell main/pit total_return",
    )
    Run.objects.filter(run_id=f"{1:016x}").update(valid=False)
    Run.objects.filter(run_id=f"{2:016x}").update(
        status="verifying", verification_level="self_reported"
    )
    services.board_changed()
    board = Client().get("/api/leaderboard/").json()
    assert [r["run_id"] for r in board["ranked"]] == [run.run_id]
    [failed] = board["failed"]
    assert failed["run_id"] == f"{0:016x}" and failed["numbers"] == "withheld"
    assert failed["withheld_because"] == "failed verification: cell main/pit total_return differs"
    [pending] = board["pending"]
    assert pending["run_id"] == f"{2:016x}" and pending["withheld_because"].startswith("pending")
    for row in (failed, pending):
        assert "pit_main_return" not in row and "main_pit" not in row
    assert [r["run_id"] for r in board["invalid"]] == [f"{1:016x}"]
    [leaks] = board["mask_leaks"]
    assert leaks["run_id"] == f"{3:016x}" and "control is void" in leaks["why_apart"]
    [errors] = board["errors"]
    assert errors["run_id"] == f"{4:016x}" and "main/pit agent_error" in errors["why_apart"]


def test_leaderboard_filters_live_in_the_url(
    priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    submit(submitter, stub_run)
    assert Client().get("/api/leaderboard/?form=8-K").json()["ranked"]
    assert not Client().get("/api/leaderboard/?form=10-K").json()["ranked"]
    assert not Client().get("/api/leaderboard/?start=2020-01-01").json()["ranked"]
    # the filters name the one benchmark: its board, whose exports are its own
    answer = Client().get("/benchmarks/?form=8-K", follow=True)
    (where, _), *_ = answer.redirect_chain
    assert where.startswith("/benchmarks/") and where.endswith("/")
    assert f"{where}leaderboard.csv" in answer.content.decode()


@pytest.mark.parametrize(
    "path", ["/", "/benchmarks/", "/api/leaderboard/", "/leaderboard.csv", "/api/runs/"]
)
def test_query_count_does_not_grow_with_runs(
    path: str, priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    template = submit(submitter, stub_run)
    clone_runs(template, 3)
    with CaptureQueriesContext(connection) as few:
        assert Client().get(path, follow=True).status_code == 200
    clone_runs(template, 40, first=3)
    with CaptureQueriesContext(connection) as many:
        assert Client().get(path, follow=True).status_code == 200
    assert Run.objects.count() == 41
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


@pytest.fixture(scope="module")
def arm_aware_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """An agent that trades differently per arm (as a model that remembers the period
    would): every filing on main, the first of each session on shifted, every other one
    on redacted. Its contamination deltas are not zero."""
    from harness.agents.adapters.plain import from_callable

    def by_arm(prompt: str, tools: Any) -> list[str]:
        rows = tools.pit_list(limit=None)["rows"]
        if any(r.get("partition_date", "") >= "2030" for r in rows):
            return [r["row_key"] for r in rows[:1]]
        if not any(r.get("issuer") for r in rows):
            return [r["row_key"] for r in rows[::2]]
        return [r["row_key"] for r in rows]

    return make_run(
        site_release,
        tmp_path_factory.mktemp("arm-aware"),
        site_prices,
        agent=from_callable(by_arm, name="arm-aware"),
    )


def test_run_page_explains_itself_and_charts_the_platform_figures(
    priced_release: Any, submitter: User, arm_aware_run: Artifacts
) -> None:
    run = submit(submitter, arm_aware_run)
    run.refresh_from_db()
    sha = run.body_sha256.removeprefix("sha256:")
    html = Client().get(f"/runs/{sha}/").content.decode()
    for needle in (
        'id="fig-returns"',
        'id="fig-deltas"',
        'id="platform-grid"',
        'id="self-grid"',
        'id="checklist"',
        "How to read this page",
        "unreachable",
        "Methodology",
        "P1 model version",
        "P6 disaggregation",
        "not declared: a listed gap, never a guess",
        run.body["network"]["model_egress"]["line"],
        run.body["limits"][0][:40],
        "reference prices <b>v1</b>",
        "Mask probe",
        "The rule:",
        "pit-harness verify receipt.json",
        "Verification history",
        run.body_sha256,
    ):
        assert needle in html, needle
    assert html.count('class="caption"') == 2
    figure = json.loads(
        html.split('id="fig-returns" type="application/json">')[1].split("</script>")[0]
    )
    assert [trace["name"] for trace in figure["data"]] == ["main", "redacted", "shifted"]
    cells = {(c["arm"], c["clock"]): c for c in run.platform.figures["cells"]}
    shifted_pit = cells[("shifted", "pit")]
    assert figure["data"][2]["y"][2] == pytest.approx(shifted_pit["total_return"] * 100)
    assert figure["data"][2]["error_y"]["array"][2] == pytest.approx(
        (shifted_pit["interval_95"][1] - shifted_pit["total_return"]) * 100
    )
    deltas = json.loads(
        html.split('id="fig-deltas" type="application/json">')[1].split("</script>")[0]
    )
    # the harness's delta, not one the chart recomputed
    pit = run.platform.figures["contamination"]["pit"]["main_minus_shifted"]
    assert deltas["data"][0]["y"][2] == pytest.approx(pit * 100)
    assert run.mask_verdict.replace("_", " ") in deltas["layout"]["title"]["text"]
    download = Client().get(f"/runs/{sha}/download/trajectory")
    assert b"".join(download.streaming_content) == arm_aware_run.trajectory.read_bytes()


def test_a_run_page_with_nothing_to_draw_says_why_instead(
    registered: Any, submitter: User, stub_run: Artifacts, reference_file: Path
) -> None:
    from pitweb.pricing.services import reference_prices_register

    run = submit(submitter, stub_run)  # the release has no reference prices yet
    html = Client().get(f"/runs/{run.body_sha256[7:]}/").content.decode()
    assert 'id="fig-returns"' not in html and 'id="fig-deltas"' not in html
    assert "awaiting reference prices for this release: no platform figures yet" in html
    reference_prices_register(
        release=registered,
        path=reference_file,
        source="SYNTHETIC",
        pulled_at="",
        staff=None,
        reason="now priced",
    )
    html = Client().get(f"/runs/{run.body_sha256[7:]}/").content.decode()
    # the stub buys every filing on every arm: its deltas are all zero, drawn as words
    assert 'id="fig-returns"' in html and 'id="fig-deltas"' not in html
    assert "Every contamination delta is +0.00 pp" in html


def test_compare_release_changelog_and_status_pages(
    priced_release: Any, submitter: User, stub_run: Artifacts, picky_run: Artifacts
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    shas = ",".join(r.body_sha256[7:] for r in (a, b))
    html = Client().get(f"/compare/?runs={shas}").content.decode()
    assert 'id="fig-compare"' in html and a.run_id in html and b.run_id in html
    registered = priced_release
    release = Client().get(f"/releases/{registered.digest_hex}/").content.decode()
    assert 'id="fig-rows"' in release and registered.name in release
    assert "SYNTHETIC reference prices" in release  # its price versions are listed
    assert (
        Client().get(f"/releases/{registered.digest_hex}/?format=json").json()["content_digest"]
        == registered.content_digest
    )
    assert Client().get("/changelog/").status_code == 200
    status = Client().get("/status/?format=json").json()
    assert status["queue_depth"] == 0 and status["recent_latencies"]
    assert Client().get("/runs/" + "0" * 64 + "/").status_code == 404


def test_openapi_schema_lists_every_endpoint(db: None) -> None:
    schema = Client().get("/api/schema/?format=json").json()
    for path in (
        "/api/runs/",
        "/api/runs/{sha}/",
        "/api/runs/{sha}/reverify/",
        "/api/jobs/{job_id}/",
        "/api/leaderboard/",
        "/api/leaderboard.csv",
    ):
        assert path in schema["paths"], path
    assert "multipart/form-data" in schema["paths"]["/api/runs/"]["post"]["requestBody"]["content"]
    docs = Client().get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower() and "/static/drf_spectacular_sidecar/" in docs
    assert '<script src="/api/docs/?script="></script>' in docs  # no inline script
    script = Client().get("/api/docs/?script=").content.decode()
    assert "/api/schema/" in script


def test_the_board_pages_with_positions_that_continue_and_equal_runs_tie(
    priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    from pitweb.board.query import PAGE_ROWS, PER_PAGE

    template = submit(submitter, stub_run)
    clone_runs(template, PER_PAGE + 4)
    Run.objects.exclude(pk=template.pk).update(status="verified")
    services.board_changed()
    first = Client().get("/api/leaderboard/").json()
    second = Client().get("/api/leaderboard/?page=2").json()
    assert {k: v for k, v in first["pagination"].items() if k not in ("next", "previous")} == {
        "page": 1,
        "pages": 2,
        "per_page": PER_PAGE,
        "ranked_total": PER_PAGE + 5,
    }
    assert [r["position"] for r in second["ranked"]] == list(range(PER_PAGE + 1, PER_PAGE + 6))
    # by key: the page after the first's last row is the second page, and back
    assert first["pagination"]["previous"] is None and second["pagination"]["next"] is None
    after = Client().get("/api/leaderboard/", {"after": first["pagination"]["next"]}).json()
    assert after["ranked"] == second["ranked"] and after["pagination"] == second["pagination"]
    back = Client().get("/api/leaderboard/", {"before": second["pagination"]["previous"]}).json()
    assert back["ranked"] == first["ranked"]
    # copies of one run have one interval: every one of them ties over the whole range
    assert {r["rank"] for r in first["ranked"] + second["ranked"]} == {f"1-{PER_PAGE + 5}"}
    everything = Client().get("/api/leaderboard/?all=1").json()
    assert len(everything["ranked"]) == PER_PAGE + 5
    assert Client().get("/api/leaderboard/?page=zero").status_code == 400
    for cursor in ("x", "nan~1~a", "0.1~0~a", "0.1~1~" + "a" * 17, "0.1~99999999999999999999~a"):
        assert Client().get("/api/leaderboard/", {"after": cursor}).status_code == 400, cursor
        assert Client().get("/benchmarks/", {"before": cursor}, follow=True).status_code == 400, (
            cursor
        )
    both = {"after": first["pagination"]["next"], "before": second["pagination"]["previous"]}
    assert Client().get("/api/leaderboard/", both).status_code == 400
    # a page of the site shows fewer rows than the API's; its last starts at the same row
    last = PER_PAGE // PAGE_ROWS + 1
    page = Client().get(f"/benchmarks/?page={last}", follow=True).content.decode()
    assert f"rows {PER_PAGE + 1}&ndash;{PER_PAGE + 5} of {PER_PAGE + 5}" in page
    assert page.count('<td class="num rank"') == 5
    assert (
        Client().get("/benchmarks/", follow=True).content.decode().count('<td class="num rank"')
        == PAGE_ROWS
    )
    assert 'rel="prev" href="?before=' + second["pagination"]["previous"] + '"' in page
    assert 'rel="next"' not in page


def test_every_table_has_csv_and_json(
    registered: Any, submitter: User, stub_run: Artifacts, staff: User
) -> None:
    run = submit(submitter, stub_run)
    services.run_set_flag(run=run, staff=staff, flag="look", reason="testing exports")
    sha = run.body_sha256[7:]
    client = Client()
    for name, count in (("cells", 9), ("probe", 10), ("jobs", 1)):
        as_json = client.get(f"/runs/{sha}/tables/{name}?format=json").json()[name]
        rows = list(
            csv.DictReader(
                io.StringIO(client.get(f"/runs/{sha}/tables/{name}?format=csv").content.decode())
            )
        )
        assert len(as_json) == len(rows) == count, name
    changelog = list(
        csv.DictReader(io.StringIO(client.get("/changelog/?format=csv").content.decode()))
    )
    assert changelog[0]["reason"] == "testing exports"
    assert client.get(f"/releases/{registered.digest_hex}/?format=csv").status_code == 200
    assert client.get("/status/?table=recent_latencies&format=csv").status_code == 200
    assert client.get(f"/runs/{sha}/tables/nope?format=csv").status_code == 404
    html = client.get(f"/runs/{sha}/").content.decode()
    assert html.count("?format=csv") >= 3 and html.count("?format=json") >= 3


def test_a_bad_date_filter_is_a_clear_400_everywhere(db: None) -> None:
    for path in (
        "/benchmarks/?start=foo",
        "/leaderboard.csv?end=2023-13-01",
        "/api/leaderboard/?start=foo",
        "/api/leaderboard.csv?end=x",
    ):
        response = Client().get(path)
        assert response.status_code == 400, path
        assert b"is not a date" in response.content, path


def test_the_release_chart_gives_each_shown_form_its_own_colour() -> None:
    import pandas as pd

    from pitweb import charts

    forms = [f"F{n:02d}" for n in range(21)]
    frame = pd.DataFrame(
        [{"date": "2023-03-01", "form": f, "rows": 100 - n} for n, f in enumerate(forms)]
        + [{"date": "2023-03-02", "form": "F00", "rows": 5}]
    )
    figure = charts.rows_per_day(frame)
    names = [trace.name for trace in figure.data]
    colours = [trace.marker.color for trace in figure.data]
    assert names == [*forms[:11], "other"]  # the largest forms, then the rest together
    assert len(set(colours)) == len(colours)
    other = figure.data[-1]
    assert list(other.y) == [sum(100 - n for n in range(11, 21))]
    assert list(figure.data[0].y) == [100, 5]


def test_the_status_page_costs_the_same_queries_however_many_jobs_and_workers(
    priced_release: Any, submitter: User, stub_run: Artifacts
) -> None:
    from django.utils import timezone

    from pitweb.jobs.models import WorkerBeat
    from pitweb.runs.models import VerificationJob

    template = submit(submitter, stub_run)

    def grow(jobs: int, workers: int) -> None:
        now = timezone.now()
        VerificationJob.objects.bulk_create(
            VerificationJob(run=template, kind="reverify", state="verified", finished_at=now)
            for _ in range(jobs)
        )
        WorkerBeat.objects.bulk_create(
            WorkerBeat(name=f"w{WorkerBeat.objects.count() + n}", started_at=now, last_seen=now)
            for n in range(workers)
        )

    grow(2, 1)
    for path in ("/status/", "/status/?format=json"):
        with CaptureQueriesContext(connection) as few:
            assert Client().get(path).status_code == 200
        grow(30, 20)
        with CaptureQueriesContext(connection) as many:
            assert Client().get(path).status_code == 200
        assert len(many) == len(few), [q["sql"] for q in many.captured_queries]
    data = Client().get("/status/?format=json").json()
    assert {w["state"] for w in data["workers"]} == {"live"}
    assert data["recent_latencies"][0]["page"].startswith(f"/runs/{template.body_sha256[7:]}/")


def test_a_run_that_needed_a_retry_says_so_on_its_page(
    registered: Any,
    submitter: User,
    site_release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The attempts ledger is in the hashed body; the run page lists each failed attempt
    with what it did."""
    agent = exiting_agent(monkeypatch, ("redacted", "pit"), times=1, name="crashes-once")
    artifacts = make_run(site_release, tmp_path / "retried", agent=agent)
    run = submit(submitter, artifacts)
    run.refresh_from_db()
    [entry] = run.body["attempts"]
    assert run.status == "verified"  # the ledger re-derives from the trajectory
    sha = run.body_sha256.removeprefix("sha256:")
    html = Client().get(f"/runs/{sha}/?submission={run.pk}").content.decode()
    assert 'id="retried"' in html and "1 attempt(s) ended before their cell did" in html
    assert f"{entry['cell']}, attempt 1" in html
    assert 'id="not-rankable"' not in html  # the retry got through


def test_a_cell_whose_agent_process_always_exits_is_shown_as_a_fact(
    registered: Any,
    submitter: User,
    site_release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every attempt of a cell ends with the agent's process exiting: the page says the
    cell is incomplete and why the run is not rankable, blaming neither side."""
    agent = exiting_agent(monkeypatch, ("shifted", "dump"), times=None, name="always-exits")
    artifacts = make_run(site_release, tmp_path / "exits", agent=agent)
    run = submit(submitter, artifacts)
    run.refresh_from_db()
    assert run.status == "verified"  # an honest receipt of an incomplete cell re-derives
    sha = run.body_sha256.removeprefix("sha256:")
    html = Client().get(f"/runs/{sha}/?submission={run.pk}").content.decode()
    assert 'id="not-rankable"' in html
    assert "cell shifted/dump: incomplete, the agent&#x27;s process exited in each of its 3" in html
    assert "<b>incomplete</b>" in html
    board = Client().get("/benchmarks/", follow=True).content.decode()
    apart = board.split('id="errors"')[1].split('id="failed"')[0]
    assert run.run_id in apart and "cells that did not complete: shifted/dump incomplete" in apart
    assert run.run_id not in board.split('id="errors"')[0]  # never ranked
