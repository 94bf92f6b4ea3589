"""Who may open a page: a visitor is sent to the site's sign-in (never the admin's);
a signed-in account without the right gets the 403 page, and nothing is done."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase


def staff_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Staff only: a visitor signs in first (and comes back), a submitter is refused."""

    @wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        user = request.user
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (user.is_active and user.is_staff):
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return checked
