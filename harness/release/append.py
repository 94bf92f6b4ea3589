"""A new version of a release: its parent's rows unchanged byte for byte, new days' rows
added after them on all three arms (see ``harness.release.chain``).

The new version's manifest keeps the parent's ``name`` (a release line has one name;
its versions differ by digest), ``provenance`` and ``source`` (how the line began), and
adds::

    parent          {"content_digest": the parent's, "name": the parent's}
    sessions_added  the partition dates this version added, sorted
    added           {"rows": how many, "provenance": ..., "source": ...} of the rows added

Its window keeps the parent's start and ends on the last added date (or a later given
end: days EDGAR was closed still pass).
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from harness.progress import OnProgress
from harness.release.bundle import Bundle
from harness.release.chain import child_problems, index_segments
from harness.release.edgar import PathArg, edgar_rows
from harness.release.keys import row_key, synthetic_secret
from harness.release.store import ArmFiles, ReleaseError, keyed_rows, write_manifest


def _check_parent(parent: PathArg, out: PathArg) -> Bundle:
    bundle = Bundle.load(parent)
    problems = bundle.check()
    if problems:
        raise ReleaseError(f"parent {parent} fails its own check: {'; '.join(problems)}")
    target = Path(out).resolve()
    if target == bundle.root.resolve():
        raise ReleaseError(
            "--out must be a new folder, not the parent (a version never rewrites it)"
        )
    if target.exists() and any(target.iterdir()):
        raise ReleaseError(f"{out} already exists and is not empty")
    return bundle


def _check_secret(bundle: Bundle, secret: bytes) -> None:
    """Refuse a secret other than the parent's: its rows' keys would not be the line's."""
    first = json.loads(bundle.texts("main")[0])
    if row_key(secret, first["accession"]) != first["row_key"]:
        raise ReleaseError(
            "the row-key secret is not the parent's (its first row's key does not match); "
            "a version is keyed with the secret its release line was built with"
        )


def append_release(
    parent: PathArg,
    out: PathArg,
    *,
    rows: Iterable[dict[str, Any]],
    row_key_secret: bytes,
    provenance: str,
    source: dict[str, Any],
    name: str | None = None,
    end: str | None = None,
    on_progress: OnProgress | None = None,
) -> dict[str, Any]:
    """Write at ``out`` the version of ``parent`` that adds main-arm ``rows``; return its
    manifest.

    Refused (``ReleaseError``, nothing kept at ``out``): a parent that fails its own
    check, a secret other than the parent's, no rows, a row dated inside or before the
    parent's window, an accession the parent holds, an ``end`` before the last row, and
    a written version whose start is not the parent's bytes.
    """
    bundle = _check_parent(parent, out)
    _check_secret(bundle, row_key_secret)
    main = keyed_rows(rows, row_key_secret)
    if not main:
        raise ReleaseError("no rows to append")
    window = bundle.manifest["window"]
    early = next((r for r in main if r["partition_date"] <= window["end"]), None)
    if early is not None:
        raise ReleaseError(
            f"accession {early['accession']} is dated {early['partition_date']}, inside or "
            f"before the parent's window ({window['start']}..{window['end']}): a version only "
            "adds later days"
        )
    held = set(bundle.row_keys("main"))
    again = next((r for r in main if r["row_key"] in held), None)
    if again is not None:
        raise ReleaseError(f"accession {again['accession']} is already in the parent")
    last = main[-1]["partition_date"]
    if end is not None and end < last:
        raise ReleaseError(f"end {end} is before the last added date {last}")

    parent_manifest = bundle.manifest
    parent_segments = index_segments(bundle.root)
    root = Path(out)
    try:
        arms = ArmFiles(root).open(prefix=bundle.root)
        try:
            added = arms.write_segments(main, row_key_secret, on_progress)
        finally:
            arms.close()
        total = parent_manifest["row_counts"]["total"] + len(main)
        files = arms.finish(parent_segments + added, total)
        counts = parent_manifest["row_counts"]
        by_form = Counter(counts["by_form"]) + Counter(r["form"] for r in main)
        manifest = {
            **{k: v for k, v in parent_manifest.items() if k != "content_digest"},
            "name": name or parent_manifest["name"],
            "window": {"start": window["start"], "end": end or last},
            "forms": sorted(by_form),
            "row_counts": {
                "total": total,
                "by_form": dict(sorted(by_form.items())),
                "acceptance_stamped": counts["acceptance_stamped"]
                + sum(1 for r in main if r.get("acceptance_at")),
            },
            "files": files,
            "parent": {
                "content_digest": parent_manifest["content_digest"],
                "name": parent_manifest["name"],
            },
            "sessions_added": sorted({r["partition_date"] for r in main}),
            "added": {"rows": len(main), "provenance": provenance, "source": source},
        }
        write_manifest(root, manifest)
        problems = child_problems(parent_manifest, parent_segments, Bundle.load(root))
        if problems:
            raise ReleaseError("the new version does not grow its parent: " + "; ".join(problems))
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return manifest


