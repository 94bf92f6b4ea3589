"""A run's certificate: signed, and checked offline with nothing but the published keys,
the receipt and the revocation list."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness import canonical
from harness.attest import dsse
from harness.attest.certificate import certificate_statement, verify_certificate
from harness.attest.keys import keyset, published, read_keyset
from harness.attest.revocations import revocations_statement
from harness.attest.statement import envelope_id, sign
from harness.cli import main
from harness.outcomes import EXIT_MISMATCH, EXIT_OK, EXIT_UNCHECKED


def _certificate(receipt: Path, key: Ed25519PrivateKey, signed_at: str = "2026-12-01T10:00:00Z"):
    data = json.loads(receipt.read_text())
    body = data["body"]
    statement = certificate_statement(
        body_sha256=data["body_sha256"],
        trajectory_sha256=body["binding"]["trajectory_sha256"],
        predicate={
            "certificate_version": 1,
            "signed_at": signed_at,
            "run": {"run_id": body["run_id"]},
            "verification": {"level": "hashes_verified"},
            "mask": {"verdict": body["probe"].get("verdict")},
            "forward": {"status": "not committed"},
            "release": {"content_digest": body["binding"]["bundle_content_digest"]},
        },
    )
    return sign(statement, key)


def _revocations(key: Ed25519PrivateKey, *revoked: str) -> dict[str, Any]:
    entries = [
        {"certificate": c, "revoked_at": "2026-12-02T00:00:00Z", "reason": "the run was withdrawn"}
        for c in revoked
    ]
    return sign(revocations_statement(entries, "2026-12-03T00:00:00Z"), key)


def test_pae_is_dsse_v1s_encoding() -> None:
    # the test vector of the DSSE specification's protocol document
    assert (
        dsse.pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_a_certificate_verifies_offline_with_the_published_keys(
    stub_receipt: Path, site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    envelope = _certificate(stub_receipt, site_key)
    check = verify_certificate(
        envelope,
        read_keyset(keys_doc),
        receipt=json.loads(stub_receipt.read_text()),
        revocations=_revocations(site_key),
    )
    assert check.ok, check.lines
    assert check.revocation_checked
    assert check.id == envelope_id(envelope)
    assert [line.split()[0] for line in check.lines] == [
        "signature", "key_dates", "statement", "receipt", "revocation",
    ]  # fmt: skip


def test_one_changed_byte_breaks_the_signature(
    stub_receipt: Path, site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    envelope = _certificate(stub_receipt, site_key)
    payload = bytearray(base64.b64decode(envelope["payload"]))
    at = payload.index(b"hashes_verified")
    payload[at : at + 6] = b"reexec"  # a higher level claimed, one word changed
    forged = {**envelope, "payload": base64.b64encode(bytes(payload)).decode()}
    check = verify_certificate(forged, read_keyset(keys_doc))
    assert not check.ok and check.failed == ["signature"]
    assert "does not hold" in check.lines[0]


def test_a_wrong_key_is_refused(stub_receipt: Path, keys_doc: dict[str, Any]) -> None:
    other = Ed25519PrivateKey.generate()
    check = verify_certificate(_certificate(stub_receipt, other), read_keyset(keys_doc))
    assert check.failed == ["signature"]
    assert "not in the published key set" in check.lines[0]


def test_a_key_signing_outside_its_dates_is_refused(stub_receipt: Path) -> None:
    key = Ed25519PrivateKey.generate()
    retired = keyset(
        "https://pitweb.example",
        [published(key.public_key(), datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC))],
    )  # fmt: skip
    check = verify_certificate(_certificate(stub_receipt, key), read_keyset(retired))
    assert check.failed == ["key_dates"]
    assert "2025-01-01T00:00:00Z to 2026-01-01T00:00:00Z" in check.lines[0]
    early = verify_certificate(
        _certificate(stub_receipt, key, signed_at="2025-06-01T00:00:00Z"), read_keyset(retired)
    )
    assert early.ok


def test_a_revoked_certificate_fails(
    stub_receipt: Path, site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    envelope = _certificate(stub_receipt, site_key)
    check = verify_certificate(
        envelope, read_keyset(keys_doc), revocations=_revocations(site_key, envelope_id(envelope))
    )
    assert check.failed == ["revocation"]
    assert "the run was withdrawn" in check.lines[-1]


def test_a_revocation_list_signed_by_another_key_is_not_believed(
    stub_receipt: Path, site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    # an attacker's empty list cannot clear a revoked certificate
    envelope = _certificate(stub_receipt, site_key)
    check = verify_certificate(
        envelope, read_keyset(keys_doc), revocations=_revocations(Ed25519PrivateKey.generate())
    )
    assert check.failed == ["revocations"] and not check.revocation_checked


def test_a_receipt_that_is_not_the_subject_fails(
    stub_receipt: Path, site_key: Ed25519PrivateKey, keys_doc: dict[str, Any]
) -> None:
    receipt = json.loads(stub_receipt.read_text())
    receipt["body"]["valid"] = not receipt["body"]["valid"]
    receipt["body_sha256"] = canonical.digest(receipt["body"])  # consistent, but another body
    check = verify_certificate(
        _certificate(stub_receipt, site_key), read_keyset(keys_doc), receipt=receipt
    )
    assert check.failed == ["receipt"]
    assert "the certificate is about" in check.lines[-2]


def test_the_command_says_revocation_was_not_checked(
    stub_receipt: Path,
    site_key: Ed25519PrivateKey,
    keys_doc: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    envelope = _certificate(stub_receipt, site_key)
    (tmp_path / "cert.json").write_text(json.dumps(envelope))
    (tmp_path / "keys.json").write_text(json.dumps(keys_doc))
    (tmp_path / "revoked.json").write_text(json.dumps(_revocations(site_key)))
    base = [
        "certificate",
        "verify",
        str(tmp_path / "cert.json"),
        "--keys",
        str(tmp_path / "keys.json"),
    ]
    assert main([*base, "--receipt", str(stub_receipt)]) == EXIT_UNCHECKED
    assert "revocation not checked" in capsys.readouterr().out
    assert main([*base, "--revocations", str(tmp_path / "revoked.json")]) == EXIT_OK
    assert capsys.readouterr().out.rstrip().endswith("certificate ok")
    (tmp_path / "revoked.json").write_text(
        json.dumps(_revocations(site_key, envelope_id(envelope)))
    )
    assert main([*base, "--revocations", str(tmp_path / "revoked.json"), "--json"]) == EXIT_MISMATCH
    found = json.loads(capsys.readouterr().out)
    assert found["failed"] == ["revocation"] and found["certificate"] == envelope_id(envelope)


def test_unreadable_inputs_are_usage_errors(tmp_path: Path, keys_doc: dict[str, Any]) -> None:
    (tmp_path / "keys.json").write_text(json.dumps(keys_doc))
    (tmp_path / "cert.json").write_text("{not json")
    assert (
        main(
            [
                "certificate",
                "verify",
                str(tmp_path / "cert.json"),
                "--keys",
                str(tmp_path / "keys.json"),
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "certificate",
                "verify",
                str(tmp_path / "nope.json"),
                "--keys",
                str(tmp_path / "cert.json"),
            ]
        )
        == 2
    )
