"""The forward track in the admin, read only: the log is appended to by its services and
never edited (``LogEntry.save``); a commitment changes only by a withdrawal entry."""

from django.contrib import admin

from pitweb.admin_base import ReadOnlyAdmin
from pitweb.forward.models import Commitment, LogEntry


@admin.register(LogEntry)
class LogEntryAdmin(ReadOnlyAdmin):
    list_display = ("seq", "kind", "stamped_at", "digest")
    list_filter = ("kind",)


@admin.register(Commitment)
class CommitmentAdmin(ReadOnlyAdmin):
    list_display = ("entry", "agent", "owner", "release_name", "committed_at", "withdrawal")
    list_select_related = ("entry", "agent", "owner", "withdrawal")
    search_fields = ("agent__name", "owner__username", "release_name")
