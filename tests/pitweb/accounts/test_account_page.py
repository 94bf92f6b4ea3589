"""The account page: API tokens (created and shown once, named, last used, revoked) and
what the person owns (runs, private ones included; answer sets; executions; families);
the owner's withdrawal from the run page; staff pages closed to submitters."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from pitweb.accounts.models import ApiToken
from pitweb.core.models import AuditEvent
from pitweb.execution.models import ExecutionJob, RegisteredAgent
from pitweb.points.models import AnswerSet, PointSet
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db(transaction=True)


def signed_in(user: User, password: str) -> Client:
    """A client signed in through the site's own form (not force_login)."""
    client = Client()
    response = client.post("/accounts/login/", {"username": user.username, "password": password})
    assert response.status_code == 302, response.content.decode()[:500]
    return client


def created_token(client: Client, name: str) -> str:
    response = client.post("/accounts/tokens/", {"name": name})
    assert response.status_code == 200 and response["Cache-Control"].startswith("max-age=0")
    found = re.search(r'value="(pit_[^"]+)"', response.content.decode())
    assert found is not None
    return found.group(1)


def api(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_the_account_page_needs_a_signed_in_account() -> None:
    response = Client().get("/accounts/")
    assert response.status_code == 302 and response.url == "/accounts/login/?next=/accounts/"


def test_a_token_is_shown_once_named_and_works_against_the_api(submitter: User) -> None:
    client = signed_in(submitter, "pw-alice")
    token = created_token(client, "laptop")
    stored = ApiToken.objects.get(user=submitter)
    assert stored.name == "laptop" and token not in (stored.key_hash, stored.prefix)
    page = client.get("/accounts/").content.decode()
    assert token not in page and "laptop" in page and stored.prefix in page and "never" in page
    assert api(token).get("/api/runs/").status_code == 200
    stored.refresh_from_db()
    assert stored.last_used_at is not None
    assert "never" not in client.get("/accounts/").content.decode().split('id="runs"')[0]


def test_a_revoked_token_is_refused_by_the_api(submitter: User) -> None:
    client = signed_in(submitter, "pw-alice")
    token = created_token(client, "ci")
    assert api(token).get("/api/runs/").status_code == 200
    stored = ApiToken.objects.get(user=submitter)
    response = client.post(f"/accounts/tokens/{stored.pk}/revoke")
    assert response.status_code == 302 and response.url == "/accounts/#tokens"
    refused = api(token).get("/api/runs/")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "authentication_failed"
    assert "revoked" in client.get("/accounts/").content.decode()


def test_nobody_revokes_another_persons_token(submitter: User, other: User) -> None:
    token = created_token(signed_in(submitter, "pw-alice"), "mine")
    stored = ApiToken.objects.get(user=submitter)
    response = signed_in(other, "pw-bob").post(f"/accounts/tokens/{stored.pk}/revoke", follow=True)
    assert "no such token of yours" in response.content.decode()
    stored.refresh_from_db()
    assert not stored.revoked and api(token).get("/api/runs/").status_code == 200
    assert Client().post(f"/accounts/tokens/{stored.pk}/revoke").status_code == 302  # sign in
    stored.refresh_from_db()
    assert not stored.revoked


def test_a_token_with_a_name_too_long_is_not_created(submitter: User) -> None:
    client = signed_in(submitter, "pw-alice")
    response = client.post("/accounts/tokens/", {"name": "x" * 101}, follow=True)
    assert "Nothing was created" in response.content.decode()
    assert not ApiToken.objects.exists()
    assert client.get("/accounts/tokens/").status_code == 405  # created by a form only


def test_the_account_page_lists_my_private_run_with_its_state_and_link(
    private_run: Run, submitter: User, other: User
) -> None:
    page = signed_in(submitter, "pw-alice").get("/accounts/").content.decode()
    link = f"/runs/{private_run.body_sha256[7:]}/?submission={private_run.pk}"
    assert link in page and private_run.run_id in page
    row = page.split(link)[1].split("</tr>")[0]
    assert "private" in row and private_run.status in row
    assert f"/families/{private_run.family_id}/" in page  # the run's family
    # nobody else's page lists it
    assert private_run.run_id not in signed_in(other, "pw-bob").get("/accounts/").content.decode()


def test_the_account_page_lists_my_answer_sets_and_executions(
    registered: Any, submitter: User, other: User, staff: User, point_set: PointSet
) -> None:
    AnswerSet.objects.create(
        point_set=point_set, sha256="sha256:" + "1" * 64, model="my-reader", origin="uploaded",
        body={}, submitter=submitter,
    )  # fmt: skip
    AnswerSet.objects.create(
        point_set=point_set, sha256="sha256:" + "2" * 64, model="their-reader",
        origin="uploaded", body={}, submitter=other,
    )  # fmt: skip
    agent = RegisteredAgent.objects.create(
        name="mine", owner=submitter, transport="stdio", dialect="pit", digest="sha256:x",
        label="mine",
    )  # fmt: skip
    job = ExecutionJob.objects.create(
        kind="execute", agent=agent, release=registered, config={}, requested_by=staff
    )
    page = signed_in(submitter, "pw-alice").get("/accounts/").content.decode()
    assert "my-reader" in page and "their-reader" not in page
    assert f'href="/executions/{job.pk}/"' in page
    assert (
        f'href="/executions/{job.pk}/"'
        not in signed_in(other, "pw-bob").get("/accounts/").content.decode()
    )


def test_the_account_page_costs_the_same_queries_however_much_is_listed(
    registered: Any, submitter: User, stub_run: Artifacts, django_assert_max_num_queries: Any
) -> None:
    client = signed_in(submitter, "pw-alice")
    with django_assert_max_num_queries(14):
        client.get("/accounts/")
    submit_run(submitter, stub_run)
    for n in range(3):
        created_token(client, f"t{n}")
    with django_assert_max_num_queries(14):
        client.get("/accounts/")


def test_the_owner_withdraws_a_run_from_its_page_after_signing_in(
    private_run: Run, submitter: User
) -> None:
    client = signed_in(submitter, "pw-alice")
    sha = private_run.body_sha256[7:]
    page = client.get(f"/runs/{sha}/").content.decode()
    assert 'id="withdraw-form"' in page
    response = client.post(
        f"/runs/{sha}/withdraw",
        {"submission": private_run.pk, "reason": "superseded", "confirm": "yes"},
    )
    assert response.status_code == 302
    private_run.refresh_from_db()
    assert private_run.withdrawn_at is not None
    assert "withdrawn" in client.get("/accounts/").content.decode()


def test_another_account_cannot_withdraw_the_run(
    private_run: Run, submitter: User, other: User
) -> None:
    sha = private_run.body_sha256[7:]
    stranger = signed_in(other, "pw-bob")
    response = stranger.post(
        f"/runs/{sha}/withdraw", {"submission": private_run.pk, "reason": "x", "confirm": "yes"}
    )
    assert response.status_code == 404
    private_run.refresh_from_db()
    assert private_run.withdrawn_at is None and AuditEvent.objects.count() == 0


@pytest.mark.parametrize(
    ("method", "path", "form"),
    [
        ("get", "/accounts/invitations/", {}),
        ("get", "/points/upload/", {}),
        ("get", "/points/models/", {}),
        ("post", "/snapshots/publish", {"reason": "mine", "confirm": "yes"}),
        ("post", "/agents/do/register", {"name": "x", "owner": "alice", "package": "pit-stdio-python"}),
    ],
)  # fmt: skip
def test_a_signed_in_submitter_cannot_reach_staff_pages_or_actions(
    submitter: User, method: str, path: str, form: dict[str, str]
) -> None:
    client = signed_in(submitter, "pw-alice")
    response = getattr(client, method)(path, form)
    assert response.status_code in (400, 403), path
    assert not RegisteredAgent.objects.exists() and AuditEvent.objects.count() == 0


def test_a_submitter_cannot_act_as_staff_on_their_own_run(
    private_run: Run, submitter: User
) -> None:
    sha = private_run.body_sha256[7:]
    client = signed_in(submitter, "pw-alice")
    for action in ("hide", "flag", "reverify"):
        response = client.post(
            f"/runs/{sha}/staff/{action}", {"reason": "mine", "confirm": "yes", "flag": "best"}
        )
        assert response.status_code == 403, action
    private_run.refresh_from_db()
    assert not private_run.hidden and not private_run.flag and private_run.jobs.count() == 1
