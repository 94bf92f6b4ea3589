"""The site's signing key: what every signed statement of the site is signed with, and the
key set it publishes (``/.well-known/pitweb-keys.json``).

The key is ``PITWEB_SIGNING_KEY_FILE`` with the dates the settings give, or, unset, one made
on first use and kept in the database (``GeneratedSigningKey``: one row, so every process
on every machine of the site signs with the same key), whose start is the moment it was
made. A key that an earlier version made under ``PITWEB_VAR_DIR/signing`` is taken into
that row on first use. Earlier keys (``PITWEB_RETIRED_SIGNING_KEYS``, a published key set) stay
in the published set, so what they signed still verifies.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from harness.attest import keys as keysets
from harness.attest.keys import KeySetError, PublishedKey
from harness.attest.statement import sign
from pitweb.core.models import GeneratedSigningKey

GENERATED = "ed25519.pem"
GENERATED_DATES = "ed25519.json"


def _generated() -> tuple[bytes, str]:
    """The key made on first use, and when it was made: one row of the database, which
    every machine of the site reads. A key an earlier version made in the var folder is
    taken into the row, so what it signed goes on verifying."""
    kept = GeneratedSigningKey.objects.filter(slot="site").first()
    if kept is None:
        pem, made = _from_var_folder(Path(settings.VAR_DIR) / "signing") or (
            keysets.private_key_pem(Ed25519PrivateKey.generate()),
            keysets.stamp(timezone.now()),
        )
        kept, _ = GeneratedSigningKey.objects.get_or_create(
            slot="site", defaults={"pem": pem.decode("ascii"), "valid_from": made}
        )
    return kept.pem.encode("ascii"), kept.valid_from


def _from_var_folder(folder: Path) -> tuple[bytes, str] | None:
    pem_path, dates_path = folder / GENERATED, folder / GENERATED_DATES
    if not (pem_path.is_file() and dates_path.is_file()):
        return None
    pem = pem_path.read_bytes()
    return (pem, json.loads(dates_path.read_text(encoding="utf-8"))["valid_from"]) if pem else None


@cache
def _loaded() -> tuple[Ed25519PrivateKey, PublishedKey]:
    if settings.PITWEB_SIGNING_KEY_FILE:
        pem = Path(settings.PITWEB_SIGNING_KEY_FILE).read_bytes()
        valid_from, valid_until = (
            settings.PITWEB_SIGNING_KEY_VALID_FROM,
            settings.PITWEB_SIGNING_KEY_VALID_UNTIL,
        )
    else:
        pem, valid_from = _generated()
        valid_until = ""
    try:
        key = keysets.private_key_from_pem(pem)
        start = keysets.parse_stamp(valid_from, "PITWEB_SIGNING_KEY_VALID_FROM")
        end = (
            keysets.parse_stamp(valid_until, "PITWEB_SIGNING_KEY_VALID_UNTIL")
            if valid_until
            else None
        )
    except KeySetError as exc:
        raise ImproperlyConfigured(f"the site's signing key: {exc}") from None
    return key, keysets.published(key.public_key(), start, end)


def signing_key() -> tuple[Ed25519PrivateKey, PublishedKey]:
    """The key the site signs with now, and how it is published."""
    return _loaded()


def forget_signing_key() -> None:
    """Read the signing key again on its next use (it is read once per process): for tests
    that sign with a key of their own, and for a key rotation without a restart."""
    _loaded.cache_clear()


def _retired() -> list[PublishedKey]:
    if not settings.PITWEB_RETIRED_SIGNING_KEYS:
        return []
    try:
        found = keysets.read_keyset(
            json.loads(Path(settings.PITWEB_RETIRED_SIGNING_KEYS).read_text(encoding="utf-8"))
        )
    except (OSError, ValueError) as exc:
        raise ImproperlyConfigured(f"PITWEB_RETIRED_SIGNING_KEYS: {exc}") from None
    return list(found.values())


def published_keys() -> dict[str, Any]:
    """The key set the site publishes: the signing key and every retired one."""
    _key, current = signing_key()
    retired = [k for k in _retired() if k.keyid != current.keyid]
    return keysets.keyset(settings.PITWEB_SIGNING_ISSUER, [current, *retired])


def now_stamp(at: datetime | None = None) -> str:
    """A statement's ``signed_at``: the site's time, to the second."""
    return keysets.stamp(at or timezone.now())


def site_sign(statement: dict[str, Any]) -> dict[str, Any]:
    """The statement in a DSSE envelope signed with the site's key."""
    key, current = signing_key()
    at = keysets.parse_stamp(statement["predicate"]["signed_at"], "signed_at")
    if not current.valid_at(at):
        raise ImproperlyConfigured(
            f"the site's signing key is valid {current.dates()}, not at {keysets.stamp(at)}"
        )
    return sign(statement, key)
