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
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("path", ["/api/nope/", "/api/runs/" + "0" * 64 + "/", "/api/jobs/999999/"])
def test_every_api_404_is_the_json_envelope(path: str) -> None:
    response = Client().get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found", response.content


def test_a_server_error_is_logged_with_its_traceback_and_answered_in_the_envelope(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pitweb.board import selectors

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
    run = submit_run(submitter, stub_run)
    services.run_set_flag(
        run=run,
        staff=staff,
        flag='=HYPERLINK("http://evil.example","x")',
        reason="+cmd|' /C calc'!A0",
    )
    board = list(
        csv.DictReader(io.StringIO(Client().get("/leaderboard.csv", follow=True).content.decode()))
    )
    assert board[0]["flag"] == '\'=HYPERLINK("http://evil.example","x")'
    events = Client().get("/changelog/?format=csv").content.decode()
    assert "'+cmd" in events and "\n+cmd" not in events and ",+cmd" not in events


PUBLIC = [
    "/",
    "/benchmarks/",
    "/leaderboard.csv",
    "/compare/",
    "/methodology/",
    "/changelog/",
    "/status/",
    "/api/runs/",
    "/api/leaderboard/",
    "/api/leaderboard.csv",
]
WITH_IDS = [
    "/runs/{x}/",
    "/runs/{x}/cells.json",
    "/runs/{x}/tables/cells",
    "/runs/{x}/status.json",
    "/runs/{x}/download/receipt",
    "/releases/{x}/",
    "/api/runs/{x}/",
    "/api/releases/{x}/prices/",
]


@pytest.mark.parametrize(
    "url",
    [f"{p}?release=%00" for p in PUBLIC]
    + [f"{p}?form=%ff%fe" for p in PUBLIC]
    + [f"/?{key}=a%00b" for key in ("form", "start", "end", "page", "isolated")]
    + ["/compare/?runs=%00", "/compare/?run=ab%00"]
    + [p.format(x="%00") for p in WITH_IDS]
    + [p.format(x="ab%00cd") for p in WITH_IDS],
)
def test_nul_bytes_and_undecodable_input_are_a_400_on_every_public_url(
    url: str, priced_release: Any
) -> None:
    response = Client().get(url)
    assert response.status_code == 400, (url, response.status_code)
    if url.startswith("/api/"):
        assert response.json()["error"]["code"] == "unreadable_input"


def test_a_nul_byte_in_a_staff_form_is_a_400_and_changes_nothing(
    priced_release: Any, submitter: User, staff: User, stub_run: Artifacts
) -> None:
    from pitweb.core.models import AuditEvent
    from pitweb.runs.models import Run

    run = submit_run(submitter, stub_run)
    client = Client()
    client.force_login(staff)
    url = f"/runs/{run.body_sha256[7:]}/staff/flag"
    # as a browser sends the form (urlencoded): refused before the view
    response = client.post(
        url,
        "flag=x%00y&reason=r&confirm=yes",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 400
    # as multipart: the service refuses it, and the page says so
    response = client.post(url, {"flag": "x\x00y", "reason": "r", "confirm": "yes"}, follow=True)
    assert "flag holds a NUL byte" in response.content.decode()
    assert Run.objects.get(pk=run.pk).flag == "" and not AuditEvent.objects.filter(run=run).exists()


def test_the_upload_throttle_holds_across_three_gunicorn_workers(
    submitter: User, artifact_dir: Any, tmp_path: Any
) -> None:
    """Throttles count in the shared cache, not per process: three workers at 3/hour
    let three uploads through, not nine."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    from pitweb.accounts.services import token_issue
    from tests.pitweb.jobs.test_worker_integration import REPO, worker_env

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**worker_env(artifact_dir), "PITWEB_UPLOAD_RATE": "3/hour", "DJANGO_DEBUG": "true"}
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115 - owned by the process
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "pitweb.wsgi", "--workers", "3",
         "--bind", f"127.0.0.1:{port}"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    token = token_issue(user=submitter)
    try:
        # ready once a worker answers; three workers booting on a busy machine may take
        # longer than one read's timeout, which is a reason to ask again, not a failure
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/leaderboard/", timeout=30)
                break
            except OSError:  # refused, reset or timed out (URLError is an OSError)
                if time.monotonic() > deadline:
                    raise AssertionError((tmp_path / "gunicorn.log").read_text()) from None
                time.sleep(0.2)
        statuses = []
        for _ in range(12):  # a fresh connection each time: the requests spread over workers
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/runs/",
                data=b"",
                method="POST",
                headers={
                    "Authorization": f"Token {token}",
                    "Content-Type": "multipart/form-data; boundary=x",
                },
            )
            try:
                statuses.append(urllib.request.urlopen(request, timeout=60).status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    assert statuses.count(429) == 9 and statuses[:3] == [400, 400, 400], statuses
    workers = {
        line
        for line in (tmp_path / "gunicorn.log").read_text().splitlines()
        if "Booting worker" in line
    }
    assert len(workers) == 3


def test_error_pages_are_styled_pages_of_the_site(settings: Any) -> None:
    settings.DEBUG = False
    page = Client().get("/runs/" + "0" * 64 + "/")
    assert page.status_code == 404
    text = page.content.decode()
    assert "<h1>Not found</h1>" in text and "pitweb" in text and "site.css" in text
    bad = Client().get("/benchmarks/?start=%00", follow=True)
    assert bad.status_code == 400
