"""One board per benchmark: two windows, or two holds, never share a ranking on the
page, the API, the CSV or a snapshot; a query that spans benchmarks lists them grouped
with no rank; an old board address and a crafted key land where they should."""

from __future__ import annotations

import csv
import io
from importlib import import_module
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client

from pitweb.board import services as board_services
from pitweb.core.errors import SubmissionError
from pitweb.runs.models import Benchmark, Family, Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture()
def two_windows(
    priced_release: Any,
    submitter: User,
    stub_run: Artifacts,
    longer_window_run: Artifacts,
    settings: Any,
) -> tuple[Run, Run]:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    return submit_run(submitter, stub_run), submit_run(submitter, longer_window_run)


def _key(run: Run) -> str:
    assert run.benchmark is not None
    return run.benchmark.key


def test_two_windows_are_two_benchmarks(two_windows: tuple[Run, Run]) -> None:
    short, longer = two_windows
    assert _key(short) != _key(longer)
    assert Benchmark.objects.count() == 2
    assert "2023-03-01..03-08" in short.benchmark.name  # type: ignore[union-attr]


def test_another_hold_is_another_benchmark(
    priced_release: Any, submitter: User, stub_run: Artifacts, short_hold_run: Artifacts
) -> None:
    five, three = submit_run(submitter, stub_run), submit_run(submitter, short_hold_run)
    assert _key(five) != _key(three)
    assert "hold 3" in three.benchmark.name  # type: ignore[union-attr]


def test_a_benchmark_board_ranks_only_its_own_runs(two_windows: tuple[Run, Run]) -> None:
    short, longer = two_windows
    page = Client().get(f"/benchmarks/{_key(short)}/").content.decode()
    assert short.run_id in page and longer.run_id not in page
    page = Client().get(f"/benchmarks/{_key(longer)}/").content.decode()
    assert longer.run_id in page and short.run_id not in page


def test_the_api_ranks_inside_one_benchmark_and_names_it_in_every_row(
    two_windows: tuple[Run, Run],
) -> None:
    short, _ = two_windows
    answer = Client().get("/api/leaderboard/", {"benchmark": _key(short)}).json()
    assert answer["grouped"] is False and answer["benchmark"]["key"] == _key(short)
    assert [r["run_id"] for r in answer["ranked"]] == [short.run_id]
    assert answer["ranked"][0]["rank"] == "1" and answer["ranked"][0]["benchmark"] == _key(short)


def test_an_api_query_spanning_windows_ranks_nothing(two_windows: tuple[Run, Run]) -> None:
    for params in ({}, {"all": "1"}, {"release": two_windows[0].release_digest}):
        answer = Client().get("/api/leaderboard/", params).json()
        assert answer["grouped"] is True
        assert {b["key"] for b in answer["benchmarks"]} == {_key(r) for r in two_windows}
        rows = answer["ranked"]
        assert {r["run_id"] for r in rows} == {r.run_id for r in two_windows}
        assert all(r["rank"] is None and r["position"] is None for r in rows)
        assert all(r["ranked_interval"] is None for r in rows)


def test_the_csv_spanning_windows_has_no_rank_and_names_each_benchmark(
    two_windows: tuple[Run, Run],
) -> None:
    for path in ("/api/leaderboard.csv", "/leaderboard.csv"):
        rows = list(csv.DictReader(io.StringIO(Client().get(path).content.decode())))
        assert {r["run_id"] for r in rows} == {r.run_id for r in two_windows}
        assert all(r["rank"] == "" and r["rank_low"] == "" for r in rows)
        assert {r["benchmark"] for r in rows} == {_key(r) for r in two_windows}


