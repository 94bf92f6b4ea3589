"""The sign-in and sign-up forms. Sign-in counts failures per account and per address
(pitweb.accounts.signin_limits) and refuses, before checking the password, an account or
address over its limit."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from pitweb.accounts.signin_limits import client_address, signin_failure_record, signin_refusal

RATE_LIMITED = "rate_limited"


class SignInForm(AuthenticationForm):
    """The site's sign-in form; the admin's login form (below) counts the same failures,
    so the admin's page is no way around the limits."""

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username") or "")
        address = client_address(self.request) if self.request is not None else ""
        refusal = signin_refusal(username=username, address=address)
        if refusal is not None:
            raise ValidationError(refusal.message, code=RATE_LIMITED)
        try:
            return super().clean()
        except ValidationError:
            now_refused = signin_failure_record(username=username, address=address)
            if now_refused is not None:
                raise ValidationError(now_refused.message, code=RATE_LIMITED) from None
            raise

    @property
    def rate_limited(self) -> bool:
        return any(e.code == RATE_LIMITED for e in self.errors.as_data().get("__all__", []))


class AdminSignInForm(SignInForm, AdminAuthenticationForm):
    """The admin's login (staff only), limited as the site's sign-in is."""


class SignUpForm(UserCreationForm):  # type: ignore[type-arg]
    email = forms.EmailField(
        required=False, help_text="Optional: where a password-reset link is sent."
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, required=False, help_text="What the token is for, e.g. 'laptop'."
    )


class InvitationForm(forms.Form):
    note = forms.CharField(
        max_length=200, required=False, help_text="Who it is for (shown to staff only)."
    )
    days = forms.IntegerField(min_value=1, max_value=90, initial=7, label="Valid for (days)")
