"""Judged points on the site: point sets (public, sealed, revealed), their answer sets,
and the judged sets over those, with every verdict.

Imports go one way: this app builds on ``pitweb.core`` and ``pitweb.jobs`` and on the
engine (``harness.points``), never on ``runs`` or ``pricing``.
"""
