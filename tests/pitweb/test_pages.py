"""Pages and read APIs: what they show, their exports, their query counts, the schema."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts

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
    """Many runs for query counting, copied from a real one (no verification needed)."""
    services.board_changed()  # written behind the services' back: say the board changed
    template.refresh_from_db()  # services update rows in the database, not this object
    for n in range(first, count):
        Run.objects.create(
            **{
                f.name: getattr(template, f.name)
                for f in Run._meta.concrete_fields
                if f.name not in ("id", "run_id", "body_sha256", "submitted_at")
            },
            run_id=f"{n:016x}",
            body_sha256=f"sha256:{n:064x}",
        )


def test_leaderboard_ranks_verified_runs_on_pit_main_and_exports(
    registered: Any, submitter: User, stub_run: Artifacts, picky_run: Artifacts
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    board = Client().get("/api/leaderboard/").json()
    ranked = board["ranked"]
    assert [r["rank"] for r in ranked] == [1, 2]
    assert ranked[0]["main_pit"] >= ranked[1]["main_pit"]
    assert {r["run_id"] for r in ranked} == {a.run_id, b.run_id}
    body = json.loads(stub_run.receipt.read_text())["body"]
    row = next(r for r in ranked if r["run_id"] == a.run_id)
    assert row["delta_shifted_pit"] == body["contamination"]["pit"]["main_minus_shifted"]
    assert row["mask_verdict"] == body["probe"]["verdict"]
    assert row["protocol_gaps"] == "P1_model_version,P2_training_cutoffs"
    rows = list(csv.DictReader(io.StringIO(Client().get("/leaderboard.csv").content.decode())))
    assert [r["run_id"] for r in rows if r["section"] == "ranked"] == [r["run_id"] for r in ranked]
    html = Client().get("/").content.decode()
    assert a.run_id in html and "plotly.min.js" in html and "cdn" not in html.lower()


def test_failed_pending_and_invalid_runs_are_shown_apart(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    clone_runs(run, 3)
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


def test_leaderboard_filters_live_in_the_url(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    submit(submitter, stub_run)
    assert Client().get("/api/leaderboard/?form=8-K").json()["ranked"]
    assert not Client().get("/api/leaderboard/?form=10-K").json()["ranked"]
    assert not Client().get("/api/leaderboard/?start=2020-01-01").json()["ranked"]
    page = Client().get("/?form=8-K").content.decode()
    assert "leaderboard.csv?form=8-K" in page


@pytest.mark.parametrize("path", ["/", "/api/leaderboard/", "/leaderboard.csv", "/api/runs/"])
def test_query_count_does_not_grow_with_runs(
    path: str, registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    template = submit(submitter, stub_run)
    clone_runs(template, 3)
    with CaptureQueriesContext(connection) as few:
        assert Client().get(path).status_code == 200
    clone_runs(template, 40, first=3)
    with CaptureQueriesContext(connection) as many:
        assert Client().get(path).status_code == 200
    assert Run.objects.count() == 41
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


def test_run_page_shows_grid_charts_probe_commands_and_history(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    run = submit(submitter, stub_run)
    sha = run.body_sha256.removeprefix("sha256:")
    html = Client().get(f"/runs/{sha}/").content.decode()
    for needle in (
        'id="fig-returns"',
        'id="fig-deltas"',
        "Mask probe",
        "pit-harness verify receipt.json",
        "Verification history",
        run.body_sha256,
    ):
        assert needle in html, needle
    figure = json.loads(
        html.split('id="fig-returns" type="application/json">')[1].split("</script>")[0]
    )
    assert [trace["name"] for trace in figure["data"]] == ["main", "redacted", "shifted"]
    cells = Client().get(f"/runs/{sha}/cells.json").json()["cells"]
    main_pit = next(c for c in cells if (c["arm"], c["clock"]) == ("main", "pit"))["total_return"]
    assert figure["data"][0]["y"][2] == pytest.approx(main_pit * 100)
    download = Client().get(f"/runs/{sha}/download/trajectory")
    assert b"".join(download.streaming_content) == stub_run.trajectory.read_bytes()


def test_compare_release_changelog_and_status_pages(
    registered: Any, submitter: User, stub_run: Artifacts, picky_run: Artifacts
) -> None:
    a, b = submit(submitter, stub_run), submit(submitter, picky_run)
    shas = ",".join(r.body_sha256[7:] for r in (a, b))
    html = Client().get(f"/compare/?runs={shas}").content.decode()
    assert 'id="fig-compare"' in html and a.run_id in html and b.run_id in html
    release = Client().get(f"/releases/{registered.digest_hex}/").content.decode()
    assert 'id="fig-rows"' in release and registered.name in release
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
    assert (
        "/api/schema/" in docs
        and "cdn" not in docs.lower()
        and "/static/drf_spectacular_sidecar/" in docs
    )


def test_the_board_pages_with_ranks_that_continue(
    registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    from pitweb.runs.selectors import PER_PAGE

    template = submit(submitter, stub_run)
    clone_runs(template, PER_PAGE + 4)
    Run.objects.exclude(pk=template.pk).update(status="verified")
    services.board_changed()
    first = Client().get("/api/leaderboard/").json()
    second = Client().get("/api/leaderboard/?page=2").json()
    assert first["pagination"] == {
        "page": 1,
        "pages": 2,
        "per_page": PER_PAGE,
        "ranked_total": PER_PAGE + 5,
    }
    assert [r["rank"] for r in second["ranked"]] == list(range(PER_PAGE + 1, PER_PAGE + 6))
    everything = Client().get("/api/leaderboard/?all=1").json()
    assert len(everything["ranked"]) == PER_PAGE + 5
    assert Client().get("/api/leaderboard/?page=zero").status_code == 400
    assert "page 2 of 2" in Client().get("/?page=2").content.decode()


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
        "/?start=foo",
        "/leaderboard.csv?end=2023-13-01",
        "/api/leaderboard/?start=foo",
        "/api/leaderboard.csv?end=x",
    ):
        response = Client().get(path)
        assert response.status_code == 400, path
        assert b"is not a date" in response.content, path
