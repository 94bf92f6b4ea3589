"""Every URL that takes a digest (a release's content digest, a run's body hash) names
the same thing written bare or after ``sha256:``, as the site shows it; other forms (an
uppercase or foreign prefix, too short, a path, NUL) are a clear 404, never a 5xx."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from pitweb.core.params import parse_digest, parse_run_key
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run

pytestmark = pytest.mark.django_db

DIGEST_PARAMETERS = {"digest", "sha"}


def routes(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for found in patterns:
        if isinstance(found, URLResolver):
            yield from routes(found.url_patterns, prefix + str(found.pattern))
        elif isinstance(found, URLPattern):
            yield str(found.name), prefix + str(found.pattern)


def digest_routes() -> dict[str, str]:
    """name -> route of every URL with a digest parameter."""
    named = re.compile(r"<(?:\w+:)?(\w+)>")
    return {
        name: route
        for name, route in routes(get_resolver().url_patterns)
        if DIGEST_PARAMETERS & set(named.findall(route))
    }


# How each route is asked, by whom: (method, other path values, query or form data, who).
# A route taking a digest without a line here fails the first test.
ASKED = {
    "run": ("get", {}, {}, None),
    "run-cells-json": ("get", {}, {}, None),
    "run-every-eval-ever": ("get", {}, {}, None),
    "run-table": ("get", {"name": "cells"}, {"format": "json"}, None),
    "run-status-json": ("get", {}, {}, None),
    "run-download": ("get", {"what": "receipt"}, {}, None),
    "run-reasoning-audit": ("get", {}, {}, None),
    "run-staff": ("post", {"action": "flag"}, {"reason": "both ways", "flag": ""}, "staff"),
    "run-withdraw": ("post", {}, {"reason": "both ways"}, "owner"),
    "api-run": ("get", {}, {}, None),
    "run-certificate": ("get", {}, {}, None),
    "api-reverify": ("post", {}, {"reason": "both ways"}, "staff"),
    "api-withdraw": ("post", {}, {"reason": "both ways"}, "owner"),
    "api-reexecute": ("post", {}, {"reason": "both ways"}, "staff"),
    "release": ("get", {}, {}, None),
    "release-archive": ("get", {}, {}, None),
    "reference-prices-csv": ("get", {"version": "1"}, {}, None),
    "api-reference-prices": ("get", {}, {}, None),
}


def fill(route: str, digest: str, values: dict[str, str]) -> str:
    given = {"digest": digest, "sha": digest, **values}
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: given[m[1]], route)


def ask(name: str, route: str, digest: str, users: dict[str, User]) -> Any:
    method, values, data, who = ASKED[name]
    client = Client()
    if who is not None:
        client.force_login(users[who])
    return getattr(client, method)(fill(route, digest, values), data, follow=name == "run")


@pytest.fixture()
def world(
    priced_release: Any,
    submitter: User,
    staff: User,
    stub_run: Artifacts,
    django_capture_on_commit_callbacks: Any,
) -> tuple[Run, dict[str, User]]:
    with django_capture_on_commit_callbacks(execute=True):
        run = submit_run(submitter, stub_run)
    run.refresh_from_db()
    return run, {"owner": submitter, "staff": staff}


def test_every_route_taking_a_digest_is_asked_here() -> None:
    assert set(digest_routes()) == set(ASKED)


@pytest.mark.parametrize("name", sorted(ASKED))
def test_a_digest_names_the_same_thing_bare_or_after_sha256(
    name: str, world: tuple[Run, dict[str, User]]
) -> None:
    run, users = world
    route = digest_routes()[name]
    digest = run.body_sha256 if "<str:sha>" in route else run.release.content_digest
    jobs = set(run.jobs.values_list("pk", flat=True))
    bare = ask(name, route, digest.removeprefix("sha256:"), users)
    # the run as it was (not withdrawn, no new job), to be asked again
    Run.objects.filter(pk=run.pk).update(withdrawn_at=None)
    run.jobs.exclude(pk__in=jobs).delete()
    prefixed = ask(name, route, digest, users)
    assert bare.status_code == prefixed.status_code, (bare, prefixed)
    assert bare.status_code not in (404, 405) and bare.status_code < 500, bare
    if not bare.streaming and bare.get("Content-Type", "").startswith("application/json"):
        assert bare.json() == prefixed.json() or "error" not in bare.json()


HOSTILE = [
    "SHA256:{hex}",  # the prefix is sha256: exactly
    "sha512:{hex}",
    "sha256:{hex}{hex}",  # too long
    "sha256:abc",  # too short
    "sha256:" + "g" * 64,
    "sha256:",
    "sha256:sha256:{hex}",
    "..%2F..%2Fetc%2Fpasswd",
    "sha256:..%2F{hex}",
    "{hex}%00",
    "%00",
    "%ED%A0%80",
]


@pytest.mark.parametrize("name", sorted(ASKED))
def test_anything_else_in_the_digest_place_is_a_clear_404(
    name: str, world: tuple[Run, dict[str, User]]
) -> None:
    run, users = world
    route = digest_routes()[name]
    digest = run.body_sha256 if "<str:sha>" in route else run.release.content_digest
    for form in HOSTILE:
        response = ask(name, route, form.format(hex=digest[7:]), users)
        # bytes no path may hold (NUL, broken UTF-8) may be refused before any view: a 400
        unreadable = "%00" in form or "%ED" in form
        assert response.status_code in ((400, 404) if unreadable else (404,)), (form, response)
        if route.startswith("api/"):
            code = response.json()["error"]["code"]
            assert code in (("unreadable_input", "not_found") if unreadable else ("not_found",))


def test_the_parsers_say_the_rule_and_keep_what_they_accept() -> None:
    hex64 = "0f" * 32
    assert parse_digest(hex64) == parse_digest(f"sha256:{hex64}") == f"sha256:{hex64}"
    assert parse_digest(hex64.upper()) == f"sha256:{hex64}"  # hex is hex in either case
    for bad in (f"SHA256:{hex64}", f"sha512:{hex64}", hex64[:63], f"{hex64}0", "", "../x"):
        with pytest.raises(ValueError, match="64 hex digits"):
            parse_digest(bad)
    assert parse_run_key(f"sha256:{hex64[:12]}") == hex64[:12]
    assert parse_run_key(hex64[:11]) is None and parse_run_key(f"SHA256:{hex64}") is None
