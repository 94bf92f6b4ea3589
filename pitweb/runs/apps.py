from django.apps import AppConfig

from pitweb.jobs.sweeps import register_sweep


class RunsConfig(AppConfig):
    name = "pitweb.runs"
    label = "runs"

    def ready(self) -> None:
        # local: services import models, which exist once apps are loaded
        from pitweb.runs.services import verification_requeue_stale

        register_sweep("verification", verification_requeue_stale)
