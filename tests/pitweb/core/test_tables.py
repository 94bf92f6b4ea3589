"""A JSON document the site publishes whole: indented, revalidated on every fetch, a
download when it is named."""

from __future__ import annotations

import json

from pitweb.core.tables import document_response


def test_a_published_document_is_revalidated_json_and_a_named_download() -> None:
    response = document_response({"name": "ü", "n": [1]}, filename="log.json")
    body = response.content.decode("utf-8")
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-cache"
    assert response["Content-Disposition"] == 'attachment; filename="log.json"'
    assert json.loads(body) == {"name": "ü", "n": [1]} and "ü" in body and body.endswith("}\n")


def test_an_unnamed_document_is_not_a_download() -> None:
    assert not document_response({}).has_header("Content-Disposition")
