from django.apps import AppConfig

from pitweb.jobs.sweeps import register_sweep
from pitweb.runs.signals import run_proven


class PricingConfig(AppConfig):
    name = "pitweb.pricing"
    label = "pricing"

    def ready(self) -> None:
        # local: receivers and services import models, which exist once apps are loaded
        from pitweb.pricing import receivers, services

        run_proven.connect(receivers.score_proven, dispatch_uid="pricing-scores-proven-runs")
        register_sweep("pricing", services.platform_requeue_stale)
