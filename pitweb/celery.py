import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitweb.settings")

app = Celery("pitweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
