from django.conf import settings
from django.db import models


class AuditEvent(models.Model):
    """A staff action (who, what, why, when); public runs' events form the changelog."""

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=40)
    run = models.ForeignKey(
        "runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events"
    )
    reason = models.TextField()
    public = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # the table it has had since the audit log lived in the runs app: no data moves
        db_table = "runs_auditevent"
        ordering = ["-created_at", "-id"]


class GeneratedSigningKey(models.Model):
    """The signing key the site made on first use, where no key file is configured: kept
    in the database, so every machine of the site signs with the one key (``slot`` is
    unique: of two processes making one together, the first insert wins)."""

    slot = models.CharField(max_length=16, unique=True, default="site")
    pem = models.TextField()  # PKCS#8, unencrypted
    valid_from = models.CharField(max_length=32)  # the moment it was made, ISO 8601
