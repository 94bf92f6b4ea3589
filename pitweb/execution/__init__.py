"""Runs the site executes itself: registered agents (an HTTP endpoint on the host
allowlist, or a stdio package installed on the workers), execution jobs whose cells are
Celery tasks on the claimable-job machine (so several workers share a run), and the one
assembly task that writes the run as the CLI would and, for a re-execution, compares it
with the run it checks.

Imports go one way: this app builds on ``pitweb.jobs``, ``pitweb.releases`` and
``pitweb.runs`` (an executed run is stored through runs' intake); runs never import its
models or services.
"""
