"""The wire protocol's schemas, served by the site at stable URLs: exactly the files the
harness ships (which the harness's drift test holds to its types), and nothing else."""

from __future__ import annotations

import jsonschema
import pytest
from django.test import Client

from harness.protocol.schemas import HERE, PUBLISHED

pytestmark = pytest.mark.django_db


def test_the_index_lists_every_published_file_and_each_url_serves_it() -> None:
    client = Client()
    index = client.get("/protocol/")
    assert index.status_code == 200
    listed = index.json()
    assert listed["pit_version"] == "pit/1"
    names = {(f["dialect"], f["name"]) for f in listed["files"]}
    assert names == {(d, n) for d, n, *_ in PUBLISHED} | {("pit", "operations.json")}
    for entry in listed["files"]:
        path = entry["url"].removeprefix("http://testserver")
        assert path == f"/protocol/{entry['dialect']}/{entry['name']}"
        served = client.get(path)
        assert served.status_code == 200
        assert served.content == (HERE / entry["dialect"] / entry["name"]).read_bytes()
        if entry["name"].endswith(".schema.json"):
            assert served["Content-Type"] == "application/schema+json"
            jsonschema.Draft202012Validator.check_schema(served.json())


@pytest.mark.parametrize(
    "path",
    [
        "/protocol/pit/nothing.schema.json",
        "/protocol/sharpebench/operations.json",
        "/protocol/pit/..%2F..%2Fschemas.py",
        "/protocol/harness/wire.py",
    ],
)
def test_nothing_but_the_published_files_is_served(path: str) -> None:
    response = Client().get(path)
    assert response.status_code == 404
    assert b"from __future__" not in response.content  # no source read out


def test_the_schemas_are_read_only() -> None:
    assert Client().post("/protocol/pit/step.schema.json").status_code == 405
