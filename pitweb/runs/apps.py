from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "pitweb.runs"
    label = "runs"
