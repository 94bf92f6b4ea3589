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
        # the browser tests' async-unsafe switch must not reach a deploy check
        env={**{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}, **env},
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


def test_compose_file_runs_the_stack_with_health_checks() -> None:
    """No Docker engine runs in CI; this holds the file to what the README promises."""
    import yaml

    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "redis", "web", "worker", "beat"} <= set(services)
    for name in ("postgres", "redis", "web", "worker"):
        assert "healthcheck" in services[name], name
    assert services["worker"]["image"] == services["web"]["image"] == "pitweb:latest"
    assert services["worker"]["build"] == services["web"]["build"] == "."
    example = (REPO / ".env.example").read_text()
    assert "DATABASE_URL=postgres://" in example and "REDIS_URL=redis://redis:" in example
    for name in ("web", "worker", "beat"):
        assert services[name]["env_file"] == ".env"  # the database and broker URLs, secrets
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "gunicorn pitweb.wsgi:application" in services["web"]["command"]
    assert "celery -A pitweb worker" in services["worker"]["command"]
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "requirements/site.lock" in dockerfile and "--require-hashes -r site.lock" in dockerfile
    assert "dev.lock" not in dockerfile  # the image carries no development tools


def test_debug_is_off_unless_asked_for_so_a_missing_key_refuses_to_start(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "DJANGO_SECRET_KEY")}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**env, "PITWEB_VAR_DIR": str(tmp_path)},
        check=False,
    )
    assert done.returncode != 0 and "DJANGO_SECRET_KEY is required" in done.stderr


def test_the_cache_is_shared_and_never_the_brokers_database() -> None:
    from pitweb.settings import _cache_url

    assert _cache_url("redis://127.0.0.1:6379/15") == "redis://127.0.0.1:6379/0"
    assert _cache_url("redis://redis:6379/0") == "redis://redis:6379/1"
    assert _cache_url("redis://redis:6379") == "redis://redis:6379/1"


def test_the_site_hashes_passwords_with_djangos_slow_default() -> None:
    """The tests hash passwords in one round (tests/pitweb/conftest.py); the site keeps
    Django's own hasher, a key derivation slow on purpose."""
    from django.conf import global_settings

    import pitweb.settings as site

    hashers = getattr(site, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)
    assert hashers[0] == "django.contrib.auth.hashers.PBKDF2PasswordHasher"
