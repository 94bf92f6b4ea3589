"""pitweb: the site that stores, re-verifies and ranks submitted runs."""

from pitweb.celery import app as celery_app

__all__ = ["celery_app"]
