"""Submitted runs: intake, verification, staff actions, and the board's reads and pages.

Imports go one way. Below: ``models`` (which imports ``pitweb.jobs`` and
``pitweb.releases``), ``board``, ``signals``; then ``services`` (intake, verifying,
staff), which import those, ``pitweb.jobs``, ``pitweb.core`` and the harness, never
``pitweb.pricing`` (a proven run is announced by ``signals.run_proven``) and never a task
but through ``services.verifying.enqueue_verification``; then ``verification`` (the
worker's work) and ``tasks``, which call services. ``selectors``, ``views`` and ``api``
sit on top and may read ``pitweb.pricing``'s models, which themselves build on these.
"""
