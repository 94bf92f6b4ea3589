"""A submitter's account in a real browser: sent to the site's sign-in (never the
admin's) with the reason, signs in, creates a token that works once shown and is refused
once revoked, sees a private run and withdraws it, cannot reach staff pages; and
sign-in is refused after too many failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts

pytestmark = pytest.mark.django_db(transaction=True)

PUBLIC = ("/", "/methodology/", "/changelog/", "/status/", "/points/", "/accounts/login/")


def _links(page: Any) -> list[str]:
    return list(
        page.eval_on_selector_all(
            "a[href], form[action]", "els => els.map(e => e.getAttribute('href') || e.action)"
        )
    )


def _sign_in(page: Any, username: str, password: str) -> None:
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-form button[type=submit]")


def test_a_submitter_signs_in_manages_a_token_withdraws_a_private_run_and_stays_out_of_staff_pages(
    live_server: Any, page: Any, registered: Any, submitter: User, stub_run: Artifacts,
    screenshots: Path, settings: Any,
) -> None:  # fmt: skip
    settings.PITWEB_SIGNIN_ACCOUNT_LIMIT = 3
    files = stub_run.files()
    run = services.run_submit(
        user=submitter, receipt=files["receipt"], trajectory=files["trajectory"],
        prices=files["prices"],
    ).run  # fmt: skip
    Run.objects.filter(pk=run.pk).update(visibility="private")
    base = live_server.url

    # no public page links to the admin's login, signed out
    for path in PUBLIC:
        page.goto(base + path)
        assert not [h for h in _links(page) if "/admin" in h], path

    # a visitor opening a page that needs an account lands on the site's sign-in, told why
    page.goto(base + "/agents/")
    assert page.url == base + "/accounts/login/?next=/agents/"
    assert "is for signed-in accounts" in page.inner_text("#why-sign-in")
    _sign_in(page, "alice", "pw-alice")
    assert page.url == base + "/agents/"

    # a token, shown once, works against the API
    page.goto(base + "/accounts/")
    page.fill("#id_name", "e2e laptop")
    page.click("#token-form button[type=submit]")
    token = page.input_value("#new-token")
    assert token.startswith("pit_")
    auth = {"Authorization": f"Token {token}"}
    listed = page.request.get(base + "/api/runs/", headers=auth)
    assert listed.status == 200 and run.run_id in listed.text()  # the private run included
    page.goto(base + "/accounts/")
    assert token not in page.content()
    row = page.locator("#tokens-table tbody tr", has_text="e2e laptop")
    assert "never" not in row.inner_text()  # last used: just now

    # the private run is on the account page, with a link to its page
    assert "private" in page.locator("#runs-table tbody tr", has_text=run.run_id).inner_text()
    page.screenshot(path=str(screenshots / "account-1280.png"), full_page=True)

    # revoked, the token is refused
    page.click("button[aria-label='Revoke token e2e laptop']")
    assert "is revoked" in page.inner_text(".messages")
    assert page.request.get(base + "/api/runs/", headers=auth).status == 401

    # withdrawn from the run's own page
    page.click(f"#runs-table a:has-text('{run.run_id}')")
    page.click("#withdraw summary")
    page.fill("#withdraw-form input[name=reason]", "superseded by a better run")
    page.check("#withdraw-form input[name=confirm]")
    page.click("#withdraw-form button")
    assert "The run is withdrawn" in page.inner_text(".messages")
    run.refresh_from_db()
    assert run.withdrawn_at is not None

    # staff pages and actions stay closed
    for path in ("/accounts/invitations/", "/points/upload/", "/points/models/"):
        response = page.goto(base + path)
        assert response is not None and response.status == 403, path
    assert not [h for h in _links(page) if "/admin" in h]

    # signed out, sign-in is refused after too many failures, with when to retry
    page.goto(base + "/accounts/")
    page.click("header form button")
    page.goto(base + "/accounts/login/")
    for n in range(3):
        _sign_in(page, "alice", f"guess-{n}")
    _sign_in(page, "alice", "pw-alice")
    refused = page.inner_text("#login-form")
    assert "Too many failed sign-ins for this account" in refused and "UTC" in refused
    assert page.url.startswith(base + "/accounts/login/")
    page.goto(base + "/accounts/")
    assert page.url.startswith(base + "/accounts/login/")  # still signed out
