"""The site run like a service: errors in one envelope, every 500 logged with its
traceback, exports that a spreadsheet cannot turn into formulas."""

from __future__ import annotations

import csv
import io
import logging
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from pitweb.runs import services
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("path", ["/api/nope/", "/api/runs/" + "0" * 64 + "/", "/api/jobs/999999/"])
def test_every_api_404_is_the_json_envelope(path: str) -> None:
    response = Client().get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found", response.content


def test_a_server_error_is_logged_with_its_traceback_and_answered_in_the_envelope(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pitweb.runs import selectors

    def boom(**kwargs: Any) -> Any:
        raise RuntimeError("the board broke")

    monkeypatch.setattr(selectors, "leaderboard", boom)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("django.request")
    assert any(isinstance(h, logging.StreamHandler) for h in logger.handlers)  # to stderr
    logger.addHandler(handler)
    try:
        response = Client(raise_request_exception=False).get("/api/leaderboard/")
    finally:
        logger.removeHandler(handler)
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"
    assert "the board broke" not in response.content.decode()  # the traceback is not served
    [record] = [r for r in records if r.levelno >= logging.ERROR]
    assert record.exc_info and "the board broke" in str(record.exc_info[1])


def test_csv_exports_neutralise_formulas(
    priced_release: Any, submitter: User, staff: User, stub_run: Artifacts
) -> None:
    files = stub_run.files()
    run = services.run_submit(
        user=submitter,
        receipt=files["receipt"],
        trajectory=files["trajectory"],
        prices=files["prices"],
    ).run
    services.run_set_flag(
        run=run,
        staff=staff,
        flag='=HYPERLINK("http://evil.example","x")',
        reason="+cmd|' /C calc'!A0",
    )
    board = list(csv.DictReader(io.StringIO(Client().get("/leaderboard.csv").content.decode())))
    assert board[0]["flag"] == '\'=HYPERLINK("http://evil.example","x")'
    events = Client().get("/changelog/?format=csv").content.decode()
    assert "'+cmd" in events and "\n+cmd" not in events and ",+cmd" not in events
