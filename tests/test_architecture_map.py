"""docs/architecture.md's map names every module of the engine and the site."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "architecture.md"


def modules() -> list[Path]:
    """Every module of ``harness`` and ``pitweb`` but package markers and migrations."""
    found = []
    for package in ("harness", "pitweb"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if path.name in ("__init__.py", "__main__.py") or "migrations" in relative.parts:
                continue
            found.append(relative)
    return found


def listed(module: Path, lines: list[str]) -> bool:
    """Named by its path, or by its file name (a command by its name) on a line that
    names one of the folders it lives in."""
    if module.as_posix() in "\n".join(lines):
        return True
    names = {module.name} | ({module.stem} if "commands" in module.parts else set())
    folders = [Path(*module.parts[:n]).as_posix() + "/" for n in range(1, len(module.parts))]
    for line in lines:
        mentioned = set(re.findall(r"`([^`]+)`", line))
        words = {Path(m).name for m in mentioned} | mentioned
        if names & words and any(f"`{folder}" in line for folder in folders[1:]):
            return True
    return False


def test_the_architecture_map_names_every_module() -> None:
    lines = MAP.read_text(encoding="utf-8").splitlines()
    missing = [m.as_posix() for m in modules() if not listed(m, lines)]
    assert not missing, f"docs/architecture.md does not name: {', '.join(missing)}"


def test_a_module_left_out_of_the_map_is_caught() -> None:
    lines = MAP.read_text(encoding="utf-8").splitlines()
    assert not listed(Path("pitweb/runs/not_a_module.py"), lines)
    assert not listed(Path("harness/nowhere/views.py"), lines)
