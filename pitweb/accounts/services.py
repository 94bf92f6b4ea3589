"""Accounts' writes: API tokens (created, revoked), staff invitations (created, used
once) and new accounts. A token or an invitation is returned in plain once and stored
only as its sha256."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from pitweb.accounts.keys import INVITATION_PREFIX, TOKEN_PREFIX, hash_token, new_key
from pitweb.accounts.models import ApiToken, Invitation
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import readable

NAME_LENGTH = 100


def token_issue(*, user: User, name: str = "") -> str:
    """Create a token for ``user``; the plain token is returned once and never stored."""
    name = readable(name, "name").strip()
    if len(name) > NAME_LENGTH:
        raise SubmissionError("invalid_name", f"name: at most {NAME_LENGTH} characters")
    token = new_key(TOKEN_PREFIX)
    ApiToken.objects.create(user=user, name=name, key_hash=hash_token(token), prefix=token[:8])
    return token


def token_revoke(*, user: User, token_id: int) -> ApiToken:
    """Revoke one of ``user``'s own tokens, for good (another's answers as missing).
    Revoking twice changes nothing more."""
    found = ApiToken.objects.filter(pk=token_id, user=user).first()
    if found is None:
        raise SubmissionError("not_found", "no such token", 404)
    ApiToken.objects.filter(pk=found.pk, revoked=False).update(
        revoked=True, revoked_at=timezone.now()
    )
    found.refresh_from_db()
    return found


def invitation_create(*, staff: User, note: str = "", days: int | None = None) -> str:
    """Staff make a one-time sign-up link's key (shown once; its sha256 is stored),
    usable for ``days`` days (PITWEB_INVITATION_DAYS by default)."""
    if not (staff.is_active and staff.is_staff):
        raise SubmissionError("permission_denied", "only staff invite", 403)
    note = readable(note, "note").strip()
    days = settings.PITWEB_INVITATION_DAYS if days is None else days
    if not 1 <= days <= 90:
        raise SubmissionError("invalid_days", "days: from 1 to 90")
    if len(note) > 200:
        raise SubmissionError("invalid_note", "note: at most 200 characters")
    key = new_key(INVITATION_PREFIX)
    Invitation.objects.create(
        key_hash=hash_token(key),
        prefix=key[:8],
        note=note,
        created_by=staff,
        expires_at=timezone.now() + timedelta(days=days),
    )
    return key


def invitation_usable(key: str) -> Invitation:
    """The invitation ``key`` names, if it may still create an account; otherwise why not."""
    found = Invitation.objects.filter(key_hash=hash_token(key)).first()
    if found is None:
        raise SubmissionError("invalid_invitation", "This invitation link is not valid.", 404)
    if found.used_at is not None:
        raise SubmissionError("used_invitation", "This invitation link was already used.", 410)
    if found.expires_at <= timezone.now():
        raise SubmissionError(
            "expired_invitation",
            f"This invitation link expired on {found.expires_at:%Y-%m-%d %H:%M:%S} UTC: "
            "ask staff for a new one.",
            410,
        )
    return found


def account_create(
    *, username: str, password: str, email: str = "", invitation_key: str | None = None
) -> User:
    """A new account, by invitation (the link is used up in the same transaction: of two
    people racing with one link, one gets an account and the other nothing) or, where
    open sign-up is on, without one. ``username`` and ``password`` come validated."""
    if invitation_key is None and not settings.PITWEB_OPEN_SIGNUP:
        raise SubmissionError("signup_closed", "Sign-up is by invitation only.", 403)
    try:
        with transaction.atomic():
            user = User.objects.create_user(username, email=email, password=password)
            if invitation_key is not None:
                invitation = invitation_usable(invitation_key)
                used = Invitation.objects.filter(
                    pk=invitation.pk, used_at=None, expires_at__gt=timezone.now()
                ).update(used_at=timezone.now(), used_by=user)
                if used != 1:
                    raise SubmissionError(
                        "used_invitation", "This invitation link was already used.", 410
                    )
    except IntegrityError:
        raise SubmissionError("username_taken", "That username is taken.") from None
    return user
