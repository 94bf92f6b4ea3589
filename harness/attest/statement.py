"""in-toto Statements (v1) in DSSE envelopes: made, and opened against a key set.

A Statement says something (its ``predicate``, of a versioned ``predicateType``) about
artifacts named by digest (its ``subject``). Ours carry the time they were made in the
predicate (``signed_at``), and that time must fall inside the signing key's published
dates. The payload is the statement's canonical JSON (keys sorted, compact, UTF-8), so a
statement has one byte form and one digest: its id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness import canonical
from harness.attest import dsse
from harness.attest.keys import KeySetError, PublishedKey, keyid_of, parse_stamp

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
PREDICATE_BASE = "https://pitweb.dev/attestations"


class StatementError(ValueError):
    """A signed statement that does not hold, with the rule it broke: ``envelope`` (not
    one), ``signature`` (no published key signed it), ``key_dates`` (signed outside the
    key's dates), ``statement`` (not ours, or of another kind)."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


def subject(name: str, digest: str) -> dict[str, Any]:
    """A subject named ``name`` whose digest is ``sha256:<hex>``."""
    algorithm, _, value = digest.partition(":")
    if algorithm != "sha256" or len(value) != 64:
        raise ValueError(f"subject {name}: {digest!r} is not sha256:<64 hex>")
    return {"name": name, "digest": {"sha256": value}}


def subject_digest(statement: dict[str, Any], name: str) -> str | None:
    """The ``sha256:<hex>`` of the subject named ``name``, or None."""
    for entry in statement.get("subject") or ():
        if isinstance(entry, dict) and entry.get("name") == name:
            value = (entry.get("digest") or {}).get("sha256")
            return f"sha256:{value}" if isinstance(value, str) else None
    return None


def make(
    subjects: list[dict[str, Any]], predicate_type: str, predicate: dict[str, Any]
) -> dict[str, Any]:
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": predicate_type,
        "predicate": predicate,
    }


def sign(statement: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """The statement in a DSSE envelope signed with ``key``."""
    return dsse.sign(
        PAYLOAD_TYPE, canonical.dumps_bytes(statement), key, keyid_of(key.public_key())
    )


def envelope_id(envelope: dict[str, Any]) -> str:
    """A signed statement's id: the sha256 of its payload (the statement's bytes), so a
    statement signed again (another key) keeps its id."""
    _kind, payload, _sigs = dsse.parts(envelope)
    return "sha256:" + canonical.sha256_hex(payload)


@dataclass(frozen=True)
class Opened:
    statement: dict[str, Any]
    id: str  # sha256 of the payload
    key: PublishedKey
    signed_at: datetime


def open_signed(envelope: object, keys: dict[str, PublishedKey], predicate_type: str) -> Opened:
    """The statement in ``envelope`` if a published key signed it within its dates and it
    is a statement of ``predicate_type``; StatementError naming the rule otherwise."""
    try:
        kind, payload, signatures = dsse.parts(envelope)
    except dsse.EnvelopeError as exc:
        raise StatementError("envelope", str(exc)) from None
    if kind != PAYLOAD_TYPE:
        raise StatementError("envelope", f"payloadType {kind!r}, not {PAYLOAD_TYPE}")
    good = dsse.signed_by(kind, payload, signatures, {k: p.key for k, p in keys.items()})
    if not good:
        named = ", ".join(k[:16] for k, _ in signatures)
        known = any(k in keys for k, _ in signatures)
        raise StatementError(
            "signature",
            f"the signature by key {named} does not hold over these bytes"
            if known
            else f"signed by key {named}, which is not in the published key set",
        )
    try:
        statement = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise StatementError("statement", "the payload is not JSON") from None
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise StatementError("statement", "the payload is not an in-toto Statement v1")
    if statement.get("predicateType") != predicate_type:
        raise StatementError(
            "statement",
            f"a statement of {statement.get('predicateType')!r}, not {predicate_type}",
        )
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict):
        raise StatementError("statement", "the statement has no predicate object")
    try:
        signed_at = parse_stamp(predicate.get("signed_at"), "signed_at")
    except KeySetError as exc:
        raise StatementError("statement", str(exc)) from None
    key = keys[good[0]]
    if not key.valid_at(signed_at):
        raise StatementError(
            "key_dates",
            f"signed at {predicate['signed_at']} by key {key.keyid[:16]}, valid {key.dates()} only",
        )
    return Opened(statement, "sha256:" + canonical.sha256_hex(payload), key, signed_at)
