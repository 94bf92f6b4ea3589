from django.apps import AppConfig

from pitweb.jobs.sweeps import register_sweep


class ExecutionConfig(AppConfig):
    name = "pitweb.execution"
    label = "execution"
    verbose_name = "execution"

    def ready(self) -> None:
        # local: services import models, which exist once apps are loaded
        from pitweb.execution.services import execution_requeue_stale

        register_sweep("execution", execution_requeue_stale)
