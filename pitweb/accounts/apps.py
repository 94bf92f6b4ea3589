from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "pitweb.accounts"
    label = "accounts"

    def ready(self) -> None:
        from pitweb.accounts import schema  # noqa: F401 - registers the OpenAPI auth scheme
