"""Certificates written: signed when asked for and the verdict is new, revoked by staff or
when their run is taken down; the revocation list signed as it stands, once per list."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from harness import canonical
from harness.attest.keys import parse_stamp
from harness.attest.revocations import revocations_statement
from harness.attest.statement import envelope_id
from pitweb.certificates.claims import claims_digest, run_predicate, statement_for
from pitweb.certificates.models import Certificate
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import require_reason
from pitweb.core.signing import now_stamp, signing_key, site_sign
from pitweb.runs.models import Run, Visibility

# the signed revocation list is signed again at least this often (seconds), unchanged or not
REVOCATIONS_RESIGNED_AFTER = 3600


def not_certifiable_because(run: Run) -> str | None:
    """Why the site signs nothing about ``run`` now, or None."""
    if run.withdrawn_at is not None:
        return "the run was withdrawn"
    if run.hidden:
        return "the run is hidden by staff"
    if run.visibility != Visibility.PUBLIC:
        return "the run is not public"
    if not run.proven:
        return f"the system has not proven its numbers ({run.withheld_reason})"
    return None


def certificate_current(*, run: Run) -> Certificate:
    """The certificate of what the site proves about ``run`` now: the one already signed
    if the verdict has not changed, else a new one. Refused for a run the site does not
    vouch for."""
    why = not_certifiable_because(run)
    if why is not None:
        raise SubmissionError("not_certifiable", f"no certificate: {why}", 409)
    predicate = run_predicate(run)
    claims = claims_digest(run, predicate)
    found = Certificate.objects.filter(run=run, claims=claims, revoked_at=None).first()
    if found is not None:
        return found
    signed_at = now_stamp()
    issue = Certificate.objects.filter(run=run).count() + 1
    envelope = site_sign(statement_for(run, predicate, signed_at, issue))
    _key, published = signing_key()
    try:
        with transaction.atomic():
            return Certificate.objects.create(
                run=run,
                certificate_id=envelope_id(envelope),
                claims=claims,
                envelope=canonical.dumps(envelope),
                keyid=published.keyid,
                signed_at=parse_stamp(signed_at, "signed_at"),
            )
    except IntegrityError:  # signed at the same moment by another request: theirs stands
        return Certificate.objects.get(run=run, claims=claims, revoked_at=None)


def certificate_revoke(
    *, certificate: Certificate, reason: str, staff: User | None = None
) -> Certificate:
    """Revoke one certificate (staff, with a reason; or the site, when its run is taken
    down). Revoking a revoked certificate changes nothing."""
    reason = require_reason(reason) if staff is not None else reason
    with transaction.atomic():
        changed = Certificate.objects.filter(pk=certificate.pk, revoked_at=None).update(
            revoked_at=timezone.now(), revoked_reason=reason, revoked_by=staff
        )
        if changed and staff is not None:
            audit_record(
                actor=staff, action="revoke certificate", run=certificate.run, public=True,
                reason=f"{reason} (certificate {certificate.certificate_id})",
            )  # fmt: skip
    certificate.refresh_from_db()
    return certificate


def certificates_revoke_for_run(*, run: Run, reason: str) -> int:
    """Every live certificate of ``run`` revoked: it was withdrawn, hidden or refuted."""
    return Certificate.objects.filter(run=run, revoked_at=None).update(
        revoked_at=timezone.now(), revoked_reason=reason
    )


def _revoked() -> list[dict[str, Any]]:
    """Every certificate ever revoked, oldest revocation first, as the list carries it."""
    rows = (
        Certificate.objects.exclude(revoked_at=None)
        .order_by("revoked_at", "id")
        .values_list("certificate_id", "revoked_at", "revoked_reason")
    )
    return [
        {"certificate": certificate, "revoked_at": now_stamp(at), "reason": reason}
        for certificate, at, reason in rows
    ]


def revocation_list() -> dict[str, Any]:
    """The signed list of every certificate ever revoked, oldest revocation first.

    Signed once per list, not per fetch: the rows are read on every fetch and the signed
    document is cached under the digest of the list they make (and the key that signs
    it), so a revocation, or any other change to the rows, is in the very next fetch
    whichever way it was written and whatever the cache missed; a cache that lost the
    entry only costs a signature. The entry expires after ``REVOCATIONS_RESIGNED_AFTER``,
    so ``signed_at`` still tells a reader how fresh the list is."""
    revoked = _revoked()
    _key, current = signing_key()
    key = f"revocations:{current.keyid}:{canonical.digest(revoked)}"
    signed = cache.get(key)
    if signed is None:
        signed = site_sign(revocations_statement(revoked, now_stamp()))
        cache.set(key, signed, timeout=REVOCATIONS_RESIGNED_AFTER)
    return cast(dict[str, Any], signed)
