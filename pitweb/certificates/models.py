"""A certificate as signed: never edited, but revoked (its revocation is a fact about it,
and the signed revocation list is built from these rows)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Certificate(models.Model):
    """One signed statement about one run. ``claims`` is the digest of what it says but
    its time, so an unchanged verdict is signed once; a verdict that changed (re-executed
    since, priced again, forward-tested) is a new certificate, and the old one stands as
    what was true when it was signed."""

    run = models.ForeignKey("runs.Run", on_delete=models.PROTECT, related_name="certificates")
    certificate_id = models.CharField(max_length=71, unique=True)  # sha256 of the statement
    claims = models.CharField(max_length=71)
    envelope = models.TextField()  # canonical JSON of the DSSE envelope, served as is
    keyid = models.CharField(max_length=64)
    signed_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.TextField(blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip

    class Meta:
        ordering = ["-signed_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "claims"],
                condition=Q(revoked_at__isnull=True),
                name="one_live_certificate_per_verdict",
            )
        ]

    def __str__(self) -> str:
        return f"certificate {self.certificate_id[:19]}"
