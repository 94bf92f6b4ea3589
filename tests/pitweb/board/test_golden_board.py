"""The board API for the demo data, kept as a golden file (with the values a database or
a clock assigns set to a placeholder), so that regrouping the site cannot change what
the board says unseen. ``PIT_GOLDEN_UPDATE=1`` rewrites it."""

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


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: VOLATILE if ASSIGNED.search(k) and not isinstance(v, (dict, list)) else _steady(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_steady(v) for v in value]
    if isinstance(value, str):
        value = re.sub(r"submission=\d+", "submission=N", value)
        value = re.sub(r"^/families/\d+/$", "/families/N/", value)
        return re.sub(r"/runs/[0-9a-f]{64}", "/runs/" + VOLATILE, value)  # a body hash in a link
    return value


def test_the_demo_boards_api_answer_is_golden(settings: Any, tmp_path: Path) -> None:
    settings.VAR_DIR = tmp_path
    call_command("demo_seed", rows=3000, stdout=io.StringIO())
    board = Client().get("/api/leaderboard/").json()
    matches("demo-board.json", json.dumps(_steady(board), indent=1, sort_keys=True) + "\n")
