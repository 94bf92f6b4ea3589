"""The boundaries `make lint` enforces (import-linter contracts in pyproject.toml) hold on
this tree and catch a crossing: a copy of the tree with one forbidden import planted
fails, naming the contract it breaks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    if not LINT.exists():
        pytest.fail(f"{LINT.name} is not installed: make setup installs the dev tools")
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=root, capture_output=True, text=True, check=False
    )


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(ROOT / "pyproject.toml", tree)
    for package in ("harness", "pit_harness", "pitweb"):
        shutil.copytree(
            ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tree


def test_the_tree_keeps_every_contract() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 broken" in done.stdout


def test_the_engine_importing_the_site_breaks_a_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    target = tree / "harness" / "canonical.py"
    target.write_text(target.read_text() + "\nfrom pitweb import settings  # planted\n")
    done = _lint(tree)
    assert done.returncode != 0
    assert "the engine never imports the site, Django or Celery BROKEN" in " ".join(
        done.stdout.split()
    )
    assert "harness.canonical -> pitweb.settings" in done.stdout


def test_the_sandbox_plumbing_importing_pandas_breaks_a_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    target = tree / "harness" / "isolation" / "sandbox" / "channel.py"
    target.write_text(target.read_text() + "\nimport pandas  # planted\n")
    done = _lint(tree)
    assert done.returncode != 0
    assert "harness.isolation.sandbox.channel -> pandas" in done.stdout


def test_the_exports_importing_inspect_break_a_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    target = tree / "harness" / "interchange" / "inspect_log.py"
    target.write_text(target.read_text() + "\nimport inspect_ai  # planted\n")
    done = _lint(tree)
    assert done.returncode != 0
    assert "the exports never import Inspect: the harness writes its log format itself BROKEN" in (
        " ".join(done.stdout.split())
    )
    assert "harness.interchange.inspect_log -> inspect_ai" in done.stdout
