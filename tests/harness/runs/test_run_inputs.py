"""Every input of a run bound once and attributed right: the agent that ran, the prices
used, the bundle read; the seed's own integration example, verbatim."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from harness import Bundle, RunConfig, load_prices, run
from harness.agents import stub
from harness.agents.adapters.plain import from_callable
from harness.receipt.build import receipt_text
from harness.receipt.verify import verify
from harness.rundata.config import ConfigError
from tests.support.data import build_prices, build_release, shared_path

WINDOW: dict[str, Any] = {"forms": ("8-K",), "start": "2023-03-01", "end": "2023-03-03"}
THIS_FILE = "sha256:" + hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def config(release: Path, out: Path, **extra: Any) -> RunConfig:
    values: dict[str, Any] = {
        "bundle_path": str(release),
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
        "probe": 2,
        **WINDOW,
    }
    values.update(extra)
    return RunConfig(**values)


def first_five(prompt: str, tools: Any) -> list[str]:
    return [r["row_key"] for r in tools.pit_list(limit=5)["rows"]]


def last_five(prompt: str, tools: Any) -> list[str]:
    return [r["row_key"] for r in tools.pit_list(limit=None)["rows"][-5:]]


def test_four_runs_differing_in_agent_or_prices_get_four_run_ids(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    bundle = Bundle.load(march_release, **WINDOW)
    prices = load_prices(march_prices, source="SYNTHETIC", pulled_at="2026-01-01")
    bodies = {
        "stub": run(stub(), config(march_release, tmp_path / "a"), bundle).body,
        "stub priced": run(stub(), config(march_release, tmp_path / "b"), bundle, prices).body,
        "first": run(from_callable(first_five), config(march_release, tmp_path / "c"), bundle).body,
        "last": run(last_five, config(march_release, tmp_path / "d"), bundle).body,
    }
    assert len({b["run_id"] for b in bodies.values()}) == 4
    assert len({b["binding"]["config_sha256"] for b in bodies.values()}) == 4
    # the config records what ran and what priced it, not the RunConfig's default
    assert [b["config"]["agent"] for b in bodies.values()] == [
        "stub", "stub", "first_five", "last_five",
    ]  # fmt: skip
    assert bodies["first"]["config"]["agent_source_sha256"] == THIS_FILE
    stub_file = Path(sys.modules["harness.agents.stub"].__file__ or "")
    assert bodies["stub"]["config"]["agent_source_sha256"] == (
        "sha256:" + hashlib.sha256(stub_file.read_bytes()).hexdigest()
    )
    assert bodies["stub"]["config"]["prices"] is None
    assert bodies["stub priced"]["config"]["prices"] == {
        "file": march_prices.name,
        "file_sha256": "sha256:" + hashlib.sha256(march_prices.read_bytes()).hexdigest(),
        "source": "SYNTHETIC",
        "pulled_at": "2026-01-01",
    }
    p4 = bodies["stub priced"]["protocol"]["P4_costs_and_frictions"]["prices"]
    assert p4["file_sha256"] == bodies["stub priced"]["config"]["prices"]["file_sha256"]


def test_a_bundle_and_a_bundle_path_that_differ_are_refused(
    march_release: Path, tmp_path: Path
) -> None:
    bundle = Bundle.load(march_release, **WINDOW)
    with pytest.raises(ConfigError) as info:
        run(stub(), config(march_release, tmp_path, bundle_path="/nonexistent"), bundle)
    assert "/nonexistent" in str(info.value) and str(march_release) in str(info.value)
    assert not (tmp_path / "receipt.json").exists()
    assert not (tmp_path / "trajectory.jsonl").exists()


def test_prices_passed_and_prices_in_the_config_must_agree(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.csv"
    lines = march_prices.read_text().splitlines()
    other.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # one bar fewer
    stated = {"path": str(march_prices), "source": "SYNTHETIC", "pulled_at": "2026-01-01"}
    bundle = Bundle.load(march_release, **WINDOW)

    same = load_prices(march_prices, source="SYNTHETIC", pulled_at="2026-01-01")
    body = run(stub(), config(march_release, tmp_path / "same", prices=stated), bundle, same).body
    assert body["config"]["prices"]["source"] == "SYNTHETIC"

    for passed, words in (
        (load_prices(other, source="SYNTHETIC", pulled_at="2026-01-01"), ["file", "file_sha256"]),
        (load_prices(march_prices, source="a vendor", pulled_at="2026-01-01"), ["source"]),
        (load_prices(march_prices, source="SYNTHETIC", pulled_at="2025-12-31"), ["pulled_at"]),
    ):
        out = tmp_path / words[0]
        with pytest.raises(ConfigError) as info:
            run(stub(), config(march_release, out, prices=stated), bundle, passed)
        message = str(info.value)
        assert all(f"{w} (" in message for w in words), message
        assert not (out / "receipt.json").exists()


def test_a_config_naming_another_agent_is_refused(march_release: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'first_five'"):
        run(first_five, config(march_release, tmp_path, agent="harness.agents.baselines:x"))


def test_run_config_takes_one_form_as_a_string_and_dates_as_dates() -> None:
    cfg = RunConfig(bundle_path="x", forms="8-K", start=date(2023, 3, 1), end=date(2023, 3, 3))  # type: ignore[arg-type]
    assert cfg.forms == ("8-K",)
    assert (cfg.start, cfg.end) == ("2023-03-01", "2023-03-03")
    for bad in ("20230301", "2023-3-1", "2023-03-01T00:00", "2023-W09-3"):
        with pytest.raises(ConfigError, match="YYYY-MM-DD"):
            RunConfig(bundle_path="x", start=bad)
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        RunConfig.from_dict({"bundle_path": "x", "training_cutoff": "20230301"})


def test_verify_refuses_a_body_whose_config_and_p4_disagree(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    stated = {"path": str(march_prices), "source": "SYNTHETIC", "pulled_at": "2026-01-01"}
    result = run(stub(), config(march_release, tmp_path, prices=stated, probe=0))
    path = tmp_path / "receipt.json"
    assert verify(path, trajectory=None, bundle=None).ok
    data = json.loads(path.read_text())
    body = data["body"]
    body["protocol"]["P4_costs_and_frictions"]["prices"]["source"] = "a better vendor"
    forged = receipt_text(body, data["emitted_at"])  # a consistent hash
    path.write_text(forged)
    report = verify(path, trajectory=None, bundle=None)
    assert not report.ok
    assert any("P4 disagree on source" in line for line in report.failures), report.failures
    assert result.body["config"]["prices"]["source"] == "SYNTHETIC"


# -- the seed's integration example, verbatim ---------------------------------------------


def _seed_example() -> str:
    text = shared_path("seeds", "000_d582b37c34d4a187.txt").read_text()
    start = text.index("from pit_harness import Bundle")
    end = text.index("\n", text.index("print(result.receipt", start))
    return text[start:end] + "\n"


def test_the_seeds_integration_example_runs_verbatim(tmp_path: Path) -> None:
    script = _seed_example()
    assert "from pit_harness.adapters.plain import from_callable" in script
    build_release(
        tmp_path / "pit-eval-sec-2022-11_2023-03", end=date(2023, 3, 31), seed=3, rows=6000
    )
    build_prices(tmp_path / "prices.csv", tmp_path / "pit-eval-sec-2022-11_2023-03", seed=3)
    (tmp_path / "example.py").write_text(script)
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    digest, total = done.stdout.split()
    assert digest.startswith("sha256:") and len(digest) == 71
    float(total)  # priced: the example's prices give the main/pit cell a return
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    body = receipt["body"]
    assert receipt["body_sha256"] == digest
    assert body["config"]["agent"] == "my_agent"
    assert body["config"]["agent_source_sha256"] == (
        "sha256:" + hashlib.sha256((tmp_path / "example.py").read_bytes()).hexdigest()
    )
    assert body["config"]["prices"]["source"] == "your vendor"
    assert body["protocol"]["P4_costs_and_frictions"]["prices"]["source"] == "your vendor"
    assert verify(
        tmp_path / "receipt.json",
        trajectory=tmp_path / "trajectory.jsonl",
        bundle=tmp_path / "pit-eval-sec-2022-11_2023-03",
    ).ok


# -- the small defects --------------------------------------------------------------------


def _cli(*argv: str) -> int:
    from harness.cli import main

    return main(list(argv))


def test_one_path_for_both_outputs_is_refused_and_nothing_is_written(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_json = tmp_path / "run.json"
    run_json.write_text(json.dumps({"bundle_path": str(march_release), **WINDOW, "forms": ["8-K"]}))
    same = str(tmp_path / "out.json")
    assert _cli("run", "--config", str(run_json), "--trajectory", same, "--receipt", same) == 2
    assert "same file" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
    with pytest.raises(ConfigError, match="same file"):
        RunConfig(bundle_path="x", trajectory_path="a/../t.json", receipt_path="t.json")


def test_a_window_partly_outside_the_release_exits_2_naming_both(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_json = tmp_path / "run.json"
    run_json.write_text(
        json.dumps({"bundle_path": str(march_release), "start": "2023-03-20", "end": "2023-04-10"})
    )
    assert _cli("run", "--config", str(run_json)) == 2
    err = capsys.readouterr().err
    assert "2023-03-20..2023-04-10 is not inside release" in err and "2023-03-31" in err


@pytest.mark.parametrize("depth", [9, 100, 100_000])
def test_a_deeply_nested_config_is_a_usage_error(
    tmp_path: Path, depth: int, capsys: pytest.CaptureFixture[str]
) -> None:
    run_json = tmp_path / "run.json"
    run_json.write_text('{"bundle_path": "x", "prices": ' + "[" * depth + "]" * depth + "}")
    assert _cli("run", "--config", str(run_json)) == 2
    assert "nested" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("cutoff", "check"),
    [
        ("2023-03-03", "window_ends_before_cutoff"),  # the window ends on the cutoff
        ("2023-03-04", "window_ends_before_cutoff"),
        ("2023-03-02", "window_crosses_cutoff"),
        ("2023-03-01", "window_crosses_cutoff"),
        ("2023-02-28", "window_starts_after_cutoff"),
    ],
)
def test_p2_reads_a_cutoff_day_as_inside_the_training_data(cutoff: str, check: str) -> None:
    from harness.receipt.build import training_cutoff_slot

    assert training_cutoff_slot(cutoff, "2023-03-01", "2023-03-03")["check"] == check


@pytest.mark.parametrize(
    "stamp", ["2023-03-01T09:15:00", "2023-03-01 09:15", "March 1", "2023-03-01T09:15:00Z?"]
)
def test_a_release_refuses_an_acceptance_stamp_without_an_offset(
    tmp_path: Path, stamp: str
) -> None:
    from harness.release.store import ReleaseError, write_release

    row = {
        "row_key": "r-0000000000000001",
        "accession": "0000000001-23-000001",
        "form": "8-K",
        "cik": "0000000001",
        "issuer": "Example Corp",
        "ticker": None,
        "title": "8-K - Example Corp (0000000001) (Filer)",
        "partition_date": "2023-03-01",
        "published_at": "2023-03-01",
        "acceptance_at": stamp,
        "filename": "edgar/data/1/0000000001-23-000001.txt",
    }
    with pytest.raises(ReleaseError, match="UTC offset"):
        write_release(
            tmp_path / "rel",
            name="t",
            rows=[row],
            window=("2023-03-01", "2023-03-01"),
            provenance="test",
            source={"kind": "test"},
            row_key_secret=bytes(32),
        )
    row["acceptance_at"] = "2023-03-01T09:15:00-05:00"
    write_release(
        tmp_path / "ok",
        name="t",
        rows=[row],
        window=("2023-03-01", "2023-03-01"),
        provenance="test",
        source={"kind": "test"},
        row_key_secret=bytes(32),
    )


def test_export_counts_what_the_runner_counts_holding_one_segment(
    tmp_path: Path,
) -> None:
    import tracemalloc

    from harness.market.calendar import sessions_for
    from harness.runs.export import export_points

    release = build_release(tmp_path / "rel", end=date(2023, 3, 31), seed=9, rows=30_000)
    window = {"forms": None, "start": "2023-03-01", "end": "2023-03-31"}
    body_run = run(
        stub(),
        config(release, tmp_path / "run", forms=(), start="2023-03-01", end="2023-03-31", probe=0),
    )
    assert body_run.body["valid"]
    runner_counts = [
        e["newly_knowable"]
        for e in map(json.loads, (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines())
        if e["event"] == "session" and e["arm"] == "main" and e["clock"] == "pit"
    ]
    sessions_for(date(2023, 3, 1), date(2023, 3, 31))  # the calendar is built once
    bundle = Bundle.load(release, **window)
    tracemalloc.start()
    count = export_points(bundle, arm="main", clock="pit", out=tmp_path / "samples.jsonl")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    samples = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert count == len(samples) == len(runner_counts)
    assert [s["metadata"]["newly_knowable"] for s in samples] == runner_counts
    assert all(s["metadata"]["rows_in_window"] == 30_000 for s in samples)
    largest = max(s["main"][1] for s in bundle.segments)
    main_bytes = sum(s["main"][1] for s in bundle.segments)
    # one segment's bytes (and its lines) at a time, not the window's
    assert peak < 4 * largest + (2 << 20) < main_bytes, (peak, largest, main_bytes)


def test_a_november_2022_window_has_identical_pit_and_dump_cells(tmp_path: Path) -> None:
    from harness.release.synth import synth_release

    synth_release(
        tmp_path / "rel", start=date(2022, 11, 1), end=date(2022, 11, 30), seed=7, rows=3000
    )
    body = run(
        stub(),
        config(
            tmp_path / "rel",
            tmp_path / "out",
            forms=(),
            start="2022-11-01",
            end="2022-11-30",
            probe=0,
            arms=("main",),
        ),
    ).body
    cells = {c["clock"]: c for c in body["cells"]}
    assert cells["pit"]["trades"] == cells["dump"]["trades"] > 0
    assert cells["pit"]["trades_sha256"] == cells["dump"]["trades_sha256"]
    assert cells["pit"]["pit_fallbacks_served"] == cells["pit"]["rows_served"]  # no stamps


# -- the seed's clock experiment as a command ---------------------------------------------


def test_clocks_report_prints_each_clocks_return_and_the_trades_bought_before_acceptance(
    march_release: Path, march_prices: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.market.calendar import sessions_for
    from harness.market.clocks import acceptance_instant

    values = {
        "bundle_path": str(march_release),
        "forms": ["8-K"],
        "start": "2023-03-01",
        "end": "2023-03-31",
        "prices": {"path": str(march_prices), "source": "SYNTHETIC"},
        "trajectory_path": str(tmp_path / "report" / "trajectory.jsonl"),
        "receipt_path": str(tmp_path / "report" / "receipt.json"),
    }
    (tmp_path / "c.json").write_text(json.dumps(values))
    assert _cli("clocks-report", "--config", str(tmp_path / "c.json")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("clocks-report ") and "main arm  valid=True" in out[0]
    printed = {line.split()[0]: line for line in out[1:4]}
    assert list(printed) == ["leaky", "dump", "pit"]

    # the same experiment through the API, counted by hand from its trades and the release
    cfg = RunConfig(
        **{
            **values,
            "forms": ("8-K",),
            "trajectory_path": str(tmp_path / "t.jsonl"),
            "receipt_path": str(tmp_path / "r.json"),
        },
        arms=("main",),
        probe=0,
    )
    result = run(stub(), cfg)
    rows = {r["row_key"]: r for r in Bundle.load(march_release, forms=["8-K"]).rows("main")}
    table = sessions_for(date(2023, 3, 1), date(2023, 5, 31))
    bell = {day.isoformat(): table.opens[i] for i, day in enumerate(table.sessions)}
    for clock, line in printed.items():
        trades = result.trades("main", clock)
        stamped = [t for t in trades if rows[t.row_key]["acceptance_at"]]
        early = [t for t in stamped if bell[t.entry_session] < acceptance_instant(rows[t.row_key])]
        ret = result.total_return("main", clock)
        assert ret is not None
        assert f"total_return {ret * 100:+.2f}%" in " ".join(line.split())
        assert f"bought before EDGAR accepted {len(early)} of {len(stamped)} stamped" in " ".join(
            line.split()
        )
        assert (len(early) > 0) == (clock == "leaky")  # dump and pit none by construction
    assert stamped  # the window has stamped trades, or the test would prove nothing
    assert "(unreachable)" in printed["leaky"] and "(unreachable)" not in printed["pit"]
