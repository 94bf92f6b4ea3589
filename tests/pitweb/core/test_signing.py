"""The site's signing key is read once per process, and read again once it is forgotten."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.attest.keys import private_key_pem
from pitweb.core.signing import forget_signing_key, signing_key


def test_a_forgotten_signing_key_is_read_again(settings: Any, tmp_path: Path) -> None:
    before = signing_key()[1].keyid
    rotated = tmp_path / "rotated.pem"
    rotated.write_bytes(private_key_pem(Ed25519PrivateKey.generate()))
    settings.PITWEB_SIGNING_KEY_FILE = str(rotated)
    assert signing_key()[1].keyid == before  # read once per process
    forget_signing_key()
    assert signing_key()[1].keyid != before
