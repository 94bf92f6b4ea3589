from django.apps import AppConfig

from pitweb.accounts import schema  # noqa: F401 - registers the OpenAPI auth scheme


class AccountsConfig(AppConfig):
    name = "pitweb.accounts"
    label = "accounts"
