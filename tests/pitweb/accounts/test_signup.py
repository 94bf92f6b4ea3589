"""Sign-up: by a staff invitation (a one-time, expiring link stored hashed) or, where the
site turns it on, open."""

from __future__ import annotations

import io
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from pitweb.accounts.models import Invitation
from pitweb.accounts.services import hash_token, invitation_create

pytestmark = pytest.mark.django_db

NEW = {"username": "erin", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"}


def staff_client(staff: User) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def link_path(link: str) -> str:
    return re.sub(r"^https?://[^/]+", "", link)


def test_staff_make_a_link_that_creates_one_account(staff: User) -> None:
    page = staff_client(staff).post("/accounts/invitations/", {"note": "for erin", "days": 3})
    assert page.status_code == 200
    link = page.context["link"]
    assert "/accounts/signup/inv_" in link and link in page.content.decode()
    guest = Client()
    assert "This invitation creates one account" in guest.get(link_path(link)).content.decode()
    response = guest.post(link_path(link), NEW)
    assert response.status_code == 302 and response.url == "/accounts/"
    erin = User.objects.get(username="erin")
    assert erin.check_password("a-long-pass-phrase") and not erin.is_staff
    invitation = Invitation.objects.get()
    assert invitation.used_by == erin and invitation.note == "for erin"
    # signed in at once
    assert guest.get("/accounts/").status_code == 200


def test_an_invitation_link_works_once(staff: User) -> None:
    key = invitation_create(staff=staff)
    assert Client().post(f"/accounts/signup/{key}/", NEW).status_code == 302
    again = Client().post(f"/accounts/signup/{key}/", {**NEW, "username": "mallory"})
    assert again.status_code == 410 and "already used" in again.content.decode()
    assert not User.objects.filter(username="mallory").exists()


def test_an_expired_invitation_creates_nothing(staff: User) -> None:
    key = invitation_create(staff=staff, days=1)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = Client().post(f"/accounts/signup/{key}/", NEW)
    assert response.status_code == 410 and "expired on" in response.content.decode()
    assert not User.objects.filter(username="erin").exists()
    assert Invitation.objects.get().used_at is None


@pytest.mark.parametrize(
    "forged",
    ["inv_" + "A" * 43, "not-a-key", "inv_", "x" * 500],
)
def test_a_forged_invitation_creates_nothing(staff: User, forged: str) -> None:
    invitation_create(staff=staff)  # a real one exists; a guess is not it
    response = Client().post(f"/accounts/signup/{forged}/", NEW)
    assert response.status_code == 404 and "not valid" in response.content.decode()
    assert not User.objects.filter(username="erin").exists()


def test_an_invitation_link_cannot_take_an_existing_name(staff: User, submitter: User) -> None:
    key = invitation_create(staff=staff)
    response = Client().post(f"/accounts/signup/{key}/", {**NEW, "username": "alice"})
    assert response.status_code == 400
    assert Invitation.objects.get().used_at is None  # still usable with another name
    submitter.refresh_from_db()
    assert submitter.check_password("pw-alice")


def test_invitations_are_stored_hashed(staff: User) -> None:
    key = invitation_create(staff=staff)
    stored = Invitation.objects.get()
    assert stored.key_hash == hash_token(key) and key not in (stored.key_hash, stored.prefix)
    listing = staff_client(staff).get("/accounts/invitations/").content.decode()
    assert key not in listing and stored.prefix in listing


def test_the_invite_command_prints_a_link_that_works(staff: User) -> None:
    out = io.StringIO()
    call_command("invite", "carol", "--note", "cli", "--url", "http://site.example", stdout=out)
    link = out.getvalue().strip()
    assert link.startswith("http://site.example/accounts/signup/inv_")
    assert Client().post(link_path(link), NEW).status_code == 302


def test_the_invite_command_refuses_a_submitter(submitter: User) -> None:
    with pytest.raises(Exception, match="no staff user"):
        call_command("invite", "alice", stdout=io.StringIO())
    assert Invitation.objects.count() == 0


def test_a_submitter_cannot_make_invitations(submitter: User) -> None:
    client = Client()
    client.force_login(submitter)
    assert client.get("/accounts/invitations/").status_code == 403
    assert client.post("/accounts/invitations/", {"days": 3}).status_code == 403
    assert Invitation.objects.count() == 0


def test_a_visitor_asked_for_invitations_is_sent_to_sign_in() -> None:
    response = Client().post("/accounts/invitations/", {"days": 3})
    assert response.status_code == 302 and response.url.startswith("/accounts/login/?next=")
    assert Invitation.objects.count() == 0


def test_sign_up_is_by_invitation_unless_opened(settings: Any) -> None:
    settings.PITWEB_OPEN_SIGNUP = False
    page = Client().get("/accounts/signup/")
    assert (
        page.status_code == 200 and "Sign-up on this site is by invitation" in page.content.decode()
    )
    assert Client().post("/accounts/signup/", NEW).status_code == 403
    assert not User.objects.filter(username="erin").exists()


def test_open_sign_up_creates_an_account(settings: Any) -> None:
    settings.PITWEB_OPEN_SIGNUP = True
    client = Client()
    response = client.post("/accounts/signup/", {**NEW, "email": "erin@example.org"})
    assert response.status_code == 302 and response.url == "/accounts/"
    assert User.objects.get(username="erin").email == "erin@example.org"


def test_open_sign_up_refuses_a_weak_password(settings: Any) -> None:
    settings.PITWEB_OPEN_SIGNUP = True
    response = Client().post(
        "/accounts/signup/", {"username": "erin", "password1": "12345", "password2": "12345"}
    )
    assert response.status_code == 400 and "too short" in response.content.decode()
    assert not User.objects.filter(username="erin").exists()
