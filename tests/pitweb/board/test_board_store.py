"""The stored board: computed by a worker, incrementally, one computation at a time, the
last complete one served meanwhile, read by key in a fixed number of queries however many
runs there are, and equal to the board computed from the runs themselves."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from pitweb.board import cache as boardcache
from pitweb.board import ranks as boardranks
from pitweb.board import selectors
from pitweb.board import services as board_services
from pitweb.board import store as boardstore
from pitweb.board.benchmarks import benchmark_out, board_scope
from pitweb.board.changes import REFRESH_SENT
from pitweb.board.filters import pinned
from pitweb.board.keys import Cursor
from pitweb.board.models import BoardChange, BoardEntry, StoredBoard
from pitweb.board.tasks import refresh_boards_task
from pitweb.cache import near
from pitweb.pricing.models import PlatformScore
from pitweb.runs import services
from pitweb.runs.models import Family, Run
from tests.pitweb.conftest import Artifacts
from tests.pitweb.runs.test_pages import submit
from tests.support.queries import queries_apart

pytestmark = pytest.mark.django_db(transaction=True)


def _copy(row: Any, *skip: str) -> dict[str, Any]:
    return {
        f.attname: getattr(row, f.attname)
        for f in type(row)._meta.concrete_fields
        if f.name not in ("id", *skip)
    }


def spread(template: Run, count: int, *, first: int = 1, step: float = 0.002) -> list[Run]:
    """``count`` runs copied from a real, scored one, each with its own platform score
    moved by ``step`` per run (its return and its bootstrap tails alike), so their
    intervals differ and overlap; written around intake (each a family of its own)."""
    template.refresh_from_db()
    score = template.platform
    assert score is not None and score.shifted_pit_tails is not None
    runs = Run.objects.bulk_create(
        [
            Run(
                **_copy(template, "run_id", "body_sha256", "submitted_at", "family", "platform"),
                run_id=f"{n:016x}",
                body_sha256=f"sha256:{n:064x}",
            )
            for n in range(first, first + count)
        ],
        batch_size=2000,
    )
    tails = score.shifted_pit_tails
    scores = PlatformScore.objects.bulk_create(
        [
            PlatformScore(
                **_copy(score, "run", "shifted_pit", "shifted_pit_tails"),
                run=run,
                shifted_pit=score.shifted_pit + n * step,
                shifted_pit_tails={
                    "replicates": tails["replicates"],
                    "low": [x + n * step for x in tails["low"]],
                    "high": [x + n * step for x in tails["high"]],
                },
            )
            for n, run in enumerate(runs, start=first)
        ],
        batch_size=2000,
    )
    for run, own in zip(runs, scores, strict=True):
        run.platform = own
    Run.objects.bulk_update(runs, ["platform"], batch_size=2000)
    services.board_changed()  # written behind the services' back: say the board changed
    return runs


@pytest.fixture()
def scored(priced_release: Any, submitter: User, stub_run: Artifacts, settings: Any) -> Run:
    settings.PITWEB_MIN_RANKED_TRADES = 1
    run = submit(submitter, stub_run)
    run.refresh_from_db()
    assert run.platform is not None and run.platform.state == "scored"
    assert run.benchmark is not None
    BOARD[:] = [f"/benchmarks/{run.benchmark.key}/"]
    return run


# the one benchmark's board of these tests (every run is a copy of one): its address,
# known before a request is counted
BOARD = ["/benchmarks/"]


def pinned_filters() -> dict[str, Any]:
    """The filters the board page is drawn and cached with."""
    return pinned(BOARD[0].split("/")[2], {})


def live(**filters: Any) -> dict[str, Any]:
    """The anonymous board computed from the runs themselves, as before it was stored."""
    asked = {k: filters.get(k) for k in ("release", "form", "start", "end")}
    scope = board_scope(AnonymousUser(), asked | {"isolated": False})
    assert not isinstance(scope, list)
    page = filters.get("page", 1)
    board = selectors._leaderboard(
        AnonymousUser(), pinned(scope.key, asked), page, selectors.PER_PAGE
    )
    return board | {"grouped": False, "benchmark": benchmark_out(scope)}


def without_time(board: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in board.items() if k != "computed_at"}


def tuned(runs: list[Run], submitter: User) -> Family:
    """The runs made one family of the submitter's (agent "tuned"), one attempt each."""
    first = runs[0]
    family = Family.objects.create(
        submitter=submitter, agent="tuned", release_digest=first.release_digest,
        window_start=first.window_start, window_end=first.window_end, attempts=len(runs),
    )  # fmt: skip
    Run.objects.filter(pk__in=[r.pk for r in runs]).update(family=family)
    return family


