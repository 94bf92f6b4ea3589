"""The one check that ties a receipt's body, its config and the trajectory together,
and the one reading of the prices a body names.

A receipt binds ``config_sha256``; the config the body shows must hash to it, and so must
the config in the trajectory's first event. ``verify``, ``rederive`` and the site all ask
here, so they cannot come to different answers. A priced run names its price file twice:
in the bound config (``bound_prices``) and in P4's statement (``stated_prices``).
"""

from __future__ import annotations

from typing import Any

from harness import canonical

_NOT_GIVEN = object()


def _digest(value: Any) -> str | None:
    try:
        return canonical.digest(value)
    except canonical.CanonicalError:
        return None


def config_binding(
    body: dict[str, Any], trajectory_config: Any = _NOT_GIVEN
) -> list[tuple[str, str]]:
    """(check, problem) for each way the binding fails; an empty list when it holds.

    ``receipt_config``: the body's config does not hash to the bound ``config_sha256``.
    ``config_sha256``: the trajectory's ``run_start`` config (when given) does not.
    """
    bound = (body.get("binding") or {}).get("config_sha256")
    problems = []
    shown = _digest(body.get("config")) if body.get("config") is not None else None
    if shown is None or shown != bound:
        problems.append(
            ("receipt_config", f"the receipt's config hashes to {shown}, its binding says {bound}")
        )
    if trajectory_config is not _NOT_GIVEN:
        started = _digest(trajectory_config)
        if started != bound:
            problems.append(
                (
                    "config_sha256",
                    f"the trajectory's config hashes to {started}, the receipt binds {bound}",
                )
            )
    return problems


def stated_prices(body: dict[str, Any]) -> Any:
    """The price file the body's P4 slot states (``None`` for an unpriced run): what
    the run's scores were priced with, in the receipt's own words."""
    protocol = body.get("protocol")
    p4 = protocol.get("P4_costs_and_frictions") if isinstance(protocol, dict) else None
    return p4.get("prices") if isinstance(p4, dict) else None


def bound_prices(body: dict[str, Any]) -> Any:
    """The price file the body's config names (``None`` for an unpriced run); the
    config is the one ``config_sha256`` binds (``config_binding`` checks it)."""
    config = body.get("config")
    return config.get("prices") if isinstance(config, dict) else None
