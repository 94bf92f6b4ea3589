"""Settings from the environment; production checks; the published schema is valid."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )


def test_check_deploy_is_clean_with_production_variables(tmp_path: Path) -> None:
    done = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="x" * 60 + "-a-long-random-production-secret",
        DJANGO_ALLOWED_HOSTS="pitweb.example.org",
        PITWEB_VAR_DIR=str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_production_without_a_secret_key_refuses_to_start(tmp_path: Path) -> None:
    done = manage("check", DJANGO_DEBUG="false", DJANGO_SECRET_KEY="", PITWEB_VAR_DIR=str(tmp_path))
    assert done.returncode != 0 and "DJANGO_SECRET_KEY is required" in done.stderr


def test_a_malformed_setting_fails_loudly(tmp_path: Path) -> None:
    done = manage("check", PITWEB_MAX_JSON_DEPTH="deep", PITWEB_VAR_DIR=str(tmp_path))
    assert (
        done.returncode != 0
        and "PITWEB_MAX_JSON_DEPTH='deep': an integer is required" in done.stderr
    )


def test_openapi_schema_validates_without_warnings(tmp_path: Path) -> None:
    done = manage(
        "spectacular",
        "--validate",
        "--fail-on-warn",
        "--file",
        str(tmp_path / "schema.yaml"),
        PITWEB_VAR_DIR=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert "/api/runs/" in (tmp_path / "schema.yaml").read_text()


def test_every_setting_is_listed_in_env_example() -> None:
    example = (REPO / ".env.example").read_text()
    settings_source = (REPO / "pitweb" / "settings.py").read_text()
    import re

    names = set(re.findall(r'env_(?:bool|int|list)\("([A-Z_]+)"', settings_source))
    names |= set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', settings_source))
    missing = sorted(n for n in names if f"{n}=" not in example)
    assert not missing, missing
