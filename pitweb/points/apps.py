from django.apps import AppConfig


class PointsConfig(AppConfig):
    name = "pitweb.points"
    label = "points"
    verbose_name = "judged points"
