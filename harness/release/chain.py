"""Versions of a release form a chain: each names its parent's content digest, and
each parent's bytes are the start of its child's.

A child's arm files begin with its parent's arm files byte for byte, and its index
begins with its parent's segments unchanged; the rows it adds lie on partition dates
after the parent's window. So a run, a receipt or a snapshot made on any version stays
checkable against every later one: nothing a parent held is ever rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.release.bundle import Bundle
from harness.release.store import INDEX, ReleaseError, arm_file
from harness.vocabulary import ARMS


def prefix_sha256(path: Path, length: int) -> str:
    """The sha256 of the first ``length`` bytes of ``path`` (of all of it, if shorter)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        left = length
        while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def index_segments(root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every segment of a release's index, as stored."""
    try:
        segments = json.loads((Path(root) / INDEX).read_bytes())["segments"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReleaseError(f"{INDEX} of {root} cannot be read: {exc}") from None
    return list(segments)


def child_problems(
    parent: dict[str, Any], parent_segments: Sequence[dict[str, Any]], child: Bundle
) -> list[str]:
    """What breaks the link from ``parent`` (its manifest and index segments) to the
    version ``child``; an empty list means ``child`` grows ``parent`` as a version must.

    The parent is known only by its manifest and index, so a site that stored the
    parent's files (checked against that manifest when it registered them) can check a
    new version without reading them again.
    """
    problems: list[str] = []
    named = (child.manifest.get("parent") or {}).get("content_digest")
    if named != parent["content_digest"]:
        problems.append(
            f"{child.name} {child.content_digest} names parent {named or '(none)'}, "
            f"not {parent['content_digest']}"
        )
        return problems
    for arm in ARMS:
        name = arm_file(arm)
        meta = parent["files"][name]
        if child.manifest["files"][name]["bytes"] < meta["bytes"]:
            problems.append(f"{name}: shorter than the parent's")
        elif prefix_sha256(child.root / name, meta["bytes"]) != meta["sha256"]:
            problems.append(
                f"{name}: the first {meta['bytes']} bytes differ from the parent's "
                "(a parent row was changed)"
            )
    segments = index_segments(child.root)
    if segments[: len(parent_segments)] != list(parent_segments):
        problems.append(f"{INDEX}: the parent's segments are not kept unchanged")
    end = parent["window"]["end"]
    added = segments[len(parent_segments) :]
    early = sorted({s["date"] for s in added if s["date"] <= end})
    if early:
        problems.append(
            f"{INDEX}: added rows dated {', '.join(early)}, inside the parent's window "
            f"(which ends {end})"
        )
    sessions = sorted({s["date"] for s in added})
    if child.manifest.get("sessions_added") != sessions:
        problems.append(
            f"sessions_added {child.manifest.get('sessions_added')} does not match the "
            f"dates of the added segments {sessions}"
        )
    if child.manifest["window"]["start"] != parent["window"]["start"]:
        problems.append("the window's start moved")
    return problems


def verify_chain(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Check release versions given oldest first: each intact, each naming the one
    before it as its parent, each parent's bytes the start of its child's. An empty list
    means the chain holds."""
    if not paths:
        raise ReleaseError("no release versions given")
    problems: list[str] = []
    bundles: list[Bundle | None] = []
    for path in paths:
        try:
            bundle = Bundle.load(path)
        except ReleaseError as exc:
            problems.append(f"{path}: {exc}")
            bundles.append(None)
            continue
        problems.extend(f"{path}: {p}" for p in bundle.check())
        bundles.append(bundle)
    for n in range(1, len(bundles)):
        parent, child = bundles[n - 1], bundles[n]
        if parent is None or child is None:
            continue
        problems.extend(
            f"{paths[n]}: {p}"
            for p in child_problems(parent.manifest, index_segments(parent.root), child)
        )
    return problems
