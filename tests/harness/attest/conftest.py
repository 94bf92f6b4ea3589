"""Keys and signed statements the attest tests share."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness import RunConfig, run
from harness.agents import stub
from harness.attest.keys import keyset, published

VALID_FROM = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def site_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture(scope="module")
def keys_doc(site_key: Ed25519PrivateKey) -> dict[str, Any]:
    """The site's published key set: one key, valid from the start of 2026."""
    return keyset("https://pitweb.example", [published(site_key.public_key(), VALID_FROM)])


@pytest.fixture(scope="module")
def stub_receipt(march_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("certified")
    run(
        stub(),
        RunConfig(
            bundle_path=str(march_release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-06",
            trajectory_path=str(out / "trajectory.jsonl"),
            receipt_path=str(out / "receipt.json"),
        ),
    )
    return out / "receipt.json"
