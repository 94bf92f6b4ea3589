import hashlib
import secrets

from django.contrib.auth.models import User

from pitweb.accounts.models import ApiToken

TOKEN_PREFIX = "pit_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_issue(*, user: User) -> str:
    """Create a token for ``user``; the plain token is returned once and never stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, key_hash=hash_token(token), prefix=token[:8])
    return token
