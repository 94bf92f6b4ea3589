"""Golden files: what an artifact must be byte for byte (``tests/golden/``), and the
placeholder for what the machine or the clock decides. ``PIT_GOLDEN_UPDATE=1`` rewrites
them (for a change an issue asks for, to be read in review)."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
VOLATILE = "<volatile>"


def matches(name: str, text: str) -> None:
    """``text`` equals the golden file ``name`` (or becomes it, when updating)."""
    path = GOLDEN / name
    if os.environ.get("PIT_GOLDEN_UPDATE") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: PIT_GOLDEN_UPDATE=1 writes it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its golden file"


def body_text(receipt: Path) -> str:
    raw = receipt.read_text(encoding="utf-8")
    return raw[len('{"body":') : raw.index(',"body_sha256":')]