def test_the_stored_board_equals_the_board_computed_from_the_runs(
    scored: Run, submitter: User
) -> None:
    runs = spread(scored, 230)
    # a family of several attempts (its best ranks, widened), a hidden run, a withdrawn
    # one and a failed one: each where the computed board has it
    family = tuned(runs[10:17], submitter)
    Run.objects.filter(pk=runs[40].pk).update(hidden=True)
    Run.objects.filter(pk=runs[41].pk).update(withdrawn_at=timezone.now())
    Run.objects.filter(pk=runs[42].pk).update(status="mismatch", verification_level="self_reported")
    services.board_changed()
    ranked = []
    for page in (1, 2, 3):
        stored = Client().get("/api/leaderboard/", {"page": page}).json()
        assert without_time(stored) == without_time(live(page=page))
        ranked += stored["ranked"]
    # less the hidden and the withdrawn, the failed, and the family's other attempts
    assert stored["pagination"]["ranked_total"] == len(ranked) == 231 - 2 - 1 - 6
    assert [r["run_id"] for r in stored["failed"]] == [runs[42].run_id]
    [best] = [r for r in ranked if r["family"] == family.pk]
    assert best["run_id"] == runs[16].run_id
    assert best["attempts"] == 7 and best["ranked_confidence"] == pytest.approx(0.95 ** (1 / 7))


def test_one_changed_run_is_drawn_again_and_only_the_rows_that_moved_are_written(
    scored: Run,
) -> None:
    runs = spread(scored, 120)  # (tests run tasks at once: the worker computed it)
    cache.add(REFRESH_SENT, 1)  # from here on this test computes, not the worker
    board = StoredBoard.objects.get(key=boardstore.board_key({}))
    before = {e.run_id: e for e in BoardEntry.objects.filter(board=board)}
    assert len(before) == 121
    # nothing changed: a new version computes, draws nothing and writes nothing
    services.board_changed()
    done = boardstore.refresh(board)
    assert done == boardstore.Computed(ranked=121, new=0, changed=0, gone=0, drawn=0)
    # one run re-priced far ahead of every other: only its interval is drawn again
    moved = runs[0].platform
    assert moved is not None
    PlatformScore.objects.filter(pk=moved.pk).update(shifted_pit=5.0)
    tails = dict(moved.shifted_pit_tails or {})
    tails["low"], tails["high"] = [4.9] * len(tails["low"]), [5.1] * len(tails["high"])
    PlatformScore.objects.filter(pk=moved.pk).update(shifted_pit_tails=tails)
    services.board_changed()
    done = boardstore.refresh(board)
    assert done is not None and (done.ranked, done.new, done.gone, done.drawn) == (121, 0, 0, 1)
    after = {e.run_id: e for e in BoardEntry.objects.filter(board=board)}
    assert {pk: e.pk for pk, e in after.items()} == {pk: e.pk for pk, e in before.items()}
    rewritten = {
        pk for pk, e in after.items()
        if any(getattr(e, f) != getattr(before[pk], f) for f in boardstore.FIELDS)
    }  # fmt: skip
    assert done.changed == len(rewritten) and runs[0].pk in rewritten
    top = Client().get("/api/leaderboard/").json()["ranked"][0]
    assert top["run_id"] == runs[0].run_id and top["rank"] == "1"
    assert top["ranked_interval"] == [4.9, 5.1]
    # a run taken off the board is deleted from it, and nothing else drawn
    Run.objects.filter(pk=runs[5].pk).update(hidden=True)
    services.board_changed()
    done = boardstore.refresh(board)
    assert done is not None and (done.ranked, done.new, done.gone, done.drawn) == (120, 0, 1, 0)


