"""The stale-job sweep's registry: each app registers its own share of the sweep (in its
``AppConfig.ready``), and ``tasks.sweep_stale_jobs`` runs them all, so the job machine
imports no app and no app's sweep waits on another's.

A share is a function of no arguments that hands on its jobs whose worker stopped
heart-beating and sends again those whose message was lost (``machine.sweep_stale``
says how); what it returns (the ids it sent, say) is the sweep's report.
"""

from __future__ import annotations

from collections.abc import Callable

Share = Callable[[], object]

_shares: dict[str, Share] = {}


def register_sweep(name: str, share: Share) -> None:
    """Run ``share`` with every sweep, under ``name`` (registering a name again replaces
    its share: ``ready`` may run more than once in tests)."""
    _shares[name] = share


def registered() -> list[str]:
    """The names of the registered shares, in the order they run."""
    return list(_shares)


def sweep_all() -> dict[str, object]:
    """Every registered share, in the order the apps registered them; each one's report
    by its name."""
    return {name: share() for name, share in list(_shares.items())}
