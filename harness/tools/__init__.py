"""The four point-in-time window tools an agent may call (``toolbox``).

``Toolbox`` is also importable from here (loaded on first use, so the sandbox's side can
import this package without the release reader)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.tools.toolbox import Toolbox

__all__ = ["Toolbox"]


def __getattr__(name: str) -> Any:
    if name == "Toolbox":
        from harness.tools.toolbox import Toolbox

        return Toolbox
    raise AttributeError(f"module 'harness.tools' has no attribute {name!r}")
