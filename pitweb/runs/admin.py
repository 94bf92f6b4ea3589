from django.contrib import admin

from pitweb.admin_base import ReadOnlyAdmin
from pitweb.runs.models import ReasoningAudit, Run, VerificationJob


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = (
        "run_id",
        "agent",
        "submitter",
        "status",
        "verification_level",
        "valid",
        "mask_verdict",
        "hidden",
        "visibility",
        "submitted_at",
    )
    list_filter = (
        "status",
        "verification_level",
        "valid",
        "mask_verdict",
        "hidden",
        "visibility",
        "is_baseline",
        "agent_isolated",
    )
    search_fields = ("run_id", "body_sha256", "agent", "model_version", "submitter__username")
    exclude = ("body", "config")
    list_select_related = ("submitter",)


@admin.register(VerificationJob)
class VerificationJobAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "run",
        "kind",
        "state",
        "attempts",
        "worker",
        "created_at",
        "finished_at",
        "mismatch_check",
    )
    list_filter = ("state", "kind")
    search_fields = ("run__run_id", "worker", "mismatch_check", "reason")
    list_select_related = ("run",)


@admin.register(ReasoningAudit)
class ReasoningAuditAdmin(ReadOnlyAdmin):
    list_display = ("run", "digest", "texts", "date_hits", "issuer_hits", "created_at")
    list_select_related = ("run",)
