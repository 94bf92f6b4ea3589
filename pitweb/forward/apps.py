from django.apps import AppConfig


class ForwardConfig(AppConfig):
    name = "pitweb.forward"
    label = "forward"
    verbose_name = "forward track"
    default_auto_field = "django.db.models.BigAutoField"