def append_edgar(
    parent: PathArg,
    out: PathArg,
    *,
    index_files: Sequence[PathArg],
    acceptance_files: Sequence[PathArg] = (),
    row_key_secret: bytes,
    tickers: Mapping[str, str] | None = None,
    name: str | None = None,
    end: str | None = None,
    leave_out_backdated: bool = False,
    on_progress: OnProgress | None = None,
) -> dict[str, Any]:
    """The version of ``parent`` adding the filings of EDGAR index files (read as
    ``release build`` reads them).

    A daily index also lists a few filings dated days before (the real
    company.20221003.idx lists some filed in September). Such a row cannot join a
    version whose parent's window holds its date: it is refused, or with
    ``leave_out_backdated`` left out and counted in the manifest's ``added.source``
    (``backdated_left_out``).
    """
    read = edgar_rows(index_files, acceptance_files, tickers)
    rows, source = read.rows, read.source()
    if leave_out_backdated:
        parent_end = Bundle.load(parent).manifest["window"]["end"]
        rows = [r for r in read.rows if r["partition_date"] > parent_end]
        source["backdated_left_out"] = len(read.rows) - len(rows)
    return append_release(
        parent,
        out,
        rows=rows,
        row_key_secret=row_key_secret,
        provenance=read.provenance(),
        source=source,
        name=name,
        end=end,
        on_progress=on_progress,
    )


def append_synthetic(
    parent: PathArg,
    out: PathArg,
    *,
    days: int,
    seed: int | None = None,
    rows_per_day: int | None = None,
    on_progress: OnProgress | None = None,
) -> dict[str, Any]:
    """The version of a synthetic release (``release synth`` or a version of one) adding
    its next ``days`` EDGAR business days of synthetic filings: same arguments, same
    bytes.

    The filers are the line's own (drawn again from the seed its manifest records), the
    row keys its seed's, accession numbers continue each filer's sequence, and
    ``rows_per_day`` defaults to the parent's mean per business day. ``seed`` (default:
    the line's) drives the new days' draws, together with the first new day.
    """
    # pandas (the synthetic calendar's holidays) is loaded for this function only
    from harness.release.synth import _business_days, _draw_rows, _issuers

    if days < 1:
        raise ReleaseError("--days must be at least 1")
    bundle = _check_parent(parent, out)
    source = bundle.manifest["source"]
    if source.get("kind") != "synthetic":
        raise ReleaseError(
            f"{parent} is not a synthetic release (source kind {source.get('kind')!r}); "
            "grow it with `release append --edgar-index`"
        )
    line_seed = int(source["seed"])
    window = bundle.manifest["window"]
    last = date.fromisoformat(window["end"])
    begin = last + timedelta(days=1)
    finish = last
    for _ in range(days):
        finish += timedelta(days=1)
        while not _business_days(finish, finish)[0]:
            finish += timedelta(days=1)
    if rows_per_day is None:
        open_days = _business_days(date.fromisoformat(window["start"]), last)[0]
        rows_per_day = max(
            1, round(bundle.manifest["row_counts"]["total"] / max(1, len(open_days)))
        )
    if rows_per_day < 1:
        raise ReleaseError("--rows-per-day must be at least 1")
    draw_seed = line_seed if seed is None else seed
    sequence: dict[tuple[int, int], int] = {}
    for text in bundle.texts("main"):
        agent, yy, number = json.loads(text)["accession"].split("-")
        key = (int(agent), int(yy))
        sequence[key] = max(sequence.get(key, 0), int(number))
    rng = random.Random(f"pit-harness synthetic append {draw_seed} {begin.isoformat()}")
    issuers = _issuers(random.Random(line_seed), max(40, int(source["rows"]) // 40))
    secret = synthetic_secret(line_seed)
    rows = _draw_rows(
        rng,
        issuers,
        start=begin,
        end=finish,
        secret=secret,
        rows=rows_per_day * days,
        acceptance_fraction=float(source["acceptance_fraction"]),
        sequence=sequence,
    )
    return append_release(
        parent,
        out,
        rows=rows,
        row_key_secret=secret,
        provenance=(
            "SYNTHETIC: appended by pit-harness release synth-append; issuers, tickers, "
            "filings and acceptance stamps are invented and describe no real company or event"
        ),
        source={
            "kind": "synthetic-append",
            "seed": draw_seed,
            "days": days,
            "rows_per_day": rows_per_day,
        },
        end=finish.isoformat(),
        on_progress=on_progress,
    )
