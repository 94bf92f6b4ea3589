"""Sign-in with the site's own pages (never the admin's), its limits per account and per
address, password reset by mail and password change."""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


def sign_in(
    client: Client, username: str, password: str, address: str = "10.0.0.1", **extra: Any
) -> Any:
    return client.post(
        LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address, **extra
    )


@pytest.fixture()
def limits(settings: Any) -> Any:
    settings.PITWEB_SIGNIN_ACCOUNT_LIMIT = 3
    settings.PITWEB_SIGNIN_ADDRESS_LIMIT = 4
    settings.PITWEB_SIGNIN_WINDOW_SECONDS = 600
    settings.PITWEB_PROXY_HOPS = 0
    return settings


def test_the_header_links_to_the_sites_sign_in_and_back(client: Client) -> None:
    page = client.get("/methodology/").content.decode()
    assert 'href="/accounts/login/?next=/methodology/"' in page
    assert "/admin/" not in page


@pytest.mark.parametrize(
    "path",
    ["/", "/methodology/", "/changelog/", "/status/", "/points/", "/compare/", LOGIN,
     "/accounts/signup/", "/accounts/password/reset/"],
)  # fmt: skip
def test_no_public_page_links_to_the_admin(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200, path
    hrefs = re.findall(r'(?:href|action)="([^"]*)"', response.content.decode())
    assert hrefs and not [h for h in hrefs if "/admin" in h]


def test_a_submitter_signs_in_and_lands_on_their_account(client: Client, submitter: User) -> None:
    response = sign_in(client, "alice", "pw-alice")
    assert response.status_code == 302 and response.url == "/accounts/"
    assert client.get("/accounts/").context["user"] == submitter


def test_sign_in_takes_the_person_back_where_they_were_sent_from(
    client: Client, submitter: User
) -> None:
    response = client.post(
        LOGIN + "?next=/agents/", {"username": "alice", "password": "pw-alice", "next": "/agents/"}
    )
    assert response.status_code == 302 and response.url == "/agents/"


def test_sign_in_never_sends_a_person_to_another_site(client: Client, submitter: User) -> None:
    response = client.post(
        LOGIN, {"username": "alice", "password": "pw-alice", "next": "https://evil.example/"}
    )
    assert response.status_code == 302 and response.url == "/accounts/"


def test_a_visitor_opening_a_page_that_needs_an_account_is_told_why(client: Client) -> None:
    response = client.get("/agents/")
    assert response.status_code == 302 and response.url == LOGIN + "?next=/agents/"
    page = client.get(response.url).content.decode()
    assert (
        'id="why-sign-in"' in page and "(<code>/agents/</code>) is for signed-in accounts" in page
    )


def test_a_wrong_password_signs_nobody_in(client: Client, submitter: User) -> None:
    response = sign_in(client, "alice", "wrong")
    assert (
        response.status_code == 200 and "correct username and password" in response.content.decode()
    )
    assert "_auth_user_id" not in client.session


def test_an_account_is_refused_after_too_many_failures_from_anywhere(
    limits: Any, submitter: User
) -> None:
    for n in range(3):  # a guesser spreads its tries over addresses
        sign_in(Client(), "alice", f"guess-{n}", address=f"10.0.1.{n}")
    client = Client()
    refused = sign_in(client, "alice", "pw-alice", address="10.0.2.1")
    text = refused.content.decode()
    assert refused.status_code == 429 and "Too many failed sign-ins for this account" in text
    assert re.search(r"Try again after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text)
    assert "_auth_user_id" not in client.session
    # the name is compared as typed otherwise: case does not open a second count
    assert sign_in(Client(), "ALICE", "pw-alice", address="10.0.2.2").status_code == 429


def test_an_address_is_refused_after_too_many_failures_on_any_accounts(
    limits: Any, submitter: User, other: User
) -> None:
    for n in range(4):  # one address sprays names that may not exist
        sign_in(Client(), f"name-{n}", "guess", address="10.0.3.1")
    refused = sign_in(Client(), "bob", "pw-bob", address="10.0.3.1")
    assert refused.status_code == 429
    assert "Too many failed sign-ins from your address" in refused.content.decode()
    # bob himself, elsewhere, is not locked out by that address's failures
    assert sign_in(Client(), "bob", "pw-bob", address="10.0.3.2").status_code == 302


def test_a_success_elsewhere_does_not_reset_another_addresss_count(
    limits: Any, submitter: User, other: User
) -> None:
    for n in range(3):
        sign_in(Client(), f"name-{n}", "guess", address="10.0.4.1")
    assert sign_in(Client(), "bob", "pw-bob", address="10.0.4.2").status_code == 302
    assert sign_in(Client(), "alice", "pw-alice", address="10.0.4.1").status_code == 302
    # that success did not reset the address's count: one more failure locks it
    sign_in(Client(), "name-9", "guess", address="10.0.4.1")
    assert sign_in(Client(), "bob", "pw-bob", address="10.0.4.1").status_code == 429


def test_a_forwarded_for_header_a_client_writes_is_not_believed(
    limits: Any, submitter: User
) -> None:
    for n in range(4):
        sign_in(Client(), f"n{n}", "guess", address="10.0.5.1", HTTP_X_FORWARDED_FOR=f"1.2.3.{n}")
    refused = sign_in(
        Client(), "alice", "pw-alice", address="10.0.5.1", HTTP_X_FORWARDED_FOR="9.9.9.9"
    )
    assert refused.status_code == 429


def test_behind_one_proxy_the_address_is_the_one_the_proxy_saw(
    limits: Any, submitter: User
) -> None:
    limits.PITWEB_PROXY_HOPS = 1
    for n in range(4):  # a client's own entry comes first; the proxy appends what it saw
        sign_in(
            Client(),
            f"n{n}",
            "g",
            address="172.16.0.2",
            HTTP_X_FORWARDED_FOR=f"6.6.6.{n}, 10.0.6.1",
        )
    proxied = {"address": "172.16.0.2"}
    assert (
        sign_in(
            Client(), "alice", "pw-alice", HTTP_X_FORWARDED_FOR="10.0.6.1", **proxied
        ).status_code
        == 429
    )
    assert (
        sign_in(
            Client(), "alice", "pw-alice", HTTP_X_FORWARDED_FOR="10.0.6.2", **proxied
        ).status_code
        == 302
    )


def test_password_reset_mails_a_link_that_sets_a_new_password(client: Client) -> None:
    User.objects.create_user("dora", email="dora@example.org", password="old-pass-word-1")
    response = client.post("/accounts/password/reset/", {"email": "dora@example.org"})
    assert response.status_code == 302 and response.url == "/accounts/password/reset/sent/"
    [sent] = mail.outbox
    link = re.search(r"https?://[^/]+(/accounts/password/reset/[^\s]+)", sent.body)
    assert link is not None and "dora" in sent.body
    form = client.get(link.group(1), follow=True)
    assert form.status_code == 200 and 'id="account-form"' in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a-new-pass-phrase", "new_password2": "a-new-pass-phrase"},
    )
    assert done.status_code == 302 and done.url == "/accounts/password/reset/done/"
    assert sign_in(Client(), "dora", "a-new-pass-phrase").status_code == 302
    # the link worked once
    again = client.get(link.group(1), follow=True).content.decode()
    assert 'id="link-refused"' in again


def test_password_reset_tells_nobody_which_addresses_have_accounts(client: Client) -> None:
    response = client.post("/accounts/password/reset/", {"email": "nobody@example.org"})
    assert response.status_code == 302 and response.url == "/accounts/password/reset/sent/"
    assert mail.outbox == []


def test_password_change_needs_the_old_password(client: Client, submitter: User) -> None:
    client.force_login(submitter)
    wrong = client.post(
        "/accounts/password/change/",
        {
            "old_password": "nope",
            "new_password1": "brand-new-words",
            "new_password2": "brand-new-words",
        },
    )
    assert wrong.status_code == 200
    submitter.refresh_from_db()
    assert submitter.check_password("pw-alice")
    right = client.post(
        "/accounts/password/change/",
        {
            "old_password": "pw-alice",
            "new_password1": "brand-new-words",
            "new_password2": "brand-new-words",
        },
    )
    assert right.status_code == 302 and right.url == "/accounts/password/change/done/"
    submitter.refresh_from_db()
    assert submitter.check_password("brand-new-words")


def test_the_admins_login_is_no_way_around_the_limit(limits: Any, staff: User) -> None:
    for n in range(3):
        sign_in(Client(), "carol", f"guess-{n}", address=f"10.0.7.{n}")
    client = Client()
    response = client.post(
        "/admin/login/", {"username": "carol", "password": "pw-carol"}, REMOTE_ADDR="10.0.7.9"
    )
    assert "Too many failed sign-ins for this account" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_password_reset_requests_are_limited_per_address(limits: Any) -> None:
    User.objects.create_user("dora", email="dora@example.org", password="old-pass-word-1")
    for _ in range(4):
        sent = Client().post(
            "/accounts/password/reset/", {"email": "dora@example.org"}, REMOTE_ADDR="10.0.8.1"
        )
        assert sent.status_code == 302
    refused = Client().post(
        "/accounts/password/reset/", {"email": "dora@example.org"}, REMOTE_ADDR="10.0.8.1"
    )
    assert refused.status_code == 429 and "from your address" in refused.content.decode()
    assert len(mail.outbox) == 4


@pytest.mark.django_db(transaction=True)
def test_failures_counted_at_the_same_moment_by_two_processes_are_both_counted(
    limits: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two server processes count a failure on one account at once; a third failure then
    reaches the limit of three, whichever store the cache is. Redis adds in one command;
    the database cache reads and then writes, so each reader here waits (at most a few
    seconds) for the other to have read too: two counts that do not hold the entry while
    they add both read the same number and one failure is lost."""
    from django.core.cache import caches
    from django.db import connections

    from pitweb.accounts.signin_limits import signin_failure_record, signin_refusal

    backend = type(caches["default"])
    both_read = threading.Barrier(2, timeout=3)
    read = backend.get

    def read_side_by_side(self: Any, key: str, *args: Any, **kwargs: Any) -> Any:
        found = read(self, key, *args, **kwargs)
        if ":account:" in key:
            with contextlib.suppress(threading.BrokenBarrierError):
                both_read.wait()  # the other process has read too (or is held: no wait)
        return found

    monkeypatch.setattr(backend, "get", read_side_by_side)

    def fail(address: str) -> None:
        try:
            signin_failure_record(username="alice", address=address)
        finally:
            connections.close_all()

    processes = [threading.Thread(target=fail, args=(f"10.0.9.{n}",)) for n in (1, 2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    assert signin_refusal(username="alice", address="10.0.9.3") is None  # two so far
    refused = signin_failure_record(username="alice", address="10.0.9.3")
    assert refused is not None and refused.scope == "account"
