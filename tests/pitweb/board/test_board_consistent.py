"""Every board read takes its rows and its ranks from one consistent read: a run ranked
or unranked by another connection between the reader's queries never makes an export
fail, nor attaches a rank to another run's row."""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.test import Client

from harness.receipt.attempts import family_interval
from harness.receipt.rescore import Tails
from pitweb.board import selectors, stored_pages
from pitweb.board import store as boardstore
from pitweb.pricing.models import PlatformScore
from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.board.test_board_store import scored, spread  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def elsewhere(change: Callable[[], None]) -> None:
    """``change`` made and committed on another connection (another thread's), now."""

    def run() -> None:
        try:
            change()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def between_ranks_and_rows(monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]) -> None:
    """``change`` committed elsewhere once a board's ranks are read and before its rows
    are: the moment a verification landed in the load test."""
    original = selectors.Ranks.__init__

    def ranks_then_change(self: selectors.Ranks, ranked: Any) -> None:
        original(self, ranked)
        elsewhere(change)

    monkeypatch.setattr(selectors.Ranks, "__init__", ranks_then_change)


def own_interval(submission: int) -> list[float]:
    """The run's own interval (each run here is a family of its own: one attempt)."""
    score = PlatformScore.objects.get(run_id=submission)
    assert score.shifted_pit_tails is not None
    return list(family_interval(Tails.from_json(score.shifted_pit_tails), 1))


@pytest.fixture()
def board(scored: Run) -> tuple[Run, Run]:  # noqa: F811
    """Seven scored runs, six ranked; the best of them still being verified (ranked once
    it is), and the lowest of the spread, whose verification is about to fail."""
    runs = spread(scored, 6)
    late, falling = runs[5], runs[0]
    Run.objects.filter(pk=late.pk).update(status="verifying", verification_level="self_reported")
    services.board_changed()
    return late, falling


def verified_and_refuted(late: Run, falling: Run, template: Run) -> Callable[[], None]:
    def change() -> None:
        Run.objects.filter(pk=late.pk).update(
            status=template.status, verification_level=template.verification_level
        )
        Run.objects.filter(pk=falling.pk).update(
            status="mismatch", verification_level="self_reported"
        )

    return change


def verified(late: Run, template: Run) -> Callable[[], None]:
    def change() -> None:
        Run.objects.filter(pk=late.pk).update(
            status=template.status, verification_level=template.verification_level
        )

    return change


def postgres_only() -> None:
    if connection.vendor != "postgresql":
        # on SQLite a read's transaction takes the write lock as it begins (transaction
        # mode IMMEDIATE): no other connection can commit between its reads at all
        pytest.skip("a second connection's commit between two reads needs PostgreSQL")


@pytest.mark.parametrize("what", ["ranked", "ranked_and_refuted"])
def test_an_export_read_while_runs_are_verified_gives_each_row_its_own_rank(
    board: tuple[Run, Run], scored: Run, monkeypatch: pytest.MonkeyPatch, what: str,  # noqa: F811
) -> None:  # fmt: skip
    postgres_only()
    late, falling = board
    template = Run.objects.get(pk=scored.pk)
    change = verified(late, template) if what == "ranked" else (
        verified_and_refuted(late, falling, template)
    )  # fmt: skip
    between_ranks_and_rows(monkeypatch, change)
    response = Client().get("/api/leaderboard/", {"all": "1"})
    assert response.status_code == 200
    ranked = response.json()["ranked"]
    assert [r["position"] for r in ranked] == list(range(1, len(ranked) + 1))
    for row in ranked:
        assert row["ranked_interval"] == pytest.approx(own_interval(row["submission"]))


@pytest.mark.parametrize("url", ["/api/leaderboard.csv", "/leaderboard.csv"])
def test_a_csv_export_read_while_runs_are_verified_labels_each_row_with_its_own_rank(
    board: tuple[Run, Run], scored: Run, monkeypatch: pytest.MonkeyPatch, url: str,  # noqa: F811
) -> None:  # fmt: skip
    postgres_only()
    late, falling = board
    template = Run.objects.get(pk=scored.pk)
    between_ranks_and_rows(monkeypatch, verified_and_refuted(late, falling, template))
    response = Client().get(url, follow=True)  # the old address: on to its benchmark's CSV
    assert response.status_code == 200
    rows = [
        r
        for r in csv.DictReader(io.StringIO(response.content.decode()))
        if r["section"] == "ranked"
    ]
    assert rows
    for row in rows:
        low, high = own_interval(Run.objects.get(run_id=row["run_id"]).pk)
        assert float(row["ranked_interval_low"]) == pytest.approx(low)
        assert float(row["ranked_interval_high"]) == pytest.approx(high)


def test_a_signed_in_board_page_read_while_a_run_is_ranked_answers(
    board: tuple[Run, Run], scored: Run, submitter: User, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:  # fmt: skip
    postgres_only()
    late, falling = board
    template = Run.objects.get(pk=scored.pk)
    between_ranks_and_rows(monkeypatch, verified_and_refuted(late, falling, template))
    client = Client()
    client.force_login(submitter)
    response = client.get("/api/leaderboard/")
    assert response.status_code == 200
    for row in response.json()["ranked"]:
        assert row["ranked_interval"] == pytest.approx(own_interval(row["submission"]))


def ranked_view(board: dict[str, Any]) -> tuple[Any, ...]:
    rows = [(r["run_id"], r["rank"], r["position"]) for r in board["ranked"]]
    return board["pagination"]["ranked_total"], rows


def test_a_stored_board_page_read_while_a_computation_lands_is_one_board(
    board: tuple[Run, Run], scored: Run, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:  # fmt: skip
    postgres_only()
    late, _ = board
    template = Run.objects.get(pk=scored.pk)
    # the stored board as the anonymous board reads it (its page cache aside)
    before = selectors.leaderboard(user=AnonymousUser())

    def verified_and_computed() -> None:
        verified(late, template)()
        services.board_changed(runs=[late.pk])
        boardstore.refresh_all()

    original = stored_pages._page_entries

    def computation_then_entries(*args: Any) -> Any:
        elsewhere(verified_and_computed)  # after the board's row is read, before its entries
        return original(*args)

    monkeypatch.setattr(stored_pages, "_page_entries", computation_then_entries)
    during = selectors.leaderboard(user=AnonymousUser())
    monkeypatch.setattr(stored_pages, "_page_entries", original)
    after = selectors.leaderboard(user=AnonymousUser())
    assert ranked_view(before) != ranked_view(after)  # the computation moved the board
    assert ranked_view(during) in (ranked_view(before), ranked_view(after))
