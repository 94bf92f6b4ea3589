"""Imports of the project's own modules sit at the top of a module: one inside a function
is there for a reason (a sandbox that must start light, a command that loads pandas, an
app's ``ready``), and their number is held under a ceiling so that a cycle is never again
held shut by hiding its imports in function bodies (there were 109; the ceiling is half)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CEILING = 54
OWN = ("harness", "pit_harness", "pitweb")


def local_imports(source: str) -> list[int]:
    """Lines of the imports of the project's own modules made inside a function."""
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            names: list[str] = []
            if isinstance(inner, ast.Import):
                names = [alias.name for alias in inner.names]
            elif isinstance(inner, ast.ImportFrom) and inner.level == 0 and inner.module:
                names = [inner.module]
            if any(name.split(".")[0] in OWN for name in names):
                found.append(inner.lineno)
    return sorted(set(found))


def test_function_local_imports_of_our_own_modules_stay_under_the_ceiling() -> None:
    counted = {}
    for package in OWN:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            lines = local_imports(path.read_text(encoding="utf-8"))
            if lines:
                counted[path.relative_to(ROOT).as_posix()] = lines
    total = sum(len(lines) for lines in counted.values())
    assert total <= CEILING, f"{total} function-local imports (ceiling {CEILING}): {counted}"


def test_an_import_inside_a_function_is_counted_and_one_at_the_top_is_not() -> None:
    source = (
        "from pitweb.core import errors\n"
        "import json\n"
        "def f():\n"
        "    from pitweb.runs import models\n"
        "    import harness.canonical\n"
        "    import json\n"
        "    def g():\n"
        "        from pitweb.jobs.machine import Outcome\n"
    )
    assert local_imports(source) == [4, 5, 8]
