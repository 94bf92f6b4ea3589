"""Hostile parameters: every URL pattern of the URLconf, with real and hostile path keys,
gets each fuzz class as every parameter its view reads, by GET and by POST (no body, an
empty form, JSON null, the fuzz in a form or a JSON body): nothing answers 5xx, an id
(``submission``, ``page``) that is not 0-9 digits in the id column's range is a 400, and a
body-less or form-less POST is a clean 400."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_from_bytes

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.http import QueryDict
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RoutePattern
from django.utils.datastructures import MultiValueDict

from pitweb.runs import services
from pitweb.runs.models import Run
from tests.pitweb.conftest import Artifacts, submit_run, token_client

pytestmark = pytest.mark.django_db  # each fuzzed request is rolled back: the world stays


@dataclass(frozen=True)
class Fuzz:
    name: str
    query: str  # as it stands in a URL, percent-encoded
    form: bytes  # as it stands in a form field
    json: str  # a JSON literal
    twice: bool = False  # the parameter given twice ("1", then "2")


BIGINT = connection.ops.integer_field_range("BigAutoField")[1] or 2**63 - 1
FUZZ = [
    Fuzz("superscript two", quote("²"), "²".encode(), '"²"'),
    Fuzz("arabic-indic three", quote("٣"), "٣".encode(), '"٣"'),
    Fuzz("5000 digits", "9" * 5000, b"9" * 5000, "9" * 5000),
    Fuzz("negative", "-1", b"-1", "-1"),
    Fuzz("exponent", "1e3", b"1e3", "1e3"),
    Fuzz("NUL", "%00", b"\x00", '"\\u0000"'),
    Fuzz("lone surrogate", "%ED%A0%80", b"\xed\xa0\x80", '"\\ud800"'),
    Fuzz("bigint + 1", str(BIGINT + 1), str(BIGINT + 1).encode(), str(BIGINT + 1)),
    Fuzz("30 digits", "9" * 30, b"9" * 30, "9" * 30),
    Fuzz("repeated", "1", b"1", "[1, 2]", twice=True),
]
ID_PARAMS = ("submission", "page")  # ids: every fuzz class above is a 400 for them
FORM_FIELDS = {  # what the real form of a POST endpoint holds, so a fuzzed field goes deep
    "run-staff": {"reason": "fuzzing", "confirm": "yes"},
    "api-reverify": {"reason": "fuzzing"},
}
BOUNDARY = "FuZzBoUnDaRy"


@dataclass(frozen=True)
class World:
    shown: Run
    hidden: Run
    values: dict[str, str]  # a real value for each path parameter name
    staff: User


def copy_of(template: Run, n: int, **fields: Any) -> Run:
    return Run.objects.create(
        **{
            f.name: getattr(template, f.name)
            for f in Run._meta.concrete_fields
            if f.name not in ("id", "run_id", "body_sha256", "submitted_at", *fields)
        },
        run_id=f"{0xF0 + n:016x}",
        body_sha256=f"sha256:{'ab' * 26}{0xF0 + n:012x}",
        **fields,
    )


@pytest.fixture()
def world(
    priced_release: Any,
    submitter: User,
    other: User,
    staff: User,
    stub_run: Artifacts,
    django_capture_on_commit_callbacks: Any,
) -> World:
    with django_capture_on_commit_callbacks(execute=True):  # verified and priced for real
        shown = submit_run(submitter, stub_run)
    shown.refresh_from_db()
    assert shown.status == "verified" and shown.platform.state == "scored"  # pages go deep
    hidden = copy_of(shown, 1, hidden=True, submitter=other)
    copy_of(shown, 2, visibility="private", submitter=other)
    services.board_changed()
    sha = shown.body_sha256.removeprefix("sha256:")
    values = {
        "sha": sha,
        "name": "cells",
        "what": "receipt",
        "action": "reverify",
        "digest": priced_release.digest_hex,
        "job_id": str(shown.jobs.get().pk),
        "app_label": "runs",
        "object_id": str(shown.pk),
        "content_type_id": str(ContentType.objects.get_for_model(Run).pk),
        "url": "nope/",
    }
    return World(shown, hidden, values, staff)


# -- the URLconf, walked ---------------------------------------------------------------


@dataclass
class Leaf:
    chain: tuple[Any, ...]  # the patterns from the root to this one
    pattern: URLPattern
    names: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.pattern.name or str(self.pattern.pattern)

    @property
    def admin(self) -> bool:
        return str(self.chain[0]).startswith("admin/")


def leaves(patterns: list[Any], chain: tuple[Any, ...] = ()) -> Iterator[Leaf]:
    for found in patterns:
        if isinstance(found, URLResolver):
            yield from leaves(found.url_patterns, (*chain, found.pattern))
        else:
            leaf = Leaf((*chain, found.pattern), found)
            leaf.names = [n for p in leaf.chain for n in parameter_names(p)]
            yield leaf


ROUTE_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")
REGEX_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


def parameter_names(pattern: Any) -> list[str]:
    text = str(pattern)
    found = ROUTE_PARAMETER if isinstance(pattern, RoutePattern) else REGEX_GROUP
    return found.findall(text)


def fill(leaf: Leaf, values: dict[str, str]) -> str:
    """The leaf's path with each parameter given its value (percent-encoded already)."""
    parts = []
    for pattern in leaf.chain:
        text = str(pattern)
        if isinstance(pattern, RoutePattern):
            parts.append(ROUTE_PARAMETER.sub(lambda m: values.get(m[1], "1"), text))
        else:
            text = REGEX_GROUP.sub(lambda m: values.get(m[1], "1"), text)
            parts.append(text.removeprefix("^").removesuffix("$").replace("\\", ""))
    return "/" + "".join(parts)


