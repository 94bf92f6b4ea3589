from django.apps import AppConfig


class CertificatesConfig(AppConfig):
    name = "pitweb.certificates"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from pitweb.certificates import receivers  # noqa: F401 (connects the receivers)
