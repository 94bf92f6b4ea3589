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
