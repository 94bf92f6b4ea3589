"""The one check that ties a receipt's body, its config and the trajectory together.

A receipt binds ``config_sha256``; the config the body shows must hash to it, and so must
the config in the trajectory's first event. ``verify``, ``rederive`` and the site all ask
here, so they cannot come to different answers.
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
