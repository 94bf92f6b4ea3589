"""The demo's submitter signs in with a password made once per machine, which the demo
prints (scripts/demo.sh prints it again before serving)."""

from __future__ import annotations

import stat
from pathlib import Path

from pitweb.runs.management.commands.demo_seed import _demo_password

REPO = Path(__file__).resolve().parents[3]


def test_the_demo_password_is_made_once_kept_private_and_read_back(tmp_path: Path) -> None:
    kept = tmp_path / "var" / "demo-submitter-password"
    first = _demo_password(kept)
    assert len(first) >= 16 and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert _demo_password(kept) == first
    assert _demo_password(tmp_path / "elsewhere") != first  # not a constant of the project


def test_the_demo_prints_how_to_sign_in() -> None:
    script = (REPO / "scripts" / "demo.sh").read_text()
    assert "/accounts/login/" in script and "var/demo-submitter-password" in script
    seed = (REPO / "pitweb/runs/management/commands/demo_seed.py").read_text()
    assert "submitter sign-in: demo / {password}" in seed
    assert "/admin/login/" not in script + seed
