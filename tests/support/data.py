"""The shared data folder (``../shared``) and small synthetic releases and prices."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"  # beside the checkout


def shared_path(*parts: str) -> Path:
    """A file of the shared data folder; skip (with the reason) only where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not present: ../shared/{'/'.join(parts)}")
    return path


def build_release(out: Path, *, end: date, seed: int, rows: int) -> Path:
    """A small synthetic release from 2023-03-01, 5% of rows acceptance-stamped."""
    from harness.release.synth import synth_release

    synth_release(
        out, start=date(2023, 3, 1), end=end, seed=seed, rows=rows, acceptance_fraction=0.05
    )
    return out


def build_prices(
    out: Path, release: Path, *, seed: int, news: bool = False, market: str | None = None
) -> Path:
    """SYNTHETIC prices for every ticker of ``release``, with room for holds either side;
    ``news``: a market that moves on the release's 8-Ks, as the demo's does; ``market``:
    a SYNTHETIC index under that symbol, which every stock moves on."""
    from harness.market.prices import news_sessions, synth_prices
    from harness.release.bundle import Bundle

    rows = Bundle.load(release).rows("main")
    tickers = sorted({r["ticker"] for r in rows if r["ticker"]})
    synth_prices(
        out, symbols=tickers, start=date(2023, 2, 1), end=date(2023, 5, 31), seed=seed,
        news=news_sessions(rows, form="8-K") if news else None, market=market,
    )  # fmt: skip
    return out


def reseal_after_edit(root: Path, offset: int, new: bytes) -> None:
    """Change main.jsonl at ``offset`` (same length) and rewrite every hash that covers
    it, so the release passes its own check: a forgery only the chain can catch."""
    from harness.release.store import INDEX, MANIFEST, write_manifest

    path = root / "main.jsonl"
    data = bytearray(path.read_bytes())
    data[offset : offset + len(new)] = new
    path.write_bytes(bytes(data))
    index = json.loads((root / INDEX).read_bytes())
    for seg in index["segments"]:
        start, length, _ = seg["main"]
        if start <= offset < start + length:
            seg["main"][2] = hashlib.sha256(data[start : start + length]).hexdigest()
    index_bytes = json.dumps(index, separators=(",", ":"), sort_keys=True).encode()
    (root / INDEX).write_bytes(index_bytes)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest.pop("content_digest")
    manifest["files"]["main.jsonl"]["sha256"] = hashlib.sha256(data).hexdigest()
    manifest["files"][INDEX] = {
        "bytes": len(index_bytes),
        "sha256": hashlib.sha256(index_bytes).hexdigest(),
    }
    write_manifest(root, manifest)


def issuer_offset(root: Path) -> int:
    text = (root / "main.jsonl").read_bytes()
    return text.index(b'"issuer":"') + len(b'"issuer":"')
