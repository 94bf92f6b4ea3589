"""What the command-line tests share: a working folder as a newcomer's first run has it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


@pytest.fixture()
def session(march_release: Path, tmp_path: Path) -> Path:
    """A working folder with run.json pointing at a copy of the release."""
    shutil.copytree(march_release, tmp_path / "release")
    (tmp_path / "run.json").write_text(
        json.dumps(
            {"bundle_path": "release", "forms": ["8-K"], "start": "2023-03-01", "end": "2023-03-10"}
        )
    )
    return tmp_path
