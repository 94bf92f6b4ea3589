from django.contrib import admin

from pitweb.admin_base import ReadOnlyAdmin
from pitweb.runs.models import AuditEvent, PlatformScore, Run, VerificationJob


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


@admin.register(PlatformScore)
class PlatformScoreAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "run",
        "prices",
        "state",
        "shifted_pit",
        "shifted_pit_priced",
        "attempts",
        "finished_at",
    )
    list_filter = ("state",)
    search_fields = ("run__run_id",)
    exclude = ("figures",)
    list_select_related = ("run", "prices", "prices__release")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "action", "actor", "run", "public", "reason")
    list_filter = ("action", "public")
    search_fields = ("reason", "run__run_id", "actor__username")
    list_select_related = ("actor", "run")
