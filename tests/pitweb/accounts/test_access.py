"""Who may see and do what: anonymous, the submitter, another submitter, staff."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from pitweb.board.query import SECTIONS
from pitweb.core.models import AuditEvent
from pitweb.runs import services
from pitweb.runs.models import Run, VerificationJob
from tests.pitweb.conftest import Artifacts, submit_run, token_client

pytestmark = pytest.mark.django_db(transaction=True)


def api_as(who: str, users: dict[str, User | None]) -> APIClient:
    user = users[who]
    return APIClient() if user is None else token_client(user)


def page_as(who: str, users: dict[str, User | None]) -> Client:
    client = Client()
    if users[who] is not None:
        client.force_login(users[who])  # type: ignore[arg-type]
    return client


@pytest.fixture()
def users(submitter: User, other: User, staff: User) -> dict[str, User | None]:
    return {"anonymous": None, "submitter": submitter, "other": other, "staff": staff}


READ_PRIVATE = {"anonymous": 404, "submitter": 200, "other": 404, "staff": 200}


@pytest.mark.parametrize("who", list(READ_PRIVATE))
def test_private_run_api_and_page(
    who: str, users: dict[str, User | None], private_run: Run
) -> None:
    sha = private_run.body_sha256.removeprefix("sha256:")
    assert api_as(who, users).get(f"/api/runs/{sha}/").status_code == READ_PRIVATE[who]
    for path in (
        f"/runs/{sha}/",
        f"/runs/{sha}/cells.json",
        f"/runs/{sha}/status.json",
        f"/runs/{sha}/download/trajectory",
    ):
        assert page_as(who, users).get(path).status_code == READ_PRIVATE[who], path
    job = private_run.jobs.get()
    assert api_as(who, users).get(f"/api/jobs/{job.pk}/").status_code == READ_PRIVATE[who]


@pytest.mark.parametrize("who", list(READ_PRIVATE))
def test_private_runs_stay_out_of_lists_and_leaderboards(
    who: str, users: dict[str, User | None], private_run: Run
) -> None:
    listed = {r["run_id"] for r in api_as(who, users).get("/api/runs/").json()}
    assert (private_run.run_id in listed) == (READ_PRIVATE[who] == 200)
    board = api_as(who, users).get("/api/leaderboard/").json()
    on_board = {r["run_id"] for section in SECTIONS for r in board[section]}
    assert (private_run.run_id in on_board) == (READ_PRIVATE[who] == 200)
    csv_text = api_as(who, users).get("/api/leaderboard.csv").content.decode()
    assert (private_run.run_id in csv_text) == (READ_PRIVATE[who] == 200)


WRITE = {"anonymous": 401, "submitter": 403, "other": 403, "staff": 202}


@pytest.mark.parametrize("who", list(WRITE))
def test_reverify_api_is_staff_only(
    who: str, users: dict[str, User | None], private_run: Run
) -> None:
    sha = private_run.body_sha256.removeprefix("sha256:")
    response = api_as(who, users).post(
        f"/api/runs/{sha}/reverify/", {"reason": "audit"}, format="json"
    )
    assert response.status_code == WRITE[who]
    assert VerificationJob.objects.filter(run=private_run).count() == (2 if who == "staff" else 1)
    if who != "staff":
        assert response.json()["error"]["code"] in ("not_authenticated", "permission_denied")


@pytest.mark.parametrize("who", list(WRITE))
@pytest.mark.parametrize("action", ["reverify", "hide", "flag", "requeue"])
def test_staff_page_actions_are_staff_only(
    who: str, action: str, users: dict[str, User | None], private_run: Run
) -> None:
    sha = private_run.body_sha256.removeprefix("sha256:")
    response = page_as(who, users).post(
        f"/runs/{sha}/staff/{action}", {"reason": "because", "confirm": "yes", "flag": "x"}
    )
    if who == "staff":
        assert (
            response.status_code == 302
            and response.url == f"/runs/{sha}/?submission={private_run.pk}"
        )
    else:
        if who == "anonymous":  # to the site's sign-in, and back after it
            assert response.status_code == 302
            assert response.url.startswith("/accounts/login/?next=/runs/")
        else:  # signed in without the right: refused
            assert response.status_code == 403
        assert AuditEvent.objects.count() == 0
        private_run.refresh_from_db()
        assert not private_run.hidden and not private_run.flag


def test_upload_needs_a_token_and_a_valid_one(registered: Any, stub_run: Artifacts) -> None:
    anonymous = APIClient().post("/api/runs/", stub_run.files(), format="multipart")
    assert anonymous.status_code == 401
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token pit_not-a-token")
    response = bad.post("/api/runs/", stub_run.files(), format="multipart")
    assert (
        response.status_code == 401 and response.json()["error"]["code"] == "authentication_failed"
    )
    assert Run.objects.count() == 0


def test_tokens_are_stored_hashed(submitter: User) -> None:
    from pitweb.accounts.models import ApiToken
    from pitweb.accounts.services import token_issue

    token = token_issue(user=submitter)
    stored = ApiToken.objects.get(user=submitter)
    assert token not in (stored.key_hash, stored.prefix) and len(stored.key_hash) == 64
    assert stored.prefix == token[:8]


def test_hidden_public_run_leaves_the_board_with_a_public_reason(
    registered: Any, submitter: User, staff: User, stub_run: Artifacts
) -> None:
    run = submit_run(submitter, stub_run)
    services.run_set_hidden(
        run=run, staff=staff, hidden=True, reason="duplicate of an earlier entry"
    )
    board = APIClient().get("/api/leaderboard/").json()
    assert not any(r["run_id"] == run.run_id for section in SECTIONS for r in board[section])
    log = Client().get("/changelog/?format=json").json()["events"]
    assert log[0]["action"] == "hide" and log[0]["reason"] == "duplicate of an earlier entry"
    assert (
        page_as("submitter", {"submitter": submitter})
        .get(f"/runs/{run.body_sha256[7:]}/")
        .status_code
        == 200
    )


def test_staff_look_things_up_on_read_only_admin_pages(staff: User, submitter: User) -> None:
    from django.test import Client

    client = Client()
    client.force_login(staff)
    for model in (
        "runs/run",
        "runs/verificationjob",
        "pricing/platformscore",
        "core/auditevent",
        "releases/release",
        "releases/referenceprices",
        "accounts/apitoken",
    ):
        listing = client.get(f"/admin/{model}/?q=x")
        assert listing.status_code == 200, model
        assert client.get(f"/admin/{model}/add/").status_code == 403, model
    outsider = Client()
    outsider.force_login(submitter)
    assert outsider.get("/admin/runs/run/").status_code == 302  # to the login page
