from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "pitweb.accounts"
    label = "accounts"
