"""The commitment log's head, signed by the site and checked against the log offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.attest.heads import head_statement, verify_head
from harness.attest.keys import read_keyset
from harness.attest.statement import StatementError, sign
from harness.cli import main
from harness.forward.log import document, entry_digest
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from tests.harness.forward.test_log import build


def test_a_signed_head_names_an_entry(
    site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    digest = "sha256:" + "ab" * 32
    head = verify_head(sign(head_statement(4, digest, "2026-12-01T00:00:00Z"), site_key),
                       read_keyset(keys_doc))  # fmt: skip
    assert head.kept() == f"4:{digest}"
    with pytest.raises(StatementError) as caught:
        verify_head(sign(head_statement(4, digest, "2026-12-01T00:00:00Z"), Ed25519PrivateKey.generate()),
                    read_keyset(keys_doc))  # fmt: skip
    assert caught.value.rule == "signature"


def test_the_command_holds_a_log_to_a_signed_head(
    site_key: Ed25519PrivateKey, keys_doc: dict[str, Any], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    entries = build("2026-01-05T14:00:00Z", "2026-01-06T09:00:00Z", "2026-01-07T09:00:00Z")
    signed = sign(head_statement(2, entry_digest(entries[1]), "2026-01-06T10:00:00Z"), site_key)
    (tmp_path / "head.json").write_text(json.dumps(signed))
    (tmp_path / "keys.json").write_text(json.dumps(keys_doc))
    (tmp_path / "log.json").write_text(json.dumps(document(entries)))
    args = ["--signed-head", str(tmp_path / "head.json"), "--keys", str(tmp_path / "keys.json")]
    assert main(["commitments", "verify", str(tmp_path / "log.json"), *args]) == EXIT_OK
    assert "signed head ok  2:sha256:" in capsys.readouterr().out
    # the site later shows a log rewritten from entry 2 on: the head it signed is gone
    rewritten = [*entries[:1], *build("2026-01-05T14:00:00Z", "2026-01-06T09:30:00Z")[1:]]
    (tmp_path / "log.json").write_text(json.dumps(document(rewritten)))
    assert main(["commitments", "verify", str(tmp_path / "log.json"), *args]) == EXIT_MISMATCH
    assert "kept head 2:sha256:" in capsys.readouterr().out
    # a signed head without the keys to check it is the reader's slip
    assert main(["commitments", "verify", str(tmp_path / "log.json"), args[0], args[1]]) == 2