# -- requests --------------------------------------------------------------------------


def query(params: list[str], fuzz: Fuzz) -> str:
    pairs = [f"{p}={fuzz.query}" + (f"&{p}=2" if fuzz.twice else "") for p in params]
    return "&".join(pairs)


def multipart(fields: dict[str, bytes | list[bytes]]) -> bytes:
    out = b""
    for name, given in fields.items():
        for value in given if isinstance(given, list) else [given]:
            out += (
                f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                + value
                + b"\r\n"
            )
    return out + f"--{BOUNDARY}--\r\n".encode()


def urlencoded(fields: dict[str, bytes | list[bytes]]) -> bytes:
    pairs = []
    for name, given in fields.items():
        for value in given if isinstance(given, list) else [given]:
            pairs.append(f"{quote(name)}={quote_from_bytes(value, safe='')}")
    return "&".join(pairs).encode()


def form_fields(leaf: Leaf, params: list[str], fuzz: Fuzz) -> dict[str, bytes | list[bytes]]:
    fields: dict[str, bytes | list[bytes]] = {
        k: v.encode() for k, v in FORM_FIELDS.get(leaf.name, {}).items()
    }
    for p in params:
        fields[p] = [fuzz.form, b"2"] if fuzz.twice else fuzz.form
    return fields


def json_body(leaf: Leaf, params: list[str], fuzz: Fuzz) -> str:
    items = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in FORM_FIELDS.get(leaf.name, {}).items()]
    items += [f"{json.dumps(p)}: {fuzz.json}" for p in params]
    return "{" + ", ".join(items) + "}"


class Sender:
    """Sends a request as one user, rolled back afterwards (database and cookies), and
    keeps every 5xx and every broken expectation."""

    def __init__(self, client: Client, who: str) -> None:
        self.client, self.who = client, who
        self.failures: list[str] = []
        self.sent = 0

    def __call__(
        self,
        method: str,
        path: str,
        body: bytes | str = b"",
        content_type: str | None = None,
        expect: int | None = None,
        what: str = "",
    ) -> int:
        extra = {} if content_type is None else {"CONTENT_TYPE": content_type}
        cookies = copy.deepcopy(self.client.cookies)
        with transaction.atomic():
            if body:
                response = self.client.generic(method, path, body, content_type or "", **extra)
            else:
                response = self.client.generic(method, path, **extra)
            transaction.set_rollback(True)
        self.client.cookies = cookies
        self.sent += 1
        status = response.status_code
        if status >= 500 or (expect is not None and status != expect):
            shown = path if len(path) < 200 else path[:200] + "..."
            carrier = (content_type or "no body").split(";")[0]
            self.failures.append(
                f"{self.who} {method} {shown} [{what}; {carrier}] -> {status}"
                + (f" (expected {expect})" if expect else "")
            )
        return status


