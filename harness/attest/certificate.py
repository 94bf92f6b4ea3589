"""A run's certificate: the site's signed verdict over one run, checked offline.

The statement's subjects are the run's receipt body (``receipt-body``: its
``body_sha256``) and trajectory (``trajectory``: ``binding.trajectory_sha256``); its
predicate (``CERTIFICATE_TYPE``) what the site concluded: the release, the verification
level, the platform's figures and contamination deltas with their intervals, the mask
verdict, the reasoning audit's digest and counts, the capabilities (measured or
declared), the forward status and commitment, and ``signed_at``.

:func:`verify_certificate` checks, in order: the envelope and its signature against the
published keys, the key's dates, the statement's kind; with a receipt, that the receipt's
body (recomputed, not as it claims) and trajectory are the certificate's subjects; with a
signed revocation list (itself verified against the same keys), that the certificate is not
on it. Without one, revocation is not checked and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness import canonical
from harness.attest import revocations as revocation_lists
from harness.attest.keys import PublishedKey, stamp
from harness.attest.statement import (
    PREDICATE_BASE,
    StatementError,
    open_signed,
    subject,
    subject_digest,
)
from harness.attest.statement import make as make_statement

CERTIFICATE_TYPE = f"{PREDICATE_BASE}/run-certificate/v1"
RECEIPT_SUBJECT = "receipt-body"
TRAJECTORY_SUBJECT = "trajectory"


def certificate_statement(
    *, body_sha256: str, trajectory_sha256: str, predicate: dict[str, Any]
) -> dict[str, Any]:
    """The statement a certificate signs (``predicate`` carries ``signed_at``)."""
    return make_statement(
        [subject(RECEIPT_SUBJECT, body_sha256), subject(TRAJECTORY_SUBJECT, trajectory_sha256)],
        CERTIFICATE_TYPE,
        predicate,
    )


@dataclass
class CertificateCheck:
    """What ``certificate verify`` found: each check as a line, the rules that failed,
    and whether revocation was checked at all."""

    lines: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    revocation_checked: bool = False
    id: str | None = None
    predicate: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed

    def good(self, rule: str, text: str) -> None:
        self.lines.append(f"{rule} ok  {text}")

    def bad(self, rule: str, text: str) -> None:
        self.lines.append(f"{rule} FAILED  {text}")
        self.failed.append(rule)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "certificate": self.id,
            "failed": self.failed,
            "revocation_checked": self.revocation_checked,
            "lines": self.lines,
            "predicate": self.predicate,
        }


def verify_certificate(
    envelope: object,
    keys: dict[str, PublishedKey],
    *,
    receipt: dict[str, Any] | None = None,
    revocations: object = None,
) -> CertificateCheck:
    """Check a certificate offline (see the module's docstring). ``receipt`` is a receipt
    file as parsed (``{"body", "body_sha256", "emitted_at"}``); ``revocations`` the signed
    revocation list's envelope."""
    check = CertificateCheck()
    try:
        opened = open_signed(envelope, keys, CERTIFICATE_TYPE)
    except StatementError as exc:
        check.bad(exc.rule, str(exc))
        return check
    check.id = opened.id
    check.predicate = opened.statement["predicate"]
    check.good("signature", f"key {opened.key.keyid[:16]} (valid {opened.key.dates()})")
    check.good("key_dates", f"signed at {stamp(opened.signed_at)}")
    body_sha = subject_digest(opened.statement, RECEIPT_SUBJECT)
    trajectory_sha = subject_digest(opened.statement, TRAJECTORY_SUBJECT)
    if body_sha is None or trajectory_sha is None:
        check.bad("statement", "the certificate does not name a receipt body and a trajectory")
        return check
    check.good("statement", f"certificate {opened.id} over receipt body {body_sha}")
    if receipt is not None:
        _check_receipt(check, receipt, body_sha, trajectory_sha)
    if revocations is None:
        check.lines.append("revocation NOT CHECKED  (pass --revocations with the site's list)")
        return check
    try:
        listed = revocation_lists.verify_revocations(revocations, keys)
    except StatementError as exc:
        check.bad("revocations", f"the revocation list does not hold: {exc}")
        return check
    check.revocation_checked = True
    found = listed.revoked.get(opened.id)
    if found is None:
        check.good(
            "revocation",
            f"not on the list signed at {stamp(listed.signed_at)} ({len(listed.revoked)} revoked)",
        )
    else:
        check.bad(
            "revocation",
            f"revoked at {found.get('revoked_at')}: {found.get('reason')}",
        )
    return check


def _check_receipt(
    check: CertificateCheck, receipt: dict[str, Any], body_sha: str, trajectory_sha: str
) -> None:
    body = receipt.get("body")
    if not isinstance(body, dict):
        check.bad("receipt", "the receipt has no body")
        return
    try:
        recomputed = canonical.digest(body)
    except canonical.CanonicalError as exc:
        check.bad("receipt", f"the receipt's body has no canonical form ({exc})")
        return
    if recomputed != body_sha:
        check.bad(
            "receipt",
            f"the receipt's body hashes to {recomputed}; the certificate is about {body_sha}",
        )
        return
    bound = (body.get("binding") or {}).get("trajectory_sha256")
    if bound != trajectory_sha:
        check.bad(
            "receipt",
            f"the receipt binds trajectory {bound}; the certificate names {trajectory_sha}",
        )
        return
    check.good("receipt", "its body and trajectory are the certificate's subjects")