def whole_copy(board: StoredBoard) -> tuple[Any, ...]:
    """What ``board`` holds, and what a board with its filters computed whole from the
    runs holds now (a second stored board, never computed before)."""
    board.refresh_from_db()
    twin = StoredBoard.objects.create(key=f"whole-{board.built_version}", filters=board.filters)
    done = boardstore.refresh(twin)
    assert done is not None and done.read is None  # computed whole
    twin.refresh_from_db()

    def held(b: StoredBoard) -> tuple[Any, ...]:
        entries = list(BoardEntry.objects.filter(board=b))
        rows = {
            e.run_id: (*(getattr(e, f) for f in boardstore.FIELDS[:6]), *found)
            for e, found in zip(entries, boardstore.ranges(b, entries), strict=True)
        }  # the rank ranges as a page shows them: counted against the base, and the delta
        return rows, b.apart, b.facets, b.ranked_total

    found = held(board), held(twin)
    twin.delete()
    return found


def test_a_change_through_the_services_reads_only_its_runs_and_equals_the_whole_board(
    scored: Run,
    submitter: User,
    other: User,
    staff: User,
    stub_run: Artifacts,
    picky_run: Artifacts,
    site_release: Any,
    site_prices: Any,
    tmp_path: Any,
) -> None:
    from tests.pitweb.conftest import make_run

    runs = spread(scored, 150)
    tuned(runs[20:24], submitter)
    services.board_changed()
    cache.add(REFRESH_SENT, 1)  # from here on this test computes, not the worker
    board = StoredBoard.objects.get(key=boardstore.board_key({}))  # (computed whole)
    # the same benchmark (another hold would be another benchmark, and another family)
    again = make_run(site_release, tmp_path / "again", site_prices, probe=4)
    reason = "checked by the incremental board test"
    changes = [
        ("hidden", lambda: services.run_set_hidden(run=runs[3], staff=staff, hidden=True, reason=reason)),
        ("shown again", lambda: services.run_set_hidden(run=runs[3], staff=staff, hidden=False, reason=reason)),
        ("flagged", lambda: services.run_set_flag(run=runs[4], staff=staff, flag="odd", reason=reason)),
        ("withdrawn", lambda: services.run_withdraw(run=runs[5], owner=submitter, reason=reason)),
        ("a family's best hidden", lambda: services.run_set_hidden(run=runs[23], staff=staff, hidden=True, reason=reason)),
        ("re-verified", lambda: services.run_reverify(run=runs[6], staff=staff, reason=reason)),
        ("another's upload", lambda: submit(other, stub_run)),
        ("a new agent", lambda: submit(submitter, picky_run)),
        ("a family's second attempt", lambda: submit(submitter, again)),
        ("a snapshot", lambda: board_services.snapshot_publish(filters={}, reason=reason, staff=staff)),
    ]  # fmt: skip
    for what, change in changes:
        change()
        done = boardstore.refresh(board)
        assert done is not None and done.read is not None, what  # not computed whole
        assert done.read <= 8, what  # the run changed and its family, not the board
        mine, whole = whole_copy(board)
        assert mine == whole, what
    # the family's second attempt widened its best's interval: it is counted
    board.refresh_from_db()
    assert scored.family is not None
    scored.family.refresh_from_db()
    assert scored.family.attempts == 2
    # the log is kept only until every stored board has been computed past it
    refresh_boards_task()
    assert not BoardChange.objects.filter(version__lte=board.built_version).exists()


