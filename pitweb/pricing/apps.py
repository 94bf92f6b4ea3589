from typing import Any

from django.apps import AppConfig


class PricingConfig(AppConfig):
    name = "pitweb.pricing"
    label = "pricing"

    def ready(self) -> None:
        from pitweb.runs.signals import run_proven

        run_proven.connect(_score_proven, dispatch_uid="pricing-scores-proven-runs")


def _score_proven(sender: Any, run: Any, **kwargs: Any) -> None:
    from pitweb.pricing.services import platform_request

    platform_request(run=run)