def test_a_benchmark_csv_ranks_its_own_runs_only(two_windows: tuple[Run, Run]) -> None:
    short, _ = two_windows
    body = Client().get(f"/benchmarks/{_key(short)}/leaderboard.csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [(r["run_id"], r["rank"]) for r in rows] == [(short.run_id, "1")]


def test_a_snapshot_spanning_benchmarks_is_refused(
    two_windows: tuple[Run, Run], staff: User
) -> None:
    with pytest.raises(SubmissionError) as refused:
        board_services.snapshot_publish(filters={}, reason="both windows", staff=staff)
    assert refused.value.code == "spans_benchmarks"
    assert "match 2" in refused.value.message


def test_a_snapshot_spanning_benchmarks_is_refused_by_the_api(
    two_windows: tuple[Run, Run], staff: User
) -> None:
    client = Client()
    client.force_login(staff)
    answer = client.post("/api/snapshots/", {"reason": "both windows"})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "spans_benchmarks"


def test_a_snapshot_holds_one_benchmark(two_windows: tuple[Run, Run], staff: User) -> None:
    short, longer = two_windows
    snapshot = board_services.snapshot_publish(
        filters={"benchmark": _key(short)}, reason="the short window", staff=staff
    )
    page = Client().get(f"/snapshots/{snapshot.pk}/").content.decode()
    assert short.run_id in page and longer.run_id not in page
    assert short.benchmark.name in page  # type: ignore[union-attr]


def test_the_schedule_snapshots_each_benchmark_apart(two_windows: tuple[Run, Run]) -> None:
    snapshots = board_services.snapshot_scheduled()
    assert len(snapshots) == 2
    assert all(s.content.count('"run_id"') == 1 for s in snapshots)


def test_attempts_are_counted_per_benchmark(two_windows: tuple[Run, Run]) -> None:
    short, longer = two_windows
    assert short.family_id != longer.family_id
    assert [f.attempts for f in Family.objects.order_by("pk")] == [1, 1]


@pytest.mark.parametrize(
    "key",
    [
        "0" * 32,  # written as a key, names none
        "ZZ" * 16,
        "0" * 33,
        "..%2F..%2Fetc",
        "x" * 5000,
        "%2e%2e",
        "0" * 31 + "g",
    ],
)
def test_a_crafted_benchmark_key_is_a_404(two_windows: tuple[Run, Run], key: str) -> None:
    for path in ("/benchmarks/{}/", "/benchmarks/{}/leaderboard.csv", "/benchmarks/{}/chart.json"):
        assert Client().get(path.format(key)).status_code == 404


def test_a_crafted_benchmark_parameter_is_a_400_not_a_500(two_windows: tuple[Run, Run]) -> None:
    answer = Client().get("/api/leaderboard/", {"benchmark": "'; drop table runs_run; --"})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_benchmark"


def test_an_old_board_address_redirects_to_its_benchmark(two_windows: tuple[Run, Run]) -> None:
    short, _ = two_windows
    old = Client().get("/", {"start": "2023-03-01", "end": "2023-03-08"})
    assert old.status_code == 301 and old["Location"].startswith("/benchmarks/?")
    found = Client().get(old["Location"])
    assert found.status_code == 302 and found["Location"] == f"/benchmarks/{_key(short)}/"
    csv_old = Client().get("/leaderboard.csv", {"end": "2023-03-08"})
    assert csv_old["Location"] == f"/benchmarks/{_key(short)}/leaderboard.csv"


def test_a_filter_spanning_windows_lists_runs_grouped_with_no_rank(
    two_windows: tuple[Run, Run],
) -> None:
    answer = Client().get("/benchmarks/", {"form": "8-K"})
    assert answer.status_code == 200
    page = answer.content.decode()
    assert all(r.benchmark.name in page for r in two_windows)  # type: ignore[union-attr]
    assert '<th data-sort="num" title="rank range' not in page


def test_the_home_page_lists_each_benchmark_with_its_counts(
    two_windows: tuple[Run, Run], django_assert_max_num_queries: Any
) -> None:
    Client().get(f"/benchmarks/{_key(two_windows[0])}/")  # their boards computed
    Client().get(f"/benchmarks/{_key(two_windows[1])}/")
    with django_assert_max_num_queries(12):
        page = Client().get("/").content.decode()
    for run in two_windows:
        assert f'href="/benchmarks/{_key(run)}/"' in page
        assert run.run_id in page  # the latest verified runs
    assert page.count("1 / 1") == 2  # ranked / in all, per benchmark


def test_the_migration_gives_stored_runs_their_benchmark_and_splits_a_family_across_two(
    two_windows: tuple[Run, Run],
) -> None:
    """Runs stored before benchmarks: one family over both windows (as families were
    keyed before, say), no benchmark recorded. The backfill reads each run's benchmark
    off its receipt and gives each benchmark its own family."""
    short, longer = two_windows
    keys = {short.pk: _key(short), longer.pk: _key(longer)}
    old = short.family
    assert old is not None
    Run.objects.filter(pk=longer.pk).update(family=old, benchmark=None)
    Run.objects.filter(pk=short.pk).update(benchmark=None)
    Family.objects.exclude(pk=old.pk).delete()
    Family.objects.filter(pk=old.pk).update(benchmark=None, attempts=2)
    import_module("pitweb.runs.migrations.0022_benchmarks").backfill(apps, None)
    for run in Run.objects.select_related("benchmark", "family"):
        assert run.benchmark is not None and run.benchmark.key == keys[run.pk]
        assert run.family is not None and run.family.benchmark_id == run.benchmark_id
    assert sorted(Family.objects.values_list("attempts", flat=True)) == [1, 1]
