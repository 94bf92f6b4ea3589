"""Sealing a point set: one salted commitment over its hidden sections.

A set published before its reveal shows its Questions and this one value, nothing else
about its Ground Truth or Provenance: no per-point hash (an unsalted hash of a short Ground
Truth can be guessed by hashing candidates), not even the suite digest (it hashes whole
files, hidden sections included). At the reveal the salt is published, and anyone holding
the revealed files recomputes the commitment:

    sha256( salt bytes  ||  canonical JSON of [{"ground_truth", "id", "provenance"}, ...] )

the points sorted by id, each section exactly as the parser reads it, the JSON canonical as
every artifact here (``harness.canonical``: keys sorted, no spaces, UTF-8). The salt is 32
random bytes, written as 64 lowercase hex digits.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence

from harness import canonical
from harness.points.markdown import Point

SALT_BYTES = 32
SALT_HEX = re.compile(r"[0-9a-f]{64}")


class SealError(ValueError):
    """A salt that is not 64 lowercase hex digits."""


def new_salt() -> str:
    """A fresh salt, as hex."""
    return secrets.token_hex(SALT_BYTES)


def hidden_sections(points: Sequence[Point]) -> bytes:
    """The canonical bytes of every point's hidden sections, sorted by id."""
    return canonical.dumps_bytes(
        [
            {"id": p.id, "ground_truth": p.ground_truth, "provenance": p.provenance}
            for p in sorted(points, key=lambda p: p.id)
        ]
    )


def commitment(salt: str, points: Sequence[Point]) -> str:
    """``sha256:`` and the hex of sha256(salt bytes || hidden sections)."""
    if not SALT_HEX.fullmatch(salt):
        raise SealError("the salt must be 64 lowercase hex digits (32 bytes)")
    return "sha256:" + hashlib.sha256(bytes.fromhex(salt) + hidden_sections(points)).hexdigest()


def question_digest(points: Sequence[Point]) -> str:
    """What a sealed set may publish of its points: a digest of the Questions alone
    (``<id>:<sha256 of the Question>`` lines sorted by id)."""
    lines = sorted(f"{p.id}:{p.question_sha256}" for p in points)
    return "sha256:" + hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
