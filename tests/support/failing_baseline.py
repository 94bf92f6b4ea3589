"""A baseline that cannot run: every decision raises (for the demo's refusal test)."""

from __future__ import annotations

from typing import Any


def decide(prompt: str, tools: Any) -> list[str]:
    raise RuntimeError("this baseline is broken on purpose")
