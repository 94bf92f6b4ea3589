"""DSSE envelopes (the Dead Simple Signing Envelope, v1) signed with Ed25519.

An envelope is ``{"payload": <base64>, "payloadType": <type>, "signatures": [{"keyid",
"sig"}]}``; what is signed is not the payload itself but its pre-authentication encoding
``PAE(type, payload) = "DSSEv1" SP LEN(type) SP type SP LEN(payload) SP payload`` (LEN in
ASCII decimal), so a signature over one payload type can never be read as one over another.
The signatures themselves come from ``cryptography`` (Ed25519, RFC 8032: deterministic, so
one key signing one payload gives the same bytes every time).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

# an envelope larger than this is not one of ours (a certificate is a few kilobytes)
MAX_ENVELOPE_BYTES = 1 << 20


class EnvelopeError(ValueError):
    """Not a DSSE envelope, or one whose signature does not hold."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: the bytes a signature is over."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def sign(payload_type: str, payload: bytes, key: Ed25519PrivateKey, keyid: str) -> dict[str, Any]:
    """An envelope holding ``payload`` signed with ``key`` (published as ``keyid``)."""
    signature = key.sign(pae(payload_type, payload))
    return {
        "payload": base64.b64encode(payload).decode("ascii"),
        "payloadType": payload_type,
        "signatures": [{"keyid": keyid, "sig": base64.b64encode(signature).decode("ascii")}],
    }


def _b64(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise EnvelopeError(f"{what} is not a base64 string")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise EnvelopeError(f"{what} is not valid base64") from None


def parts(envelope: object) -> tuple[str, bytes, list[tuple[str, bytes]]]:
    """An envelope's payload type, payload bytes and (keyid, signature) pairs, read
    strictly: nothing but DSSE's three fields (and a signature's two)."""
    if not isinstance(envelope, dict):
        raise EnvelopeError("an envelope is a JSON object")
    extra = set(envelope) - {"payload", "payloadType", "signatures"}
    if extra:
        raise EnvelopeError(f"unknown envelope field {sorted(extra)[0]!r}")
    payload_type = envelope.get("payloadType")
    if not isinstance(payload_type, str) or not payload_type:
        raise EnvelopeError("the envelope has no payloadType")
    payload = _b64(envelope.get("payload"), "payload")
    signatures = envelope.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        raise EnvelopeError("the envelope carries no signature")
    found: list[tuple[str, bytes]] = []
    for n, entry in enumerate(signatures):
        if not isinstance(entry, dict) or set(entry) - {"keyid", "sig"}:
            raise EnvelopeError(f"signature {n} is not {{keyid, sig}}")
        keyid = entry.get("keyid")
        if not isinstance(keyid, str) or not keyid:
            raise EnvelopeError(f"signature {n} names no keyid")
        found.append((keyid, _b64(entry.get("sig"), f"signature {n}")))
    return payload_type, payload, found


def signed_by(
    payload_type: str, payload: bytes, signatures: list[tuple[str, bytes]],
    keys: dict[str, Ed25519PublicKey],
) -> list[str]:  # fmt: skip
    """The ids of the keys among ``keys`` whose signature over the payload holds."""
    message = pae(payload_type, payload)
    good: list[str] = []
    for keyid, signature in signatures:
        key = keys.get(keyid)
        if key is None:
            continue
        try:
            key.verify(signature, message)
        except InvalidSignature:
            continue
        good.append(keyid)
    return good
