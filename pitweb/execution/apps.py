from django.apps import AppConfig


class ExecutionConfig(AppConfig):
    name = "pitweb.execution"
    label = "execution"
    verbose_name = "execution"
