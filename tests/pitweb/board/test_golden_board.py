"""The board API for the demo data, kept as golden files (with the values a database or
a clock assigns set to a placeholder), so that regrouping the site cannot change what
the board says unseen: the deliberate cheat flagged as a score from memory, the ranks
that tell the main benchmark's agents apart. ``PIT_GOLDEN_UPDATE=1`` rewrites them."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from tests.support.golden import VOLATILE, matches

pytestmark = pytest.mark.django_db(transaction=True)
# what the database or the clock assigns (ids, times, ages), and the body hash of a demo
# run, which covers what the sandbox found on this machine (tests/harness/test_golden.py
# keeps the bodies themselves)
ASSIGNED = re.compile(r"^(id|pk|job|submission|family|body_sha256|age)$|_at$|_seconds$")


# the model-calling agent's run id binds its model endpoint, which names the port the
# demo's trading model happened to listen on
PORT_BOUND = "model_agent:agent"


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: VOLATILE
            if (ASSIGNED.search(k) or (k == "run_id" and value.get("agent") == PORT_BOUND))
            and not isinstance(v, (dict, list))
            else _steady(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_steady(v) for v in value]
    if isinstance(value, str):
        value = re.sub(r"submission=\d+", "submission=N", value)
        value = re.sub(r"^/families/\d+/$", "/families/N/", value)
        return re.sub(r"/runs/[0-9a-f]{64}", "/runs/" + VOLATILE, value)  # a body hash in a link
    return value


def _golden(name: str, board: dict[str, Any]) -> None:
    matches(name, json.dumps(_steady(board), indent=1, sort_keys=True) + "\n")


def test_the_demo_boards_api_answers_are_golden(settings: Any, tmp_path: Path) -> None:
    """The whole board (its benchmarks grouped, nothing ranked across them) and the main
    benchmark's own (hold 5, where ranks are drawn), both at the size ``make demo``
    seeds: the boards a newcomer sees."""
    settings.VAR_DIR = tmp_path
    call_command("demo_seed", stdout=io.StringIO())
    board = Client().get("/api/leaderboard/").json()
    _golden("demo-board.json", board)
    # hold 5 without a fault plan (the demo's run under one is a benchmark of its own)
    [main] = [
        b["key"]
        for b in board["benchmarks"]
        if b["hold_sessions"] == 5 and "under fault plan" not in b["name"]
    ]
    ranked = Client().get("/api/leaderboard/", {"benchmark": main}).json()
    _golden("demo-board-main.json", ranked)
    # what the goldens must keep saying: the cheat's main arm beat its shifted arm by more
    # than chance at the pit clock, flagged on its row; no honest run flagged; ranks apart
    flagged = [r for r in ranked["ranked"] if r["memory_verdict"] == "score_from_memory"]
    assert [r["agent"].split()[1] for r in flagged] == ["memory_cheat.py"]
    assert (
        flagged[0]["platform_delta_shifted_pit"] > flagged[0]["platform_delta_shifted_pit_low"] > 0
    )
    honest = [r for r in ranked["ranked"] + ranked["unranked"] if r not in flagged]
    assert honest and {r["memory_verdict"] for r in honest} == {"no_sign_of_memory"}
    assert len({r["rank"] for r in ranked["ranked"]}) > 1
