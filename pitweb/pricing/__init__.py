"""Pricing: a release's reference prices (registered by staff, versioned, never edited)
and the platform figures of every proven run, priced with them by a worker on the
claimable-job machine (``PlatformScore``); and their API (``api``: the versions, and
staff registering the next one).

Imports go one way: pricing imports ``pitweb.runs`` (models, signals, the API's input
checks), ``pitweb.releases``, ``pitweb.jobs`` and ``pitweb.core``, and of the board only
its announcement (``pitweb.board.changes``); ``pitweb.runs``' models and services never
import pricing (a proven run arrives through ``run_proven``); the board
(``pitweb.board``) sits above both and reads ``PlatformScore``.
"""
