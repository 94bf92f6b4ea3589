"""Re-derive a run's scores from its artifacts, and compare them with its receipt.

What a verifier holds: the receipt, the trajectory, the release and (if the run was
priced) the price file. Every check here recomputes a number the receipt states from
those files with the same harness code that produced it, and says which field
differs. A check that cannot be made (no price file for a priced run) says so; it is
never counted as passed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from harness import canonical
from harness.calendar import sessions_for
from harness.prices import Prices
from harness.release.bundle import Bundle
from harness.scoring import make_trades, total_return, trades_digest
from harness.trajectory import file_sha256
from harness.verify import check_receipt


@dataclass
class Check:
    name: str
    status: str  # ok | mismatch | skipped
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass
class Rederivation:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != "mismatch" for c in self.checks)

    @property
    def first_mismatch(self) -> Check | None:
        return next((c for c in self.checks if c.status == "mismatch"), None)

    def add(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks.append(Check(name, "ok" if ok else "mismatch", "" if ok else detail))


def _decisions(
    trajectory: Path,
) -> tuple[dict[str, Any], dict[tuple[str, str], list[tuple[str, list[str]]]]]:
    picks: dict[tuple[str, str], list[tuple[str, list[str]]]] = {}
    start: dict[str, Any] = {}
    with open(trajectory, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            # cheap filter first: most lines are tool calls with many rows
            if number == 1:
                start = json.loads(line)
            elif line.startswith(b'{"agent_error":') or b'"event":"decision"' in line[:200]:
                event = json.loads(line)
                if event.get("event") == "decision" and event["picks"]:
                    picks.setdefault((event["arm"], event["clock"]), []).append(
                        (event["session"], list(event["picks"]))
                    )
    return start, picks


def rederive(
    receipt: str | os.PathLike[str],
    *,
    trajectory: str | os.PathLike[str],
    release: str | os.PathLike[str],
    prices: Prices | None = None,
) -> Rederivation:
    """Recompute hashes, then every cell's trades and score from the trajectory."""
    result = Rederivation()
    report, body = check_receipt(receipt)
    result.add("body_sha256", report.ok, "; ".join(report.failures))
    binding = body.get("binding") or {}

    got = file_sha256(trajectory)
    result.add(
        "trajectory_sha256",
        got == binding.get("trajectory_sha256"),
        f"trajectory hashes to {got}, the receipt binds {binding.get('trajectory_sha256')}",
    )
    start, picks = _decisions(Path(trajectory))
    config = start.get("config") or {}
    config_sha = canonical.digest(config)
    result.add(
        "config_sha256",
        config_sha == binding.get("config_sha256"),
        f"the trajectory's config hashes to {config_sha}, the receipt binds {binding.get('config_sha256')}",
    )

    bundle = Bundle.load(
        release, forms=config.get("forms") or None, start=config.get("start"), end=config.get("end")
    )
    problems = bundle.check()
    result.add("release_files", not problems, "; ".join(problems))
    result.add(
        "bundle_content_digest",
        bundle.content_digest == binding.get("bundle_content_digest"),
        f"the release is {bundle.content_digest}, the receipt binds {binding.get('bundle_content_digest')}",
    )
    if not result.ok:
        return result  # scores over other artifacts would mean nothing

    stated = ((body.get("protocol") or {}).get("P4_costs_and_frictions") or {}).get("prices")
    if stated and prices is None:
        result.checks.append(
            Check("cell_scores", "skipped", "the run was priced; no price file was supplied")
        )
        priced = False
    elif (
        stated
        and prices is not None
        and "sha256:" + prices.file_sha256 != stated.get("file_sha256")
    ):
        result.add(
            "prices_file",
            False,
            f"price file is sha256:{prices.file_sha256}, the receipt states {stated.get('file_sha256')}",
        )
        return result
    else:
        priced = True
    main_by_key = {r["row_key"]: r for r in bundle.rows("main")}
    table = sessions_for(date.fromisoformat(bundle.start), date.fromisoformat(bundle.end))
    index_of = {d.isoformat(): i for i, d in enumerate(table.sessions)}
    hold = int(config.get("hold_sessions", 5))
    for cell in body.get("cells") or []:
        key = (cell["arm"], cell["clock"])
        try:
            session_picks = [(index_of[day], keys) for day, keys in picks.get(key, [])]
            trades = make_trades(
                session_picks,
                main_by_key=main_by_key,
                table=table,
                hold_sessions=hold,
                prices=prices if stated else None,
            )
        except KeyError as exc:
            result.add(
                f"cell {key[0]}/{key[1]}",
                False,
                f"the trajectory names {exc} which the release does not hold",
            )
            continue
        label = f"cell {key[0]}/{key[1]}"
        result.add(
            f"{label} trades",
            len(trades) == cell["trades"],
            f"trajectory gives {len(trades)} trades, the receipt says {cell['trades']}",
        )
        if not priced:
            continue
        digest = trades_digest(trades)
        result.add(
            f"{label} trades_sha256",
            digest == cell["trades_sha256"],
            f"re-derived {digest}, the receipt says {cell['trades_sha256']}",
        )
        score = total_return(trades)
        stated_score = cell["total_return"]
        same = (score is None and stated_score is None) or (
            score is not None
            and stated_score is not None
            and canonical.dumps(score) == canonical.dumps(stated_score)
        )
        result.add(
            f"{label} total_return", same, f"re-derived {score}, the receipt says {stated_score}"
        )
    return result
