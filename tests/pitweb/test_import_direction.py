"""Imports go one way between the site's apps, as each app's docstring says. Read off
the source with ``ast`` (nothing is imported), so a new import that turns a direction
around fails here, not later as a circular import."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[2] / "pitweb"


def module_name(path: Path) -> str:
    parts = path.relative_to(SITE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def site_modules() -> dict[str, Path]:
    return {module_name(p): p for p in SITE.rglob("*.py") if "migrations" not in p.parts}


def _under_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path, *, top_level_only: bool) -> Iterator[tuple[str, str | None]]:
    """(imported module, enclosing function or None) for every import of a ``pitweb``
    module in ``path``; imports under ``if TYPE_CHECKING`` are skipped."""

    def walk(node: ast.AST, function: str | None) -> Iterator[tuple[str, str | None]]:
        for child in ast.iter_child_nodes(node):
            if _under_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                yield from ((a.name, function) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                yield child.module, function
                yield from ((f"{child.module}.{a.name}", function) for a in child.names)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not top_level_only:
                    yield from walk(child, child.name)
            else:
                yield from walk(child, function)

    tree = ast.parse(path.read_text())
    yield from ((m, f) for m, f in walk(tree, None) if m.startswith("pitweb"))


def real(name: str, modules: dict[str, Path]) -> str | None:
    """The site module an imported name lives in (``pitweb.runs.models.Run`` is
    ``pitweb.runs.models``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def app_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_module_level_imports_between_site_modules_have_no_cycle() -> None:
    modules = site_modules()
    graph = {
        name: {
            target
            for imported, _ in imports(path, top_level_only=True)
            if (target := real(imported, modules)) and target != name
        }
        for name, path in modules.items()
    }
    # a package importing its own submodules to re-export them is not a cycle
    for name in graph:
        graph[name] = {t for t in graph[name] if not (name.startswith(t + ".") and t == name)}
    seen: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        seen[node] = 1
        for target in sorted(graph.get(node, ())):
            if seen.get(target) == 1:
                cycle.extend([*stack[stack.index(target) :], target])
                return True
            if target not in seen and visit(target, [*stack, target]):
                return True
        seen[node] = 2
        return False

    for node in sorted(graph):
        if node not in seen and visit(node, [node]):
            break
    assert cycle == [], " -> ".join(cycle)


@pytest.mark.parametrize(
    ("app", "may_import"),
    [
        ("pitweb.jobs", {"pitweb.artifacts"}),  # a dead worker's scratch folders
        ("pitweb.core", {"pitweb.admin_base"}),
        # its page draws rows per day with the site's pure chart functions; the fetcher
        # builds a version in a worker's scratch folder; the staff register page is staff's
        (
            "pitweb.releases",
            {
                "pitweb.admin_base",
                "pitweb.core",
                "pitweb.charts",
                "pitweb.artifacts",
                "pitweb.accounts.access",
            },
        ),
    ],
)
def test_a_foundation_app_imports_no_app_built_on_it(app: str, may_import: set[str]) -> None:
    modules = site_modules()
    wrong = sorted(
        f"{name} imports {target}"
        for name, path in modules.items()
        if app_of(name) == app
        for imported, _ in imports(path, top_level_only=False)
        if (target := real(imported, modules))
        and app_of(target) != app
        and not any(target == m or target.startswith(m + ".") for m in may_import)
    )
    assert wrong == []


def test_runs_models_and_services_never_import_pricing() -> None:
    modules = site_modules()
    below = [
        n for n in modules if n == "pitweb.runs.models" or n.startswith("pitweb.runs.services")
    ]
    wrong = sorted(
        f"{name} imports {imported}"
        for name in below
        for imported, _ in imports(modules[name], top_level_only=False)
        if imported.startswith("pitweb.pricing")
    )
    assert wrong == []


def test_services_reach_tasks_only_through_their_enqueue_function() -> None:
    modules = site_modules()
    services = [n for n in modules if n.endswith(".services") or ".services." in n]
    assert len(services) >= 4, services
    wrong = sorted(
        f"{name} imports {imported} in {function or 'the module'}"
        for name in services
        for imported, function in imports(modules[name], top_level_only=False)
        if imported.split(".")[-1] == "tasks" or ".tasks." in imported
        if function is None or not function.startswith("enqueue_")
    )
    assert wrong == []
