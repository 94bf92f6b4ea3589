"""The account pages: sign-in (limited per account and address), sign-up (by a staff
invitation, or open where the site allows it), the account page (tokens, runs, answer
sets, executions, families) and the staff's invitations. Password reset and change are
Django's own views with these templates (pitweb.accounts.urls)."""

from __future__ import annotations

from typing import Any, cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView, PasswordResetView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from pitweb.accounts import selectors, services
from pitweb.accounts.access import staff_required
from pitweb.accounts.forms import InvitationForm, SignInForm, SignUpForm, TokenForm
from pitweb.accounts.signin_limits import client_address, reset_request_record
from pitweb.core.errors import SubmissionError


class SignInView(LoginView):
    template_name = "accounts/login.html"
    authentication_form = SignInForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        wanted = self.get_redirect_url()
        # sent here from a page that needs an account: say so, and say when it is staff's
        context["sent_from"] = wanted
        context["open_signup"] = settings.PITWEB_OPEN_SIGNUP
        return context

    def form_invalid(self, form: SignInForm) -> HttpResponse:  # type: ignore[override]
        response = super().form_invalid(form)
        if form.rate_limited:
            response.status_code = 429
        return response


class ResetView(PasswordResetView):
    """Django's password reset, limited per address like sign-in (each request may mail)."""

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        refusal = reset_request_record(address=client_address(self.request))
        if refusal is not None:
            form.add_error(None, refusal.message)
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        return super().form_valid(form)


@never_cache
def signup_page(request: HttpRequest, key: str | None = None) -> HttpResponse:
    """Sign-up with a staff invitation's link (``key``) or, where it is open, without."""
    context: dict[str, Any] = {"open_signup": settings.PITWEB_OPEN_SIGNUP, "key": key}
    if key is None and not settings.PITWEB_OPEN_SIGNUP:
        # by invitation only: this page creates nothing, whatever is posted to it
        return render(
            request,
            "accounts/signup.html",
            context,
            status=403 if request.method == "POST" else 200,
        )
    if key is not None:
        try:
            services.invitation_usable(key)
        except SubmissionError as exc:
            context["refused"] = exc.message
            return render(request, "accounts/signup.html", context, status=exc.http_status)
    form = SignUpForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            user = services.account_create(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                email=form.cleaned_data.get("email") or "",
                invitation_key=key,
            )
        except SubmissionError as exc:
            form.add_error(None, exc.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}: your account is ready.")
            return redirect("account")
    context["form"] = form
    return render(request, "accounts/signup.html", context, status=400 if form.errors else 200)


@login_required
def account_page(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    return render(
        request,
        "accounts/account.html",
        {"page": selectors.account_page(user), "token_form": TokenForm()},
    )


@never_cache
@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    """A new token, shown on this response once (nothing keeps it: not the session, not
    a cache; the page says so)."""
    form = TokenForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(str(e) for e in form.errors["name"])
        messages.error(request, f"Nothing was created: {problems}")
        return redirect(reverse("account") + "#tokens")
    try:
        token = services.token_issue(user=cast(User, request.user), name=form.cleaned_data["name"])
    except SubmissionError as exc:
        messages.error(request, f"Nothing was created: {exc.message}.")
        return redirect(reverse("account") + "#tokens")
    return render(
        request,
        "accounts/token_created.html",
        {
            "token": token,
            "name": form.cleaned_data["name"],
            "site": request.build_absolute_uri("/").rstrip("/"),
        },
    )


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        token = services.token_revoke(user=cast(User, request.user), token_id=token_id)
    except SubmissionError:
        messages.error(request, "Nothing was done: no such token of yours.")
        return redirect(reverse("account") + "#tokens")
    messages.success(request, f"Token {token.prefix}… is revoked: it no longer works.")
    return redirect(reverse("account") + "#tokens")


@never_cache
@staff_required
def invitations_page(request: HttpRequest) -> HttpResponse:
    """Staff make one-time sign-up links and see who used which."""
    form = InvitationForm(
        request.POST if request.method == "POST" else None,
        initial={"days": settings.PITWEB_INVITATION_DAYS},
    )
    link = ""
    if request.method == "POST" and form.is_valid():
        try:
            key = services.invitation_create(
                staff=cast(User, request.user),
                note=form.cleaned_data["note"],
                days=form.cleaned_data["days"],
            )
        except SubmissionError as exc:
            form.add_error(None, exc.message)
        else:
            link = request.build_absolute_uri(reverse("signup-invited", args=[key]))
            form = InvitationForm(initial={"days": settings.PITWEB_INVITATION_DAYS})
    return render(
        request,
        "accounts/invitations.html",
        {
            "form": form,
            "link": link,
            "invitations": selectors.invitations()[:200],
            "open_signup": settings.PITWEB_OPEN_SIGNUP,
        },
        status=400 if form.errors else 200,
    )
