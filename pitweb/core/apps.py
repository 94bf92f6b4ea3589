from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "pitweb.core"
    label = "core"
