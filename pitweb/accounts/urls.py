from django.contrib.auth import views as auth
from django.urls import path, reverse_lazy

from pitweb.accounts import views

# Django's own password views, with the site's templates: reset by a mailed link (the
# console in development and in the demo: DJANGO_EMAIL_BACKEND), change when signed in
FORM = "accounts/form.html"
NOTICE = "accounts/notice.html"

urlpatterns = [
    path("accounts/", views.account_page, name="account"),
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/signup/", views.signup_page, name="signup"),
    path("accounts/signup/<str:key>/", views.signup_page, name="signup-invited"),
    path("accounts/tokens/", views.token_create, name="token-create"),
    path("accounts/tokens/<int:token_id>/revoke", views.token_revoke, name="token-revoke"),
    path("accounts/invitations/", views.invitations_page, name="invitations"),
    path(
        "accounts/password/reset/",
        views.ResetView.as_view(
            template_name=FORM,
            email_template_name="accounts/password_reset_email.txt",
            subject_template_name="accounts/password_reset_subject.txt",
            extra_context={
                "heading": "Reset your password",
                "intro": "Give your account's email address: a link to choose a new "
                "password is mailed to it (if an account has that address).",
                "button": "Mail me a link",
            },
        ),
        name="password_reset",
    ),
    path(
        "accounts/password/reset/sent/",
        auth.PasswordResetDoneView.as_view(
            template_name=NOTICE,
            extra_context={
                "heading": "Check your mail",
                "notice": "If an account has that address, a link to choose a new password "
                "is on its way. It works once, for a few days.",
            },
        ),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth.PasswordResetConfirmView.as_view(
            template_name=FORM,
            extra_context={
                "heading": "Choose a new password",
                "button": "Set my password",
                "refused": "This password-reset link is not valid (it was used, or it "
                "expired). Ask for a new one.",
            },
        ),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth.PasswordResetCompleteView.as_view(
            template_name=NOTICE,
            extra_context={
                "heading": "Your password is set",
                "notice": "Sign in with your new password.",
                "sign_in": True,
            },
        ),
        name="password_reset_complete",
    ),
    path(
        "accounts/password/change/",
        auth.PasswordChangeView.as_view(
            template_name=FORM,
            success_url=reverse_lazy("password_change_done"),
            extra_context={"heading": "Change your password", "button": "Change my password"},
        ),
        name="password_change",
    ),
    path(
        "accounts/password/change/done/",
        auth.PasswordChangeDoneView.as_view(
            template_name=NOTICE,
            extra_context={
                "heading": "Your password is changed",
                "notice": "Nothing else changed: your API tokens still work.",
            },
        ),
        name="password_change_done",
    ),
]
