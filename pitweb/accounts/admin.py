from django.contrib import admin

from pitweb.accounts.models import ApiToken
from pitweb.admin_base import ReadOnlyAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Tokens by prefix and owner; the token itself is never stored (its hash is not shown)."""

    list_display = ("prefix", "user", "created_at", "last_used_at", "revoked")
    list_filter = ("revoked",)
    search_fields = ("prefix", "user__username")
    exclude = ("key_hash",)
    list_select_related = ("user",)
