from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions

from pitweb.accounts.keys import hash_token
from pitweb.accounts.models import ApiToken


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Token pit_...``; tokens are compared by their sha256."""

    keyword = "Token"

    def authenticate(self, request: Any) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Token <token>'")
        try:
            token = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("token is not text") from None
        found = (
            ApiToken.objects.select_related("user")
            .filter(key_hash=hash_token(token), revoked=False)
            .first()
        )
        if found is None or not found.user.is_active:
            raise exceptions.AuthenticationFailed("unknown or revoked token")
        ApiToken.objects.filter(pk=found.pk).update(last_used_at=timezone.now())
        return found.user, found

    def authenticate_header(self, request: Any) -> str:
        return self.keyword