def post_shapes(send: Sender, path: str, what: str) -> None:
    """No body and no Content-Type; an empty multipart form; an empty urlencoded form;
    JSON null."""
    send("POST", path, what=f"{what}, no body")
    send("POST", path, multipart({}), f"multipart/form-data; boundary={BOUNDARY}", what=what)
    send("POST", path, content_type="application/x-www-form-urlencoded", what=f"{what}, empty")
    send("POST", path, "null", "application/json", what=f"{what}, JSON null")


# -- which parameters a view reads ------------------------------------------------------


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Every key a view looks up in a query string or a form while it answers."""
    seen: set[str] = set()

    def recording(original: Callable[..., Any]) -> Callable[..., Any]:
        def look(self: Any, key: Any, *args: Any) -> Any:
            if isinstance(key, str):
                seen.add(key)
            return original(self, key, *args)

        return look

    for name, original in (
        ("get", MultiValueDict.get),
        ("getlist", MultiValueDict.getlist),
        ("__getitem__", MultiValueDict.__getitem__),
        ("__contains__", dict.__contains__),
    ):
        monkeypatch.setattr(QueryDict, name, recording(original))
    return seen


def read_by(send: Sender, reads: set[str], leaf: Leaf, path: str) -> tuple[list[str], list[str]]:
    """The parameters the view reads when it answers a GET, and a POST."""
    reads.clear()
    send("GET", path, what="real path")
    by_get = sorted(reads)
    reads.clear()
    post_shapes(send, path, "real path")
    fields = {k: v.encode() for k, v in FORM_FIELDS.get(leaf.name, {}).items()}
    send("POST", path, multipart(fields), f"multipart/form-data; boundary={BOUNDARY}")
    return by_get, sorted(reads)


def fuzz_parameters(
    send: Sender, leaf: Leaf, path: str, by_get: list[str], by_post: list[str]
) -> None:
    """Each fuzz class as each parameter alone (the site's own views) and as all of them
    at once (every view), in the query string of a GET, and in the query string and the
    body (multipart, urlencoded, JSON under /api/) of a POST."""
    every = sorted({*by_get, *by_post})
    alone = [] if leaf.admin or len(every) < 2 else [[p] for p in every]
    for fuzz in FUZZ:
        for params in [*alone, every] if every else []:
            what = f"{fuzz.name} as {','.join(params)[:80]}"
            strict = len(params) == 1 and params[0] in ID_PARAMS
            url = f"{path}?{query(params, fuzz)}"
            send("GET", url, expect=400 if strict and params[0] in by_get else None, what=what)
            expect = 400 if strict and params[0] in by_post else None
            fields = form_fields(leaf, params, fuzz)
            bodies = [
                (multipart(fields), f"multipart/form-data; boundary={BOUNDARY}"),
                (urlencoded(fields), "application/x-www-form-urlencoded"),
            ]
            if path.startswith("/api/"):
                bodies.append((json_body(leaf, params, fuzz).encode(), "application/json"))
            for body, content_type in bodies:
                send("POST", url, body, content_type, expect, what)


def hostile_paths(send: Sender, leaf: Leaf, world: World) -> None:
    """Each path parameter in turn given each fuzz class, and a hidden run's key."""
    hidden = world.hidden.body_sha256.removeprefix("sha256:")
    for name in leaf.names:
        for value in [*(f.query for f in FUZZ), hidden, hidden[:12], "0" * 64]:
            path = fill(leaf, {**world.values, name: value})
            send("GET", path, what=f"{name} hostile")
            send("POST", path, what=f"{name} hostile, no body")


def test_every_url_pattern_survives_every_fuzz_class(
    world: World, reads: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rest_framework.throttling import SimpleRateThrottle

    # the throttles answer 429 before a view reads anything: let every request reach it
    monkeypatch.setattr(SimpleRateThrottle, "allow_request", lambda *args: True)
    walked = list(leaves(get_resolver().url_patterns))
    staff = Client(raise_request_exception=False)
    staff.force_login(world.staff)
    senders = [Sender(Client(raise_request_exception=False), "anonymous"), Sender(staff, "staff")]
    read: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for leaf in walked:
        path = fill(leaf, world.values)
        assert resolve(path.split("?")[0]).func == leaf.pattern.callback, (leaf.name, path)
        for send in senders:
            if leaf.admin and send.who == "anonymous":
                send("GET", path, what="real path")
                post_shapes(send, path, "real path")
                continue
            by_get, by_post = read_by(send, reads, leaf, path)
            read[send.who, leaf.name] = by_get, by_post
            fuzz_parameters(send, leaf, path, by_get, by_post)
            hostile_paths(send, leaf, world)
    failures = sorted(
        (f for send in senders for f in send.failures), key=lambda f: "-> 5" not in f
    )  # the 5xx first
    sent = sum(s.sent for s in senders)
    assert not failures, f"{len(failures)} of {sent}:\n" + "\n".join(failures[:60])
    # the walk reached the site's own views and the admin's, and saw what they read
    assert any(leaf.admin for leaf in walked)
    for name in ("run", "run-table", "run-download", "api-run"):
        assert "submission" in read["anonymous", name][0], name
    for name in ("run-staff", "api-reverify"):
        assert "submission" in read["staff", name][1], name
    for name in ("leaderboard", "api-leaderboard"):
        assert "page" in read["anonymous", name][0], name
    # and the status page, after all that, names no run the visitor may not see
    status = Client().get("/status/?format=json").content.decode()
    hidden = world.hidden
    assert hidden.run_id not in status and hidden.body_sha256[7:] not in status


# -- the findings, one by one -------------------------------------------------------------


def page_or_api(response: Any, path: str) -> str:
    """What a 400 says: the API's envelope code, or the 400 page's sentence."""
    if path.startswith("/api/"):
        return str(response.json()["error"]["code"])
    text = response.content.decode()
    assert "<h1>Bad request</h1>" in text, text[:300]
    return text.split("<p>Bad request: ")[1].split("</p>")[0]


def run_urls(sha: str) -> list[str]:
    return [
        f"/runs/{sha}/",
        f"/runs/{sha}/cells.json",
        f"/runs/{sha}/every-eval-ever.json",
        f"/runs/{sha}/tables/cells?format=json",
        f"/runs/{sha}/tables/jobs?format=csv",
        f"/runs/{sha}/status.json",
        f"/runs/{sha}/download/receipt",
        f"/runs/{sha}/reasoning-audit.json",
        f"/api/runs/{sha}/",
    ]


def with_query(url: str, params: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{params}"


@pytest.mark.parametrize("fuzz", FUZZ, ids=[f.name for f in FUZZ])
def test_a_submission_not_in_0_9_digits_is_a_clean_400_on_every_run_url(
    world: World, fuzz: Fuzz
) -> None:
    """Pages, tables, downloads and the API alike; the query string's own checks
    (NUL, bytes that are not UTF-8) answer first where they apply."""
    unreadable = fuzz.name in ("NUL", "lone surrogate")
    sha = world.shown.body_sha256.removeprefix("sha256:")
    for url in run_urls(sha):
        path = with_query(url, query(["submission"], fuzz))
        response = Client().get(path)
        assert response.status_code == 400, path
        said = page_or_api(response, path)
        if unreadable:
            assert said == "unreadable_input" or said.startswith("the query string"), said
        else:
            assert said == "invalid_submission" or said.startswith("submission: "), said


@pytest.mark.parametrize("fuzz", FUZZ, ids=[f.name for f in FUZZ])
def test_a_staff_form_or_reverify_with_a_bad_submission_is_a_400_and_does_nothing(
    world: World, fuzz: Fuzz
) -> None:
    from pitweb.core.models import AuditEvent
    from pitweb.runs.models import VerificationJob

    sha = world.shown.body_sha256.removeprefix("sha256:")
    staff = Client()
    staff.force_login(world.staff)
    events = AuditEvent.objects.count()
    fields = {"reason": b"because", "confirm": b"yes", "flag": b"x"}
    fields["submission"] = [fuzz.form, b"2"] if fuzz.twice else fuzz.form
    for action in ("flag", "hide", "reverify"):
        page = staff.generic(
            "POST",
            f"/runs/{sha}/staff/{action}",
            multipart(fields),
            f"multipart/form-data; boundary={BOUNDARY}",
        )
        assert page.status_code == 400, action
        assert page_or_api(page, "/runs/").startswith("submission: "), action
    api = staff.generic(
        "POST",
        f"/api/runs/{sha}/reverify/",
        f'{{"reason": "because", "submission": {fuzz.json}}}',
        "application/json",
    )
    assert api.status_code == 400
    assert api.json()["error"]["code"] in ("invalid_input", "parse_error")
    assert AuditEvent.objects.count() == events and VerificationJob.objects.count() == 1
    world.shown.refresh_from_db()
    assert not world.shown.hidden and not world.shown.flag


@pytest.mark.parametrize("fuzz", FUZZ, ids=[f.name for f in FUZZ])
def test_a_hidden_runs_key_answers_like_an_unknown_key_whatever_the_submission(
    world: World, fuzz: Fuzz
) -> None:
    hidden = world.hidden.body_sha256.removeprefix("sha256:")
    unknown = "cd" * 32
    for given in (query(["submission"], fuzz), f"submission={world.hidden.pk}", ""):
        for key, other in ((hidden, unknown), (hidden[:12], unknown[:12])):
            for url in run_urls(key):
                seen = Client().get(with_query(url, given))
                expected = Client().get(with_query(url.replace(key, other), given))
                assert seen.status_code == expected.status_code, url
                assert seen.content.replace(key.encode(), other.encode()) == expected.content


def test_body_less_and_form_less_posts_are_a_clean_400_and_store_nothing(
    world: World, submitter: User
) -> None:
    from pitweb.core.models import AuditEvent
    from pitweb.releases.models import ReferencePrices

    sha = world.shown.body_sha256.removeprefix("sha256:")
    digest = world.values["digest"]
    alice, staff = token_client(submitter), token_client(world.staff)
    session = Client()
    session.force_login(world.staff)
    before = (Run.objects.count(), ReferencePrices.objects.count(), AuditEvent.objects.count())
    for client, path, code in (
        (alice, "/api/runs/", "form_required"),
        (staff, f"/api/releases/{digest}/prices/", "form_required"),
        (staff, f"/api/runs/{sha}/reverify/", "invalid_input"),
    ):
        bare = client.generic("POST", path)  # no body, no Content-Type
        assert bare.status_code == 400, (path, bare.content)
        assert bare.json()["error"]["code"] == code, path
        null = client.generic("POST", path, "null", "application/json")
        # a JSON body where a form is wanted is an unsupported media type, as before
        assert null.status_code == (400 if "reverify" in path else 415), path
    for body, content_type in ((b"", None), (b"null", "application/json")):
        if content_type is None:
            response = session.generic("POST", f"/runs/{sha}/staff/hide")
        else:
            response = session.generic("POST", f"/runs/{sha}/staff/hide", body, content_type)
        assert response.status_code == 400
        assert "a staff action is posted as the run page&#x27;s form" in response.content.decode()
    after = (Run.objects.count(), ReferencePrices.objects.count(), AuditEvent.objects.count())
    assert after == before
    world.shown.refresh_from_db()
    assert not world.shown.hidden


@pytest.mark.django_db(transaction=True)
def test_a_5000_digit_submission_is_a_400_from_a_real_server(
    live_server: Any, registered: Any, submitter: User, stub_run: Artifacts
) -> None:
    from urllib.error import HTTPError
    from urllib.request import urlopen

    run = submit_run(submitter, stub_run)
    sha = run.body_sha256.removeprefix("sha256:")
    for path in (f"/runs/{sha}/", f"/api/runs/{sha}/"):
        with pytest.raises(HTTPError) as refused:
            urlopen(f"{live_server.url}{path}?submission={'9' * 5000}", timeout=30)
        assert refused.value.code == 400, path
        text = refused.value.read().decode()
        assert "invalid_submission" in text or "Bad request: submission:" in text, text[:300]