def test_a_delta_grown_past_its_bound_computes_the_board_whole_again(
    scored: Run, staff: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = spread(scored, 40)
    cache.add(REFRESH_SENT, 1)  # from here on this test computes, not the worker
    board = StoredBoard.objects.get(key=boardstore.board_key({}))
    monkeypatch.setattr(boardranks, "DELTA_MAX", 2)
    reads = []
    for run in runs[:3]:
        services.run_set_hidden(run=run, staff=staff, hidden=True, reason="delta bound test")
        done = boardstore.refresh(board)
        assert done is not None
        reads.append(done.read)
        board.refresh_from_db()
    # two intervals taken away are held as the delta; the third is one too many
    assert reads == [1, 1, None]
    assert board.rank_delta == [] and board.ranked_total == 41 - 3
    mine, whole = whole_copy(board)
    assert mine == whole


def test_a_private_run_that_changes_adds_to_the_facets_and_a_hidden_one_rescans(
    scored: Run, staff: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = spread(scored, 3)
    cache.add(REFRESH_SENT, 1)  # from here on this test computes, not the worker
    board = StoredBoard.objects.get(key=boardstore.board_key({}))
    boardstore.refresh(board)
    scans: list[object] = []
    counted = boardcache.public_facets

    def public_facets(among: Any = None, **kwargs: Any) -> dict[str, Any]:
        scans.append(among)
        return counted(among, **kwargs)

    monkeypatch.setattr(boardcache, "public_facets", public_facets)
    # a private run never was in the facets: its change adds to them, no scan
    Run.objects.filter(pk=runs[0].pk).update(visibility="private")
    services.board_changed(runs=[runs[0].pk])
    assert boardstore.refresh(board) is not None
    assert scans == [{runs[0].pk}]
    # a public run hidden may have held a value no other run holds: the whole scan
    services.run_set_hidden(run=runs[1], staff=staff, hidden=True, reason="facets test")
    assert boardstore.refresh(board) is not None
    assert scans[1:] == [None]
    mine, whole = whole_copy(board)
    assert mine == whole


def test_one_computation_at_a_time_and_meanwhile_the_last_complete_board(
    scored: Run,
) -> None:
    runs = spread(scored, 5)
    first = Client().get("/api/leaderboard/").json()
    assert len(first["ranked"]) == 6
    board = StoredBoard.objects.get(key=boardstore.board_key(pinned_filters()))
    built = board.built_version
    # another worker is computing it: a visitor neither waits nor computes a second time
    StoredBoard.objects.filter(pk=board.pk).update(building_since=timezone.now())
    spread(scored, 3, first=100, step=1.0)  # three new runs, far ahead
    for _ in range(3):
        served = Client().get("/api/leaderboard/").json()
        assert served["ranked"] == first["ranked"]  # the last complete board
    assert boardstore.refresh(board) is None
    board.refresh_from_db()
    assert board.built_version == built
    # a run hidden meanwhile leaves the page at once, computed or not
    Run.objects.filter(pk=runs[0].pk).update(hidden=True)
    services.board_changed()
    served = Client().get("/api/leaderboard/").json()
    assert runs[0].run_id not in {r["run_id"] for r in served["ranked"]}
    assert len(served["ranked"]) == 5
    # a computation whose worker died is taken over once it is stale
    stale = timezone.now() - timedelta(seconds=boardstore.CLAIM_SECONDS + 1)
    StoredBoard.objects.filter(pk=board.pk).update(building_since=stale)
    served = Client().get("/api/leaderboard/").json()
    assert served["pagination"]["ranked_total"] == 8
    assert [r["run_id"] for r in served["ranked"][:3]] == [f"{n:016x}" for n in (102, 101, 100)]
    assert StoredBoard.objects.get(pk=board.pk).building_since is None


def test_a_visitor_leaves_a_fresh_change_to_the_worker_and_sees_it_once_computed(
    scored: Run, settings: Any
) -> None:
    settings.PITWEB_BOARD_STALE_SECONDS = 3600
    page = Client().get(BOARD[0]).content.decode()
    assert scored.run_id in page
    cache.add(REFRESH_SENT, 1)  # a computation is queued, not yet taken by the worker
    spread(scored, 1, first=100, step=1.0)
    for path in (BOARD[0], "/api/leaderboard/"):
        assert f"{100:016x}" not in Client().get(path).content.decode()  # not computed yet
    # the worker's computations: the benchmark's board, and the whole board (its facets)
    assert refresh_boards_task() == 2
    # the cached page and API answer of the board before are not served again
    assert f"{100:016x}" in Client().get(BOARD[0]).content.decode()
    assert Client().get("/api/leaderboard/").json()["ranked"][0]["run_id"] == f"{100:016x}"


def test_an_answer_from_a_board_being_computed_is_kept_only_for_the_grace_anywhere(
    scored: Run, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time as real

    import pitweb.cache

    class Clock:
        now = real.time()

        def time(self) -> float:
            return self.now

        def monotonic(self) -> float:
            return real.monotonic()

    clock = Clock()
    monkeypatch.setattr(pitweb.cache, "time", clock)
    monkeypatch.setattr(boardcache, "time", clock)
    settings.PITWEB_BOARD_STALE_SECONDS = 60
    Client().get(BOARD[0])
    cache.add(REFRESH_SENT, 1)  # a computation is queued, not yet taken by the worker
    spread(scored, 1, first=100, step=1.0)
    Client().get(BOARD[0])  # drawn from the board before: kept for the grace
    for seconds, reads_board in ((59, False), (61, True)):
        clock.now += seconds - (clock.now - Clock.now)
        with queries_apart() as spent:
            Client().get(BOARD[0])
        assert (len(spent.site) > 1) is reads_board, (seconds, spent.site)
        if seconds < 60:  # as another server process finds it: in the shared cache
            near.clear()
            with queries_apart() as spent:
                Client().get(BOARD[0])
            assert len(spent.site) == 1 and len(spent.reads()) == 1, spent


def test_an_entry_cached_before_its_deadline_was_stored_beside_it_is_rendered_again(
    scored: Run,
) -> None:
    from pitweb.board.stamp import board_stamp

    filters = pinned_filters()
    first = Client().get(BOARD[0]).content
    key = boardcache.key("board-page", board_stamp(), filters)
    assert key is not None
    # as a server of the release before left it: the answer alone, with no deadline
    for left in ("<html>stale</html>", ("x", "<html>stale</html>"), ["a", "b", "c"]):
        cache.set(key.exact, left)
        near.clear()
        assert Client().get(BOARD[0]).content == first


def test_the_stamp_read_once_per_interval_sees_this_process_s_changes_at_once(
    scored: Run, staff: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time as real

    from pitweb.board import stamp as board
    from pitweb.board.models import BoardVersion

    class Clock:
        now = real.monotonic()

        def monotonic(self) -> float:
            return self.now

    clock = Clock()
    monkeypatch.setattr(board, "time", clock)
    settings.PITWEB_BOARD_STAMP_MS = 50
    runs = spread(scored, 2)
    assert runs[0].run_id in Client().get(BOARD[0]).content.decode()
    # a change through this process's services: its next request sees it (no worker's
    # computation meanwhile: one is queued already)
    cache.add(REFRESH_SENT, 1)
    services.run_set_hidden(run=runs[0], staff=staff, hidden=True, reason="a test hides it")
    assert runs[0].run_id not in Client().get(BOARD[0]).content.decode()
    # one made by another process (its row moved, nothing said here): seen within 50 ms
    before = board.board_stamp()
    BoardVersion.objects.filter(pk=1).update(version=before.version + 1)
    clock.now += 0.049
    assert board.board_stamp() == before
    clock.now += 0.002
    assert board.board_stamp().version == before.version + 1
    # a reading that began before this process changed the board is not kept
    board.forget_stamp()
    read = board._read_stamp

    def changed_meanwhile() -> Any:
        found = read()
        board.forget_stamp()
        return found

    monkeypatch.setattr(board, "_read_stamp", changed_meanwhile)
    board.board_stamp()
    monkeypatch.setattr(board, "_read_stamp", read)
    with CaptureQueriesContext(connection) as queries:
        board.board_stamp()
    assert len(queries) == 1


def test_filters_no_link_leads_to_store_no_board(scored: Run) -> None:
    Client().get("/api/leaderboard/")
    stored = StoredBoard.objects.count()
    for n in range(20):
        assert Client().get("/api/leaderboard/", {"release": f"nothing-{n}"}).json()["ranked"] == []
        assert (
            Client().get("/benchmarks/", {"form": f"X-{n}", "start": "2020-01-01"}).status_code
            == 200
        )
    assert StoredBoard.objects.count() == stored
    # a filter that names the one benchmark is its board: nothing more is stored
    Client().get("/api/leaderboard/", {"form": "8-K"})
    Client().get("/benchmarks/", {"form": "8-K"}, follow=True)
    assert StoredBoard.objects.count() == stored
    # a filter the board does link to is stored, once
    Client().get("/api/leaderboard/", {"isolated": "1"})
    Client().get(BOARD[0], {"isolated": "1"})
    assert StoredBoard.objects.count() == stored + 1


def test_walking_by_key_visits_every_ranked_row_once_while_the_board_changes(
    scored: Run,
) -> None:
    spread(scored, 250)
    whole = Client().get("/api/leaderboard/", {"all": "1"}).json()["ranked"]
    seen: list[str] = []
    page = Client().get("/api/leaderboard/").json()
    seen += [r["run_id"] for r in page["ranked"]]
    # a run lands on top while the visitor reads: the next page by key repeats no row
    spread(scored, 1, first=1000, step=1.0)
    while page["pagination"]["next"]:
        page = Client().get("/api/leaderboard/", {"after": page["pagination"]["next"]}).json()
        seen += [r["run_id"] for r in page["ranked"]]
    assert seen == [r["run_id"] for r in whole]
    assert page["ranked"][-1]["position"] == len(whole) + 1  # the new run counts ahead


@pytest.mark.slow
def test_a_page_costs_the_same_queries_with_100_and_10000_runs(scored: Run) -> None:
    spread(scored, 99)
    counts = {}
    for size in (100, 10_000):
        if size > 100:
            spread(scored, size - 100, first=100, step=0.00002)
        refresh_boards_task()  # the worker's part
        assert StoredBoard.objects.get(key=boardstore.board_key({})).ranked_total == size
        row = Client().get("/api/leaderboard/").json()["ranked"][49]
        cursor = Cursor(-row["platform_shifted_pit"], row["run_id"], row["submission"]).text()
        board = BOARD[0]
        paths = (board, "/api/leaderboard/", f"{board}?page=2", f"/api/leaderboard/?after={cursor}")
        assert "+" not in cursor
        for path in paths:
            cache.clear()  # each page read from the stored board, not from the cache
            near.clear()
            with CaptureQueriesContext(connection) as queries:
                response = Client().get(path)
            assert response.status_code == 200, (path, response.content[:300])
            counts[path.split("after=")[0], size] = len(queries)
    for path in (board, "/api/leaderboard/", f"{board}?page=2", "/api/leaderboard/?"):
        assert counts[path, 100] == counts[path, 10_000], counts


def test_one_render_per_change_and_never_a_page_from_before_a_run_was_hidden(
    scored: Run, staff: User
) -> None:
    from pitweb.board import cache as boardcache
    from pitweb.board.stamp import board_stamp

    runs = spread(scored, 3)
    filters = pinned_filters()
    first = Client().get(BOARD[0]).content.decode()
    assert runs[0].run_id in first
    # a change: while another request renders the new page, visitors get the last one
    Run.objects.filter(pk=runs[1].pk).update(flag="under review")
    services.board_changed()
    key = boardcache.key("board-page", board_stamp(), filters)
    assert key is not None and cache.get(key.exact) is None
    cache.add(f"{key.exact}:rendering", 1)
    with queries_apart() as spent:
        assert Client().get(BOARD[0]).content.decode() == first
    assert len(spent.site) <= 4, spent.site  # the stamp and the facets: no board read, no render
    cache.delete(f"{key.exact}:rendering")
    assert "under review" in Client().get(BOARD[0]).content.decode()
    # a run hidden: the pages from before are never served again, even meanwhile
    services.run_set_hidden(run=runs[0], staff=staff, hidden=True, reason="a test hides it")
    key = boardcache.key("board-page", board_stamp(), filters)
    assert key is not None
    cache.add(f"{key.exact}:rendering", 1)
    assert runs[0].run_id not in Client().get(BOARD[0]).content.decode()
    for path in ("/api/leaderboard/", "/api/leaderboard/?page=1"):
        assert runs[0].run_id not in Client().get(path).content.decode()


def test_a_cached_board_is_served_on_one_query_and_at_most_one_cache_read(
    scored: Run, settings: Any
) -> None:
    spread(scored, 3)
    paths = (BOARD[0], f"{BOARD[0]}chart.json", "/api/leaderboard/", "/api/leaderboard/?all=1")
    first = {path: Client().get(path).content for path in paths}
    for path in paths:
        near.clear()  # as another server process finds it: in the shared cache
        for reads_wanted in (1, 0):  # then from its own copy
            with queries_apart() as spent:
                assert Client().get(path).content == first[path]
            assert len(spent.site) == 1, spent.site  # the board's stamp
            reads = spent.reads()
            assert len(reads) == reads_wanted and "facets" not in str(reads), reads
    # the stamp read once per interval: no query at all
    settings.PITWEB_BOARD_STAMP_MS = 60_000
    for path in paths:
        for queries_wanted in (1, 0):
            with queries_apart() as spent:
                assert Client().get(path).content == first[path]
            assert len(spent.site) <= queries_wanted and len(spent.reads()) <= 1, spent
    # a query the board does not link to misses, is judged by the facets, and is never
    # stored: asked again, it is judged again
    for _ in range(2):
        with queries_apart() as spent:
            assert Client().get("/api/leaderboard/", {"form": "NOT-A-FORM"}).status_code == 200
        assert any("facets" in str(key) for key in spent.reads()), spent.reads()


def test_a_board_that_changes_often_is_rendered_once_per_interval_but_a_hide_at_once(
    scored: Run, staff: User, settings: Any
) -> None:
    settings.PITWEB_BOARD_RENDER_MS = 60_000
    runs = spread(scored, 3)
    first = Client().get(BOARD[0]).content.decode()
    api = Client().get("/api/leaderboard/").json()
    # changes within the interval: the last render is served, nothing is read or drawn
    for n in range(3):
        Run.objects.filter(pk=runs[1].pk).update(flag=f"under review {n}")
        services.board_changed(runs=[runs[1].pk])
        with queries_apart() as spent:
            assert Client().get(BOARD[0]).content.decode() == first
        assert len(spent.site) <= 4, spent.site  # the stamp and the facets: no read, no render
        assert Client().get("/api/leaderboard/").json() == api
    # past the interval the page is drawn again
    settings.PITWEB_BOARD_RENDER_MS = 0
    assert "under review 2" in Client().get(BOARD[0]).content.decode()
    settings.PITWEB_BOARD_RENDER_MS = 60_000
    # a run hidden: the last render is from before, so it is never served again
    services.run_set_hidden(run=runs[0], staff=staff, hidden=True, reason="a test hides it")
    assert runs[0].run_id not in Client().get(BOARD[0]).content.decode()
    assert runs[0].run_id not in Client().get("/api/leaderboard/").content.decode()


def test_a_signed_in_board_computed_from_the_runs_pages_by_the_same_keys(
    scored: Run, submitter: User
) -> None:
    spread(scored, 230)
    mine = Client()
    mine.force_login(submitter)  # their board holds their own runs: computed, not stored
    for client in (Client(), mine):
        first = client.get("/api/leaderboard/").json()
        second = client.get("/api/leaderboard/", {"after": first["pagination"]["next"]}).json()
        assert [r["position"] for r in second["ranked"]] == list(range(101, 201))
        back = client.get("/api/leaderboard/", {"before": second["pagination"]["previous"]})
        assert [r["run_id"] for r in back.json()["ranked"]] == [
            r["run_id"] for r in first["ranked"]
        ]
    public = Client().get("/api/leaderboard/", {"page": 2}).json()["ranked"]
    assert [r["run_id"] for r in second["ranked"]] == [r["run_id"] for r in public]
