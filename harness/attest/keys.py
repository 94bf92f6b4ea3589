"""The site's signing keys: the private key a site signs with, and the public key set it
publishes (each key's id, its raw public bytes and the dates it may sign within).

A published key set::

    {"keyset_version": 1, "issuer": "...",
     "keys": [{"keyid": "<sha256 hex of the raw public key>", "algorithm": "ed25519",
               "public_key": "<base64 of the 32 raw bytes>",
               "valid_from": "2026-12-01T00:00:00Z", "valid_until": null}]}

A statement signed by a key outside its dates does not verify: a retired key that leaked
cannot sign a statement dated after its ``valid_until`` (a signer who backdates a statement
is what the revocation list is for).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEYSET_VERSION = 1
ALGORITHM = "ed25519"


class KeySetError(ValueError):
    """A key or key set that cannot be read."""


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def keyid_of(key: Ed25519PublicKey) -> str:
    """A key's id: the sha256 of its raw public bytes, in hex."""
    return hashlib.sha256(raw_public(key)).hexdigest()


def private_key_from_pem(pem: bytes) -> Ed25519PrivateKey:
    """An Ed25519 private key from its PEM (PKCS#8, unencrypted)."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise KeySetError(f"not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeySetError(f"the key is {type(key).__name__}, not Ed25519")
    return key


def private_key_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )  # fmt: skip


def stamp(at: datetime) -> str:
    """A time as statements and key sets write it: UTC, to the second, with ``Z``."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_stamp(text: object, what: str) -> datetime:
    if not isinstance(text, str):
        raise KeySetError(f"{what} is not a time")
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise KeySetError(f"{what} {text!r} is not an ISO 8601 time") from None
    if found.tzinfo is None:
        raise KeySetError(f"{what} {text!r} has no timezone")
    return found.astimezone(UTC)


@dataclass(frozen=True)
class PublishedKey:
    keyid: str
    key: Ed25519PublicKey
    valid_from: datetime
    valid_until: datetime | None

    def valid_at(self, at: datetime) -> bool:
        return self.valid_from <= at and (self.valid_until is None or at < self.valid_until)

    def dates(self) -> str:
        until = "open-ended" if self.valid_until is None else stamp(self.valid_until)
        return f"{stamp(self.valid_from)} to {until}"

    def to_json(self) -> dict[str, Any]:
        return {
            "keyid": self.keyid,
            "algorithm": ALGORITHM,
            "public_key": base64.b64encode(raw_public(self.key)).decode("ascii"),
            "valid_from": stamp(self.valid_from),
            "valid_until": None if self.valid_until is None else stamp(self.valid_until),
        }


def published(
    key: Ed25519PublicKey, valid_from: datetime, valid_until: datetime | None = None
) -> PublishedKey:
    return PublishedKey(keyid_of(key), key, valid_from.astimezone(UTC),
                        None if valid_until is None else valid_until.astimezone(UTC))  # fmt: skip


def keyset(issuer: str, keys: list[PublishedKey]) -> dict[str, Any]:
    """The key set document a site publishes."""
    return {
        "keyset_version": KEYSET_VERSION,
        "issuer": issuer,
        "keys": [k.to_json() for k in keys],
    }


def read_keyset(document: object) -> dict[str, PublishedKey]:
    """A published key set, by key id; KeySetError naming what is wrong."""
    if not isinstance(document, dict) or document.get("keyset_version") != KEYSET_VERSION:
        raise KeySetError(f"not a key set (keyset_version {KEYSET_VERSION} expected)")
    entries = document.get("keys")
    if not isinstance(entries, list):
        raise KeySetError("the key set has no list of keys")
    found: dict[str, PublishedKey] = {}
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise KeySetError(f"key {n} is not an object")
        if entry.get("algorithm") != ALGORITHM:
            raise KeySetError(f"key {n}: algorithm {entry.get('algorithm')!r}, not {ALGORITHM}")
        try:
            raw = base64.b64decode(str(entry.get("public_key", "")), validate=True)
            key = Ed25519PublicKey.from_public_bytes(raw)
        except (binascii.Error, ValueError):
            raise KeySetError(f"key {n}: public_key is not 32 base64 bytes") from None
        if entry.get("keyid") != keyid_of(key):
            raise KeySetError(f"key {n}: its keyid is not the sha256 of its public key")
        until = entry.get("valid_until")
        found[keyid_of(key)] = PublishedKey(
            keyid_of(key),
            key,
            parse_stamp(entry.get("valid_from"), f"key {n} valid_from"),
            None if until is None else parse_stamp(until, f"key {n} valid_until"),
        )
    return found
