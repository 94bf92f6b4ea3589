"""Hostile uploads: each is refused with its status and code, and leaves nothing behind:
no row, no stored artifact, no temporary file."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from rest_framework.test import APIClient

from harness import canonical
from harness.receipt.build import receipt_text
from pitweb.core.models import AuditEvent
from pitweb.pricing.models import PlatformScore
from pitweb.runs.models import Run, VerificationJob
from tests.pitweb.conftest import Artifacts, make_run, token_client

pytestmark = pytest.mark.django_db(transaction=True)

Files = dict[str, Any]
Case = tuple[Callable[[Artifacts, Artifacts], Any], int, str]


def _named(name: str, content: bytes) -> io.BytesIO:
    handle = io.BytesIO(content)
    handle.name = f"{name}.bin"
    return handle


def _data(a: Artifacts) -> dict[str, Any]:
    return json.loads(a.receipt.read_text())


def _sealed(a: Artifacts, change: Callable[[dict[str, Any]], Any], rebind: bool = False) -> bytes:
    """The receipt with its body changed and honestly re-hashed (a forger's receipt)."""
    data = _data(a)
    change(data["body"])
    if rebind:
        data["body"]["binding"]["config_sha256"] = canonical.digest(data["body"]["config"])
    return receipt_text(data["body"], data["emitted_at"]).encode()


def _receipt(change: Callable[[dict[str, Any]], Any], rebind: bool = False) -> Any:
    return lambda a, u: {"receipt": _sealed(a, change, rebind)}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = body
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = body
        for part in parents:
            node = node[part]
        del node[last]

    return change


def _raw(transform: Callable[[bytes], bytes]) -> Any:
    return lambda a, u: {"receipt": transform(a.receipt.read_bytes())}


def _bound_to(trajectory: bytes) -> Any:
    """A receipt that binds exactly this trajectory, re-hashed: the upload's hash checks
    pass and whatever reads the trajectory meets these bytes."""
    sha = "sha256:" + hashlib.sha256(trajectory).hexdigest()
    return lambda a, u: {
        "receipt": _sealed(a, _set("binding/trajectory_sha256", sha)),
        "trajectory": trajectory,
    }


def _twice(name: str) -> Any:
    return lambda a, u: {name: [b"garbage", a.files()[name].read()]}


INVALID = "invalid_receipt"
CASES: dict[str, Case] = {
    # the receipt's bytes
    "an empty receipt": (_raw(lambda r: b""), 400, "invalid_json"),
    "truncated JSON": (_raw(lambda r: r[:-40]), 400, "invalid_json"),
    "bytes that are not UTF-8": (_raw(lambda r: b"\xff\xfe" + r), 400, "not_utf8"),
    "a byte-order mark": (_raw(lambda r: b"\xef\xbb\xbf" + r), 400, "invalid_json"),
    "NaN": (
        _raw(lambda r: r.replace(b'"hold_sessions":5', b'"hold_sessions":NaN', 1)),
        400,
        "invalid_json",
    ),
    "Infinity": (
        _raw(lambda r: r.replace(b'"hold_sessions":5', b'"hold_sessions":Infinity', 1)),
        400,
        "invalid_json",
    ),
    "-Infinity": (
        _raw(lambda r: r.replace(b'"hold_sessions":5', b'"hold_sessions":-Infinity', 1)),
        400,
        "invalid_json",
    ),
    "5,000 levels deep": (_raw(lambda r: b"[" * 5000 + b"]" * 5000), 400, "too_deep"),
    "40 levels deep": (_raw(lambda r: b'{"body":' + b"[" * 40 + b"]" * 40 + b"}"), 400, "too_deep"),
    "a key twice in one object": (
        _raw(lambda r: b'{"body_sha256":"sha256:' + b"0" * 64 + b'",' + r[1:]),
        400,
        "invalid_json",
    ),
    "a JSON array": (_raw(lambda r: b"[]"), 400, INVALID),
    "a JSON string": (_raw(lambda r: b'"receipt"'), 400, INVALID),
    "JSON null": (_raw(lambda r: b"null"), 400, INVALID),
    "not a receipt": (_raw(lambda r: b'{"hello":"world"}'), 400, INVALID),
    "no body_sha256": (
        lambda a, u: {
            "receipt": json.dumps(
                {k: v for k, v in _data(a).items() if k != "body_sha256"}
            ).encode()
        },
        400,
        INVALID,
    ),
    "a body that does not hash to its body_sha256": (
        _raw(lambda r: r.replace(b'"valid":true', b'"valid":false', 1)),
        400,
        "receipt_hash_mismatch",
    ),
    # the body, changed and honestly re-hashed
    "trades as a word": (_receipt(_set("cells/0/trades", "many")), 400, INVALID),
    "trades past int64": (_receipt(_set("cells/0/trades", 2**63)), 400, INVALID),
    "trades past int32": (_receipt(_set("cells/0/trades", 2**31)), 400, INVALID),
    "negative trades": (_receipt(_set("cells/0/trades", -1)), 400, INVALID),
    "a return as a string": (_receipt(_set("cells/0/total_return", "0.1")), 400, INVALID),
    "an arm that does not exist": (_receipt(_set("cells/0/arm", "moon")), 400, INVALID),
    "a clock that does not exist": (_receipt(_set("cells/0/clock", "sundial")), 400, INVALID),
    "a cell twice": (_receipt(lambda b: b["cells"].append(dict(b["cells"][0]))), 400, INVALID),
    "no cells": (_receipt(_set("cells", [])), 400, INVALID),
    "a probe item number past int32": (_receipt(_set("probe/items/0/item", 2**40)), 400, INVALID),
    "a probe item of the wrong type": (_receipt(_set("probe/items/0/item", "x")), 400, INVALID),
    "a probe score as a word": (
        _receipt(_set("probe/items/0/score/date_recovered", "yes")),
        400,
        INVALID,
    ),
    "numeric answer-key dates": (
        _receipt(_set("probe/items/0/answer_key/dates", [20230301])),
        400,
        INVALID,
    ),
    "a verdict that does not exist": (_receipt(_set("probe/verdict", "trust_me")), 400, INVALID),
    "probe items as an object": (_receipt(_set("probe/items", {"0": {}})), 400, INVALID),
    "a run_id with a trailing newline": (
        _receipt(lambda b: b.update(run_id=b["run_id"] + "\n")),
        400,
        INVALID,
    ),
    "a run_id in capitals": (
        _receipt(lambda b: b.update(run_id=b["run_id"].upper())),
        400,
        INVALID,
    ),
    "an empty run_id": (_receipt(_set("run_id", "")), 400, INVALID),
    "a digest that is not a digest": (
        _receipt(_set("binding/bundle_content_digest", "sha256:XYZ")),
        400,
        INVALID,
    ),
    "a digest with a trailing newline": (
        _receipt(
            lambda b: b["binding"].update(
                bundle_content_digest=b["binding"]["bundle_content_digest"] + "\n"
            )
        ),
        400,
        INVALID,
    ),
    "an unknown top-level key": (_receipt(_set("bonus", 1)), 400, INVALID),
    "valid as a string": (_receipt(_set("valid", "true")), 400, INVALID),
    "P4 as a string": (_receipt(_set("protocol/P4_costs_and_frictions", "free")), 400, INVALID),
    "P4's prices as a string": (
        _receipt(_set("protocol/P4_costs_and_frictions/prices", "mine")),
        400,
        INVALID,
    ),
    "an unknown protocol slot": (_receipt(_set("protocol/P7_vibes", {})), 400, INVALID),
    "no config": (_receipt(_drop("config")), 400, INVALID),
    "forms longer than a column": (
        _receipt(_set("config/forms", ["8-K" * 40] * 3), rebind=True),
        400,
        INVALID,
    ),
    "an agent name longer than a column": (
        _receipt(_set("config/agent", "a" * 300), rebind=True),
        400,
        INVALID,
    ),
    "an impossible date": (_receipt(_set("config/start", "2023-02-30"), rebind=True), 400, INVALID),
    "a date without dashes": (
        _receipt(_set("config/start", "20230301"), rebind=True),
        400,
        INVALID,
    ),
    "a config that is not the bound one": (
        _receipt(_set("config/model_version", "gpt-99")),
        400,
        "config_mismatch",
    ),
    "a release the server does not hold": (
        _receipt(_set("binding/bundle_content_digest", "sha256:" + "0" * 64)),
        422,
        "unknown_release",
    ),
    # the trajectory
    "a tampered trajectory": (
        lambda a, u: {"trajectory": _flip(a.trajectory.read_bytes())},
        400,
        "trajectory_mismatch",
    ),
    "an empty trajectory": (lambda a, u: {"trajectory": b""}, 400, "trajectory_mismatch"),
    "a bound trajectory that is not JSON": (_bound_to(b"not json\n"), 400, "invalid_json"),
    "a bound trajectory that starts with a list": (_bound_to(b"[]\n"), 400, "config_mismatch"),
    "a bound trajectory 5,000 levels deep": (
        _bound_to(b"[" * 5000 + b"]" * 5000 + b"\n"),
        400,
        "too_deep",
    ),
    "a bound trajectory that is not UTF-8": (_bound_to(b"\xff\xfe\n"), 400, "not_utf8"),
    # prices
    "prices that are not the stated ones": (
        lambda a, u: {"prices": b"date,symbol,close\n2023-03-01,X,1\n"},
        400,
        "prices_mismatch",
    ),
    "a priced run without its price file": (lambda a, u: {"prices": None}, 400, "prices_required"),
    "a price file for an unpriced run": (
        lambda a, u: {**u.files(), "prices": a.prices.read_bytes()},
        400,
        "unexpected_prices",
    ),
    # config
    "a config that is not the receipt's": (
        lambda a, u: {"config": json.dumps({"forms": ["8-K"]}).encode()},
        400,
        "config_mismatch",
    ),
    "a config that is not JSON": (lambda a, u: {"config": b"{"}, 400, "invalid_json"),
    "a config 5,000 levels deep": (
        lambda a, u: {"config": b"[" * 5000 + b"]" * 5000},
        400,
        "too_deep",
    ),
    # the form itself
    "the receipt twice": (_twice("receipt"), 400, "duplicate_field"),
    "the trajectory twice": (_twice("trajectory"), 400, "duplicate_field"),
    "an unknown file field": (lambda a, u: {"extra": b"hello"}, 400, "unknown_field"),
    "an unknown text field": (lambda a, u: {"is_baseline": "true"}, 400, "unknown_field"),
    "no trajectory": (lambda a, u: {"trajectory": None}, 400, "missing_file"),
    "no receipt": (lambda a, u: {"receipt": None}, 400, "missing_file"),
    "the receipt as a text field": (
        lambda a, u: {"receipt": a.receipt.read_text()},
        400,
        "missing_file",
    ),
}


def _flip(raw: bytes) -> bytes:
    flipped = bytearray(raw)
    flipped[len(flipped) // 2] ^= 1
    return bytes(flipped)


@pytest.fixture(scope="module")
def unpriced_run(tmp_path_factory: pytest.TempPathFactory, site_release: Path) -> Artifacts:
    return make_run(site_release, tmp_path_factory.mktemp("unpriced"))


@pytest.fixture()
def upload_tmp(settings: Any, tmp_path: Path) -> Path:
    """Where uploads spool: empty after every request, refused or not."""
    folder = tmp_path / "uploads"
    folder.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(folder)
    return folder


def stored() -> set[str]:
    names: set[str] = set()
    for folder in ("trajectories", "receipts", "prices", "reference-prices"):
        if default_storage.exists(folder):
            names |= {f"{folder}/{n}" for n in default_storage.listdir(folder)[1]}
    return names


def nothing_stored(before: set[str], upload_tmp: Path) -> None:
    assert Run.objects.count() == 0
    assert VerificationJob.objects.count() == PlatformScore.objects.count() == 0
    assert AuditEvent.objects.count() == 0
    assert stored() == before
    assert list(upload_tmp.iterdir()) == []


def _form(artifacts: Artifacts, given: Files) -> Files:
    base: Files = {
        "receipt": artifacts.receipt.read_bytes(),
        "trajectory": artifacts.trajectory.read_bytes(),
        "prices": artifacts.prices.read_bytes() if artifacts.prices else None,
    }
    base.update(given)
    form: Files = {}
    for name, value in base.items():
        if value is None:
            continue
        if isinstance(value, list):
            form[name] = [_named(name, v) for v in value]
        elif isinstance(value, bytes):
            form[name] = _named(name, value)
        elif isinstance(value, io.IOBase):
            form[name] = _named(name, value.read())
        else:
            form[name] = value
    return form


def test_the_table_is_long_enough() -> None:
    assert len(CASES) + len(LIMITS) + 2 >= 60


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_upload_is_refused_and_leaves_nothing(
    case: str,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    unpriced_run: Artifacts,
    upload_tmp: Path,
) -> None:
    make, status, code = CASES[case]
    before = stored()
    response = token_client(submitter).post(
        "/api/runs/", _form(stub_run, make(stub_run, unpriced_run)), format="multipart"
    )
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code, error
    assert error["message"]
    nothing_stored(before, upload_tmp)


LIMITS = {
    "a receipt past its limit": ("PITWEB_MAX_RECEIPT_BYTES", "receipt"),
    "a trajectory past its limit": ("PITWEB_MAX_TRAJECTORY_BYTES", "trajectory"),
    "a config past its limit": ("PITWEB_MAX_CONFIG_BYTES", "config"),
}


@pytest.mark.parametrize("case", list(LIMITS))
def test_an_oversized_file_stops_at_its_limit(
    case: str,
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    upload_tmp: Path,
    settings: Any,
) -> None:
    setting, field = LIMITS[case]
    setattr(settings, setting, 4096)
    big = b"x" * 100_000
    before = stored()
    response = token_client(submitter).post(
        "/api/runs/", _form(stub_run, {field: big}), format="multipart"
    )
    assert response.status_code == 413, response.content
    assert response.json()["error"]["code"] == "too_large"
    assert field in response.json()["error"]["message"]
    nothing_stored(before, upload_tmp)


def test_a_request_announcing_more_than_any_upload_may_send_is_refused_unread(
    registered: Any, submitter: User, upload_tmp: Path, settings: Any
) -> None:
    from django.test import Client

    from pitweb.accounts.services import token_issue

    settings.PITWEB_MAX_RECEIPT_BYTES = settings.PITWEB_MAX_TRAJECTORY_BYTES = 1000
    boundary = "BoUnDaRy"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--{boundary}--\r\n'
    ).encode()
    response = Client().generic(
        "POST",
        "/api/runs/",
        body,
        content_type=f"multipart/form-data; boundary={boundary}",
        HTTP_AUTHORIZATION=f"Token {token_issue(user=submitter)}",
        CONTENT_LENGTH=str(10_000_000),
    )
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    nothing_stored(set(), upload_tmp)


def test_json_instead_of_a_form_and_an_anonymous_upload_are_refused(
    registered: Any, submitter: User, stub_run: Artifacts, upload_tmp: Path
) -> None:
    as_json = token_client(submitter).post("/api/runs/", {"receipt": "x"}, format="json")
    assert as_json.status_code == 415
    assert as_json.json()["error"]["code"] == "unsupported_media_type"
    anonymous = APIClient().post("/api/runs/", _form(stub_run, {}), format="multipart")
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "not_authenticated"
    nothing_stored(set(), upload_tmp)


def test_the_honest_upload_passes_the_same_checks_and_leaves_no_temporary_file(
    registered: Any, submitter: User, stub_run: Artifacts, upload_tmp: Path
) -> None:
    response = token_client(submitter).post("/api/runs/", _form(stub_run, {}), format="multipart")
    assert response.status_code == 201, response.content
    assert Run.objects.count() == 1
    assert list(upload_tmp.iterdir()) == []


def test_files_stored_for_a_row_that_could_not_be_created_are_removed(
    registered: Any,
    submitter: User,
    stub_run: Artifacts,
    upload_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pitweb.runs import services
    from pitweb.runs.services import intake

    def fail(**kwargs: Any) -> Any:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(intake, "_create_run", fail)
    before = stored()
    with pytest.raises(RuntimeError):
        files = stub_run.files()
        services.run_submit(
            user=submitter,
            receipt=files["receipt"],
            trajectory=files["trajectory"],
            prices=files["prices"],
        )
    nothing_stored(before, upload_tmp)


HOSTILE_TEXT = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


@pytest.fixture(scope="module")
def hostile_run(
    tmp_path_factory: pytest.TempPathFactory, site_release: Path, site_prices: Path
) -> Artifacts:
    """An honest run whose every free-text field is hostile: its agent's name and model
    version, and every probe answer (a formula, markup, a script)."""
    from harness.agents.adapters.plain import from_callable

    def answer(prompt: str, tools: Any) -> Any:
        if prompt.startswith("Mask probe"):
            return {"picks": [], "text": '=HYPERLINK("http://evil.example","x") ' + HOSTILE_TEXT}
        return [r["row_key"] for r in tools.pit_list(limit=3)["rows"]]

    return make_run(
        site_release,
        tmp_path_factory.mktemp("hostile"),
        site_prices,
        agent=from_callable(answer, name="<script>alert(3)</script>"),
        model_version="=cmd|' /C calc'!A0 <b>bold</b>",
    )


def test_every_page_and_table_renders_a_hostile_but_verified_body(
    priced_release: Any, submitter: User, hostile_run: Artifacts
) -> None:
    from django.test import Client

    response = token_client(submitter).post(
        "/api/runs/", _form(hostile_run, {}), format="multipart"
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["submission"])
    assert run.status == "verified" and "<script>" in run.agent  # stored as written
    sha = run.body_sha256[7:]
    pages = [
        "/",
        "/benchmarks/?isolated=1",
        "/benchmarks/",
        "/leaderboard.csv",
        f"/runs/{sha}/",
        f"/compare/?runs={sha}",
        "/api/leaderboard/?all=1",
        "/api/leaderboard.csv",
        "/api/runs/",
        f"/api/runs/{sha}/",
        "/status/",
        "/changelog/",
        *(
            f"/runs/{sha}/tables/{name}?format={fmt}"
            for name in ("cells", "probe", "jobs")
            for fmt in ("csv", "json")
        ),
    ]
    for path in pages:
        page = Client().get(path, follow=True)
        assert page.status_code == 200, path
        text = page.content.decode()
        if page["Content-Type"].startswith("text/html"):
            # escaped wherever it is shown: no tag of the agent's reaches the page
            assert "<script>alert" not in text and "<img src=x" not in text, path
        if page["Content-Type"].startswith("text/csv"):
            for row in csv.reader(io.StringIO(text)):
                assert not any(cell.startswith(("=", "+", "@")) for cell in row), (path, row)
    html = Client().get(f"/runs/{sha}/").content.decode()
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html


def test_an_honest_answer_with_a_nul_character_is_refused_clearly(
    registered: Any,
    submitter: User,
    upload_tmp: Path,
    tmp_path: Path,
    site_release: Path,
    site_prices: Path,
) -> None:
    """No database stores a NUL in text: the upload says so and stores nothing (on
    Postgres it would otherwise be a 500)."""
    from harness.agents.adapters.plain import from_callable

    def answer(prompt: str, tools: Any) -> Any:
        if prompt.startswith("Mask probe"):
            return {"picks": [], "text": "filed on\x00the first"}
        return [r["row_key"] for r in tools.pit_list(limit=3)["rows"]]

    artifacts = make_run(
        site_release, tmp_path / "nul", site_prices, agent=from_callable(answer, name="nul")
    )
    before = stored()
    response = token_client(submitter).post("/api/runs/", _form(artifacts, {}), format="multipart")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "unreadable_input" and "probe/items/" in error["message"]
    nothing_stored(before, upload_tmp)
