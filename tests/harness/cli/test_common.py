"""The JSON reader the command groups share: a file the reader names that cannot be read is a
usage error (exit 2), never a broken document."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.common import UsageError, read_json_document


def test_a_json_file_is_read_as_its_document(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{"a": [1, 2]}', encoding="utf-8")
    assert read_json_document(str(path)) == {"a": [1, 2]}


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(UsageError, match="no such file"):
        read_json_document(str(missing))


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe"])
def test_a_file_that_is_not_json_is_a_usage_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(UsageError, match="not a readable JSON document"):
        read_json_document(str(path))
