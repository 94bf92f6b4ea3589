"""The board filtered to post-cutoff runs (``?cutoff=post``): the runs whose window lies
wholly after their model's declared training cutoff, on the API, the page and the CSV,
public (from its stored copy) or signed in (computed); any other value a 400. A board
drawn without the filter keeps the key and snapshot filters it always had."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client

from harness import canonical
from pitweb.board.filters import board_filters, board_key, filters_key, normalised, pinned
from pitweb.board.query import SECTIONS
from pitweb.board.services import snapshot_publish
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture()
def four(
    priced_release: Any, submitter: User, other: User, staff: User, picky_run: Artifacts,
    crossing_run: Artifacts, pre_cutoff_run: Artifacts, stub_run: Artifacts, settings: Any,
) -> dict[str, Run]:  # fmt: skip
    """One benchmark's runs, one per relation, each of its own family (submitter and
    agent), so each has a row of its own on the board."""
    settings.PITWEB_MIN_RANKED_TRADES = 1
    return {
        "post_cutoff": submit_run(submitter, picky_run),
        "crossing": submit_run(other, crossing_run),
        "pre_cutoff": submit_run(submitter, pre_cutoff_run),
        "": submit_run(staff, stub_run),
    }


def _ids(board: dict[str, Any]) -> set[str]:
    return {row["run_id"] for name in SECTIONS for row in board[name]}


def _key(runs: dict[str, Run]) -> str:
    [key] = {r.benchmark.key for r in runs.values() if r.benchmark}
    return key


def test_the_api_keeps_only_post_cutoff_runs(four: dict[str, Run]) -> None:
    everything = Client().get("/api/leaderboard/", {"benchmark": _key(four)}).json()
    assert _ids(everything) == {r.run_id for r in four.values()}
    assert {r["cutoff_relation"] for n in SECTIONS for r in everything[n]} == {
        "post_cutoff", "crossing", "pre_cutoff", None,
    }  # fmt: skip
    for params in ({"benchmark": _key(four)}, {}, {"all": "1"}):
        post = Client().get("/api/leaderboard/", {**params, "cutoff": "post"}).json()
        assert _ids(post) == {four["post_cutoff"].run_id}, params
        [row] = [r for n in SECTIONS for r in post[n]]
        assert row["cutoff_relation"] == "post_cutoff" and row["training_cutoff"] == "2022-12-31"


def test_a_signed_in_board_is_filtered_too(four: dict[str, Run], submitter: User) -> None:
    client = Client()
    client.force_login(submitter)
    post = client.get("/api/leaderboard/", {"benchmark": _key(four), "cutoff": "post"}).json()
    assert _ids(post) == {four["post_cutoff"].run_id}


def test_the_page_and_its_csv_keep_only_post_cutoff_runs(four: dict[str, Run]) -> None:
    page = Client().get(f"/benchmarks/{_key(four)}/", {"cutoff": "post"}).content.decode()
    assert four["post_cutoff"].run_id in page
    assert not any(four[r].run_id in page for r in ("crossing", "pre_cutoff", ""))
    assert 'name="cutoff" value="post" checked' in page
    plain = Client().get(f"/benchmarks/{_key(four)}/").content.decode()
    assert all(r.run_id in plain for r in four.values())
    assert 'name="cutoff" value="post" >' in plain  # offered, not ticked
    # the filter is carried on to the one benchmark it reaches, and into its exports
    sent = Client().get("/benchmarks/", {"cutoff": "post"})
    assert sent.status_code == 302 and sent["Location"].endswith(f"/{_key(four)}/?cutoff=post")
    text = Client().get(f"/benchmarks/{_key(four)}/leaderboard.csv", {"cutoff": "post"})
    rows = list(csv.DictReader(io.StringIO(text.content.decode())))
    assert [(r["run_id"], r["cutoff_relation"]) for r in rows] == [
        (four["post_cutoff"].run_id, "post_cutoff")
    ]


@pytest.mark.parametrize("value", ["pre", "POST", "post_cutoff", "1", "x" * 500])
def test_a_bad_cutoff_is_a_clear_400(four: dict[str, Run], value: str) -> None:
    key = _key(four)
    answer = Client().get("/api/leaderboard/", {"cutoff": value})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_cutoff"
    assert "post" in answer.json()["error"]["message"]
    for address in (f"/benchmarks/{key}/", "/benchmarks/", f"/benchmarks/{key}/leaderboard.csv",
                    "/api/leaderboard.csv"):  # fmt: skip
        assert Client().get(address, {"cutoff": value}).status_code == 400, address


def test_a_board_without_the_filter_keeps_its_key_and_snapshot_filters() -> None:
    """The key and the snapshot filters as they were written before the filter existed."""
    user = AnonymousUser()
    for params in ({}, {"release": "r", "isolated": "1"}, {"benchmark": "a" * 32, "start": ""}):
        parsed = board_filters(params, user)
        before = {
            n: parsed.get(n) or None for n in ("benchmark", "release", "form", "start", "end")
        }
        before["isolated"] = bool(parsed.get("isolated"))
        text = json.dumps(before, sort_keys=True, separators=(",", ":"))
        assert board_key(parsed) == hashlib.sha256(text.encode()).hexdigest()
        assert filters_key(parsed) == canonical.dumps(before)
        assert normalised(pinned("b" * 32, parsed)).keys() == before.keys()
        with_cutoff = board_filters({**params, "cutoff": "post"}, user)
        assert normalised(with_cutoff) == before | {"cutoff": "post"}
        assert board_key(with_cutoff) != board_key(parsed)


def test_a_snapshot_of_the_filtered_board_holds_only_post_cutoff_runs(
    four: dict[str, Run], staff: User
) -> None:
    snapshot = snapshot_publish(
        filters={"benchmark": _key(four), "cutoff": "post"}, reason="holdouts", staff=staff
    )
    assert json.loads(snapshot.filters_key)["cutoff"] == "post"
    content = json.loads(snapshot.content)
    assert _ids(content["board"]) == {four["post_cutoff"].run_id}
    whole = snapshot_publish(filters={"benchmark": _key(four)}, reason="all", staff=staff)
    assert "cutoff" not in json.loads(whole.filters_key)
