from django.contrib import admin

from pitweb.admin_base import ReadOnlyAdmin
from pitweb.pricing.models import PlatformScore


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
