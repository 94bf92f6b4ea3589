from django.apps import AppConfig

from pitweb.jobs.sweeps import register_sweep


class PointsConfig(AppConfig):
    name = "pitweb.points"
    label = "points"
    verbose_name = "judged points"

    def ready(self) -> None:
        # local: services import models, which exist once apps are loaded
        from pitweb.points.services import points_requeue_stale

        register_sweep("points", points_requeue_stale)
