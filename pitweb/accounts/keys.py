"""Secrets handed out once (API tokens, invitation links) and the digests kept instead.
Imports nothing of the site: the API's authentication loads it while settings load."""

import hashlib
import secrets

TOKEN_PREFIX = "pit_"
INVITATION_PREFIX = "inv_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_key(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)
