"""The site's signing key is read once per process, and read again once it is forgotten;
one made on first use is the same on every machine of the site."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.attest.keys import keyid_of, private_key_pem
from pitweb.core.models import GeneratedSigningKey
from pitweb.core.signing import GENERATED, GENERATED_DATES, forget_signing_key, signing_key


def test_a_forgotten_signing_key_is_read_again(settings: Any, tmp_path: Path) -> None:
    before = signing_key()[1].keyid
    rotated = tmp_path / "rotated.pem"
    rotated.write_bytes(private_key_pem(Ed25519PrivateKey.generate()))
    settings.PITWEB_SIGNING_KEY_FILE = str(rotated)
    assert signing_key()[1].keyid == before  # read once per process
    forget_signing_key()
    assert signing_key()[1].keyid != before


@pytest.mark.django_db(transaction=True)
def test_a_key_made_on_first_use_is_the_same_on_every_machine(
    settings: Any, tmp_path: Path
) -> None:
    """Two machines with var folders of their own (nothing shared but the database) sign
    with one key, made once."""
    settings.PITWEB_SIGNING_KEY_FILE = ""
    keyids = set()
    for machine in ("a", "b"):
        settings.VAR_DIR = tmp_path / machine
        forget_signing_key()
        keyids.add(signing_key()[1].keyid)
    assert len(keyids) == 1 and GeneratedSigningKey.objects.count() == 1
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.django_db(transaction=True)
def test_a_key_an_earlier_version_made_in_the_var_folder_is_kept(
    settings: Any, tmp_path: Path
) -> None:
    """What the key in the var folder signed goes on verifying: it is taken into the
    database, with the moment it was made."""
    key = Ed25519PrivateKey.generate()
    folder = tmp_path / "var" / "signing"
    folder.mkdir(parents=True)
    (folder / GENERATED).write_bytes(private_key_pem(key))
    (folder / GENERATED_DATES).write_text(json.dumps({"valid_from": "2024-05-01T00:00:00Z"}))
    settings.PITWEB_SIGNING_KEY_FILE = ""
    settings.VAR_DIR = tmp_path / "var"
    forget_signing_key()
    published = signing_key()[1]
    assert published.keyid == keyid_of(key.public_key())
    assert published.valid_from == datetime(2024, 5, 1, tzinfo=UTC)
    settings.VAR_DIR = tmp_path / "elsewhere"  # another machine, without the folder
    forget_signing_key()
    assert signing_key()[1].keyid == published.keyid
