from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "pitweb.jobs"
    label = "jobs"
