"""The site's API over real HTTP on loopback: a streamed multipart upload with its
progress, a refusal and a failure told apart and said in words, the token kept to the
site named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.submit.client import Part, Refused, SiteClient, SiteFailure
from tests.support.canned_site import canned_site, closed_port

TOKEN = "pit_" + "b2" * 20
JSON = {"Content-Type": "application/json"}


@pytest.fixture()
def parts(tmp_path: Path) -> list[Part]:
    receipt, trajectory = tmp_path / "receipt.json", tmp_path / "trajectory.jsonl"
    receipt.write_bytes(b'{"body": {}}\n')
    trajectory.write_bytes(b"x" * 300_000)  # several chunks of the stream
    return [Part("receipt", receipt), Part("trajectory", trajectory)]


def test_an_upload_streams_each_file_as_its_field_with_the_token(parts: list[Part]) -> None:
    told: list[tuple[int, int]] = []
    with canned_site(201, b'{"run_id": "r"}', **JSON) as site, SiteClient(site.url, TOKEN) as c:
        status, answer = c.upload(
            "api/runs/", parts, lambda done, total: told.append((done, total))
        )
    assert (status, answer) == (201, {"run_id": "r"})
    [seen] = site.seen
    assert (seen.method, seen.path, seen.headers["Authorization"]) == (
        "POST", "/api/runs/", f"Token {TOKEN}",
    )  # fmt: skip
    assert seen.headers["User-Agent"].startswith("pit-harness/")
    body = seen.body
    for part in parts:
        assert f'name="{part.field}"; filename="{part.path.name}"'.encode() in body
        assert part.path.read_bytes() in body
    # progress in KiB of the files, from nothing to all of it, never past it
    total = -(-sum(p.path.stat().st_size for p in parts) // 1024)
    assert told[0] == (0, total) and told[-1] == (total, total)
    assert len(told) > 3 and all(d <= t == total for d, t in told)


def test_a_refusal_keeps_the_apis_code_and_words(parts: list[Part]) -> None:
    envelope = {"error": {"code": "too_large", "message": "trajectory is larger than 1000 bytes"}}
    with (
        canned_site(413, json.dumps(envelope).encode(), **JSON) as site,
        SiteClient(site.url, TOKEN) as client,
        pytest.raises(Refused) as refused,
    ):
        client.upload("api/runs/", parts)
    assert (refused.value.status, refused.value.code) == (413, "too_large")
    assert str(refused.value) == "trajectory is larger than 1000 bytes (HTTP 413, too_large)"


def test_a_server_error_is_a_failure_of_the_site_not_a_refusal(parts: list[Part]) -> None:
    envelope = {"error": {"code": "server_error", "message": "the server failed; it is logged"}}
    with (
        canned_site(500, json.dumps(envelope).encode(), **JSON) as site,
        SiteClient(site.url, TOKEN) as client,
        pytest.raises(SiteFailure) as failed,
    ):
        client.upload("api/runs/", parts)
    assert str(failed.value) == (
        "the site failed on POST /api/runs/ (HTTP 500, server_error: the server failed; it is "
        "logged)"
    )


def test_a_gateways_page_is_a_failure_of_the_site(parts: list[Part]) -> None:
    with (
        canned_site(502, b"<html>Bad Gateway</html>") as site,
        SiteClient(site.url, TOKEN) as client,
        pytest.raises(SiteFailure, match="HTTP 502"),
    ):
        client.upload("api/runs/", parts)


def test_a_page_that_is_not_the_api_is_refused_as_the_wrong_address(parts: list[Part]) -> None:
    with (
        canned_site(404, b"<html><body>Not Found</body></html>") as site,
        SiteClient(site.url, TOKEN) as client,
        pytest.raises(Refused) as refused,
    ):
        client.upload("api/runs/", parts)
    assert refused.value.code == "http_404" and "is --site the site's address?" in str(
        refused.value
    )


def test_an_answer_that_is_not_json_is_a_failure_of_the_site(parts: list[Part]) -> None:
    with (
        canned_site(201, b"<html>welcome</html>") as site,
        SiteClient(site.url, TOKEN) as client,
        pytest.raises(SiteFailure, match="not the API"),
    ):
        client.upload("api/runs/", parts)


def test_a_redirect_is_not_followed_with_the_token(parts: list[Part]) -> None:
    with canned_site(201, b"{}", **JSON) as elsewhere:
        with (
            canned_site(307, b"", Location=elsewhere.url + "/api/runs/") as site,
            SiteClient(site.url, TOKEN) as client,
            pytest.raises(Refused, match="redirect"),
        ):
            client.upload("api/runs/", parts)
        assert elsewhere.seen == []


def test_an_unreachable_site_is_a_failure_saying_where(parts: list[Part]) -> None:
    site = f"http://127.0.0.1:{closed_port()}"
    with SiteClient(site, TOKEN) as client, pytest.raises(SiteFailure) as failed:
        client.upload("api/runs/", parts)
    assert str(failed.value).startswith(f"could not reach {site}/: ")
    assert TOKEN not in str(failed.value)


def test_control_characters_from_the_site_never_reach_the_terminal(parts: list[Part]) -> None:
    envelope = {"error": {"code": "x\u009b31m", "message": "owned\x1b]0;title\x07\x1b[2J"}}
    with (
        canned_site(400, json.dumps(envelope).encode(), **JSON) as site,
        SiteClient(site.url, TOKEN) as client,
        pytest.raises(Refused) as refused,
    ):
        client.upload("api/runs/", parts)
    assert str(refused.value) == "owned?]0;title??[2J (HTTP 400, x?31m)"


def test_a_url_the_site_answers_with_is_followed_only_on_the_same_site() -> None:
    with SiteClient("http://127.0.0.1:8000/prefix", TOKEN) as client:
        assert str(client.url("/api/jobs/3/")) == "http://127.0.0.1:8000/api/jobs/3/"
        assert str(client.url("api/runs/")) == "http://127.0.0.1:8000/prefix/api/runs/"
        for elsewhere in (
            "http://evil.example/api/jobs/3/",
            "//evil.example/api/jobs/3/",
            "https://127.0.0.1:8000/api/jobs/3/",
            "http://127.0.0.1:8001/api/jobs/3/",
        ):
            with pytest.raises(SiteFailure, match="not followed with your token"):
                client.url(elsewhere)


@pytest.mark.parametrize(
    "site",
    ["ftp://example.org/", "http://user:pw@127.0.0.1/", "127.0.0.1:8000", "http://x.org/?a=1", ""],
)
def test_an_address_that_is_not_a_sites_is_refused(site: str) -> None:
    with pytest.raises(ValueError) as refused:
        SiteClient(site, TOKEN)
    assert ":pw" not in str(refused.value)
