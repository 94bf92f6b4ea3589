from django.contrib import admin

from pitweb.admin_base import ReadOnlyAdmin
from pitweb.releases.models import ReferencePrices, Release


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdmin):
    list_display = (
        "name",
        "version",
        "content_digest",
        "parent",
        "window_start",
        "window_end",
        "row_count",
        "registered_at",
    )
    search_fields = ("name", "content_digest")
    exclude = ("manifest",)
    list_select_related = ("parent",)


@admin.register(ReferencePrices)
class ReferencePricesAdmin(ReadOnlyAdmin):
    list_display = (
        "release",
        "version",
        "source",
        "pulled_at",
        "basis",
        "file_sha256",
        "registered_by",
        "registered_at",
    )
    list_filter = ("basis",)
    search_fields = ("release__name", "source", "file_sha256")
    list_select_related = ("release", "registered_by")
