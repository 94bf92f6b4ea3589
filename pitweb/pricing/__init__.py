"""Pricing: a release's reference prices (registered by staff, versioned, never edited)
and the platform figures of every proven run, priced with them by a worker on the
claimable-job machine (``PlatformScore``).

Imports go one way: pricing imports ``pitweb.runs`` (models, board, signals),
``pitweb.releases``, ``pitweb.jobs`` and ``pitweb.core``; ``pitweb.runs``' models and
services never import pricing (a proven run arrives through ``run_proven``); the
board's reads and pages in ``pitweb.runs`` (selectors, views, api) sit above both and
read ``PlatformScore``.
"""
