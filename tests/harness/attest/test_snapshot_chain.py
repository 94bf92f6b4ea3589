"""Board snapshots signed and chained: a chain checked offline, link by link."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.attest.keys import read_keyset
from harness.attest.snapshots import signed_document, snapshot_statement, verify_chain
from harness.attest.statement import sign
from harness.cli import main
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.snapshot import SNAPSHOT_VERSION, redacted, snapshot_digest


def _row(submission: int, total: float) -> dict[str, Any]:
    return {"submission": submission, "run_id": f"{submission:016x}", "total_return": total}


def _chain(key: Ed25519PrivateKey, weeks: int = 3) -> list[dict[str, Any]]:
    """Weekly snapshots of one board, each naming the one before it."""
    documents: list[dict[str, Any]] = []
    previous = None
    for week in range(weeks):
        snapshot = {
            "snapshot_version": SNAPSHOT_VERSION,
            "taken_at": f"2026-12-0{week + 1}T00:00:00+00:00",
            "board_version": week,
            "filters": {"benchmark": "b"},
            "board": {"ranked": [_row(n, 0.01 * n + week) for n in range(1, 4)], "unranked": []},
            "previous_snapshot": previous,
        }
        envelope = sign(snapshot_statement(snapshot, snapshot["taken_at"][:19] + "Z"), key)
        documents.append(signed_document(snapshot, envelope))
        previous = snapshot_digest(snapshot)
    return documents


def _named(documents: list[dict[str, Any]]) -> list[tuple[str, object]]:
    return [(f"s{n}", d) for n, d in enumerate(documents)]


def test_a_signed_chain_verifies(site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]) -> None:
    check = verify_chain(_named(_chain(site_key)), read_keyset(keys_doc))
    assert check.ok, check.lines
    assert "the board's first snapshot" in check.lines[0]
    assert all("follows the one before" in line for line in check.lines[1:])


def test_one_edited_snapshot_breaks_the_chain(
    site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    documents = _chain(site_key)
    documents[1]["snapshot"]["board"]["ranked"][0]["total_return"] = 9.99  # a better week
    check = verify_chain(_named(documents), read_keyset(keys_doc))
    assert not check.ok
    assert check.failed[0].startswith("s1: the signature is over")
    # without the keys the edit still shows: the next snapshot names the original
    unsigned = verify_chain(_named(documents), None)
    assert [f.split(":")[0] for f in unsigned.failed] == ["s2"]


def test_a_dropped_or_reordered_snapshot_breaks_the_chain(
    site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    documents = _chain(site_key)
    keys = read_keyset(keys_doc)
    assert not verify_chain(_named([documents[0], documents[2]]), keys).ok
    assert not verify_chain(_named([documents[1], documents[0], documents[2]]), keys).ok


def test_a_row_taken_down_after_publication_keeps_the_chain(
    site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    documents = _chain(site_key)
    documents[1]["snapshot"] = redacted(documents[1]["snapshot"], {2})
    assert documents[1]["snapshot"]["board"]["ranked"][1] != _row(2, 1.02)
    assert verify_chain(_named(documents), read_keyset(keys_doc)).ok


def test_a_signature_by_another_key_fails(keys_doc: dict[str, Any]) -> None:
    check = verify_chain(_named(_chain(Ed25519PrivateKey.generate())), read_keyset(keys_doc))
    assert len(check.failed) == 3 and "not in the published key set" in check.failed[0]


def test_the_command_checks_a_chain(
    site_key: Ed25519PrivateKey, keys_doc: dict[str, Any], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    files = []
    for n, document in enumerate(_chain(site_key)):
        files.append(tmp_path / f"s{n}.json")
        files[-1].write_text(json.dumps(document))
    (tmp_path / "keys.json").write_text(json.dumps(keys_doc))
    keys = ["--keys", str(tmp_path / "keys.json")]
    assert main(["snapshot", "verify", *map(str, files), *keys]) == EXIT_OK
    assert "chain ok  3 snapshot(s)" in capsys.readouterr().out
    assert main(["snapshot", "verify", str(files[0]), str(files[2]), *keys]) == EXIT_MISMATCH
    assert "chain BROKEN" in capsys.readouterr().out
    # one signed snapshot alone, no keys: its digest, as before
    digest = snapshot_digest(json.loads(files[1].read_text())["snapshot"])
    assert main(["snapshot", "verify", str(files[1]), "--digest", digest]) == EXIT_OK
