"""Row keys per arm: a public main-arm trajectory names no control-arm row.

Seed 002 keeps one key for a filing in every arm so that one agent runs on every arm
and deltas compare like for like. Trajectories are public, and with one key a table built
from a main-arm trajectory names the issuer behind every redacted row and the real date
behind every shifted one. Here keys differ per arm and the release's order joins them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import RunConfig, run
from harness.agents.adapters.plain import from_callable
from harness.receipt.rederive import rederive


def _config(release: Path, out: Path, **extra: Any) -> RunConfig:
    values: dict[str, Any] = {
        "bundle_path": str(release),
        "forms": ("8-K",),
        "start": "2023-03-01",
        "end": "2023-03-08",
        "agent_process": "in_process",
        "probe": 0,
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
    }
    values.update(extra)
    return RunConfig(**values)


def _served(trajectory: Path, arm: str) -> list[dict[str, Any]]:
    rows = []
    for line in trajectory.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "tool_call" and event["arm"] == arm:
            rows += event["result"].get("rows") or []
    return rows


def _reads_everything(prompt: str, tools: Any) -> list[str]:
    return [r["row_key"] for r in tools.pit_list(limit=5)["rows"]]


def test_a_table_from_a_public_main_trajectory_names_no_control_row(
    march_release: Path, tmp_path: Path
) -> None:
    public = tmp_path / "public"
    run(from_callable(_reads_everything), _config(march_release, public, arms=("main",)))
    table = {r["row_key"]: r["issuer"] for r in _served(public / "trajectory.jsonl", "main")}
    assert table

    seen: dict[str, list[str]] = {"redacted": [], "shifted": []}

    def carries_the_table(prompt: str, tools: Any) -> list[str]:
        rows = tools.pit_list(limit=5)["rows"]
        arm = "redacted" if "(redacted arm" in prompt else "shifted" if "(shifted" in prompt else ""
        if arm:
            seen[arm] += [r["row_key"] for r in rows]
        named = [r["row_key"] for r in rows if r["row_key"] in table]
        return named or [r["row_key"] for r in rows]

    out = tmp_path / "cheat"
    result = run(from_callable(carries_the_table), _config(march_release, out))
    assert seen["redacted"] and seen["shifted"]
    assert not set(table) & (set(seen["redacted"]) | set(seen["shifted"]))
    # the same filings, each arm under its own keys: the deltas still compare like for like
    counts = {(c["arm"], c["clock"]): c["trades"] for c in result.body["cells"]}
    assert counts[("redacted", "pit")] == counts[("main", "pit")] == counts[("shifted", "pit")]
    assert rederive(
        out / "receipt.json", trajectory=out / "trajectory.jsonl", release=march_release
    ).ok


def test_a_main_arm_key_picked_in_a_control_cell_is_rejected(
    march_release: Path, tmp_path: Path
) -> None:
    main_keys: list[str] = []

    def replays_main(prompt: str, tools: Any) -> list[str]:
        rows = tools.pit_list(limit=3)["rows"]
        if "(main arm" in prompt:
            main_keys.extend(r["row_key"] for r in rows)
            return [r["row_key"] for r in rows]
        return list(main_keys[:3])  # knowable filings, named by their main-arm keys

    result = run(from_callable(replays_main), _config(march_release, tmp_path, clocks=("pit",)))
    cells = {c["arm"]: c for c in result.body["cells"]}
    assert cells["main"]["trades"] > 0 and cells["main"]["rejected_picks"] == 0
    for control in ("redacted", "shifted"):
        assert cells[control]["trades"] == 0
        assert cells[control]["rejected_picks"] == cells[control]["sessions"] * 3


def test_rederive_refuses_a_control_pick_edited_to_a_main_key(
    march_release: Path, tmp_path: Path
) -> None:
    """The runner rejects a main-arm key in a control cell; a trajectory edited to accept
    one (and its receipt hashed again) does not re-derive."""
    from harness.receipt.build import receipt_text
    from harness.rundata.trajectory import file_sha256

    run(from_callable(_reads_everything), _config(march_release, tmp_path, clocks=("pit",)))
    trajectory = tmp_path / "trajectory.jsonl"
    lines = trajectory.read_text().splitlines()
    main_pick = next(
        json.loads(line)["picks"][0]
        for line in lines
        if '"event":"decision"' in line
        and json.loads(line)["arm"] == "main"
        and json.loads(line)["picks"]
    )
    for n, line in enumerate(lines):
        event = json.loads(line)
        if event.get("event") == "decision" and event["arm"] == "redacted" and event["picks"]:
            event["picks"][0] = main_pick
            lines[n] = json.dumps(event, separators=(",", ":"), sort_keys=True)
            break
    trajectory.write_text("\n".join(lines) + "\n")
    data = json.loads((tmp_path / "receipt.json").read_text())
    data["body"]["binding"]["trajectory_sha256"] = file_sha256(trajectory)
    data["body"]["trajectory"]["sha256"] = file_sha256(trajectory)
    (tmp_path / "receipt.json").write_text(receipt_text(data["body"], data["emitted_at"]))
    result = rederive(tmp_path / "receipt.json", trajectory=trajectory, release=march_release)
    assert result.first_mismatch is not None
    assert result.first_mismatch.name == "knowability"
    assert "no redacted row" in result.first_mismatch.detail
