from django.contrib import admin

from pitweb.accounts.forms import AdminSignInForm
from pitweb.accounts.models import ApiToken, Invitation
from pitweb.admin_base import ReadOnlyAdmin

# the admin's own login counts failed sign-ins with the site's (pitweb.accounts.signin_limits)
admin.site.login_form = AdminSignInForm


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Tokens by prefix and owner; the token itself is never stored (its hash is not shown)."""

    list_display = ("prefix", "name", "user", "created_at", "last_used_at", "revoked")
    list_filter = ("revoked",)
    search_fields = ("prefix", "name", "user__username")
    exclude = ("key_hash",)
    list_select_related = ("user",)


@admin.register(Invitation)
class InvitationAdmin(ReadOnlyAdmin):
    """Invitations by prefix: made on the invitations page or with ``manage.py invite``."""

    list_display = ("prefix", "note", "created_by", "created_at", "expires_at", "used_by")
    search_fields = ("prefix", "note", "used_by__username")
    exclude = ("key_hash",)
    list_select_related = ("created_by", "used_by")
