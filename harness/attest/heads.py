"""The commitment log's head, signed.

The site signs its log's head as a statement (``HEAD_TYPE``) whose subject is the head
entry's digest (``pitweb-commitments``) with its ``seq`` and ``signed_at``. A reader who
keeps signed heads can show later that the site once published that head, and check that
the log it is shown still holds it (``harness.forward.log.verify_log`` with the head).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness.attest.keys import PublishedKey
from harness.attest.statement import (
    PREDICATE_BASE,
    StatementError,
    open_signed,
    subject,
    subject_digest,
)
from harness.attest.statement import make as make_statement

HEAD_TYPE = f"{PREDICATE_BASE}/commitment-log-head/v1"
SUBJECT = "pitweb-commitments"


def head_statement(seq: int, digest: str, signed_at: str) -> dict[str, Any]:
    return make_statement(
        [subject(SUBJECT, digest)], HEAD_TYPE, {"signed_at": signed_at, "seq": seq}
    )


@dataclass(frozen=True)
class SignedHead:
    seq: int
    digest: str
    signed_at: datetime
    keyid: str

    def kept(self) -> str:
        """As a reader keeps a head: ``SEQ:sha256:...``."""
        return f"{self.seq}:{self.digest}"


def verify_head(envelope: object, keys: dict[str, PublishedKey]) -> SignedHead:
    opened = open_signed(envelope, keys, HEAD_TYPE)
    seq = opened.statement["predicate"].get("seq")
    digest = subject_digest(opened.statement, SUBJECT)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or digest is None:
        raise StatementError("statement", "the signed head names no entry (seq and digest)")
    return SignedHead(seq, digest, opened.signed_at, opened.key.keyid)
