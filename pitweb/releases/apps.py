from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "pitweb.releases"
    label = "releases"
