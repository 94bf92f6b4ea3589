from django.contrib import admin

from pitweb.admin_base import ReadOnlyAdmin
from pitweb.core.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "action", "actor", "run", "public", "reason")
    list_filter = ("action", "public")
    search_fields = ("reason", "run__run_id", "actor__username")
    list_select_related = ("actor", "run")
