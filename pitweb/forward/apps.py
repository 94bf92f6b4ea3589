from django.apps import AppConfig

from pitweb.runs.signals import run_proven


class ForwardConfig(AppConfig):
    name = "pitweb.forward"
    label = "forward"
    verbose_name = "forward track"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # local: receivers import models, which exist once apps are loaded
        from pitweb.forward import receivers
        from pitweb.releases.signals import release_version_registered

        release_version_registered.connect(
            receivers.schedule_version, dispatch_uid="forward-schedules-new-versions"
        )
        run_proven.connect(receivers.check_proven, dispatch_uid="forward-checks-proven-runs")
