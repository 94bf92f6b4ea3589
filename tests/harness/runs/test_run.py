"""A whole run: nine cells, receipt, determinism, honesty of the receipt."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from harness import Bundle, RunConfig, load_prices, run
from harness.agents import stub
from harness.agents.adapters.plain import from_callable
from harness.agents.base import AgentSpec, Decision
from harness.release.synth import synth_release

WINDOW = {"forms": ("8-K",), "start": "2023-03-01", "end": "2023-03-10"}


def config(release: Path, out: Path, **extra: Any) -> RunConfig:
    values: dict[str, Any] = {
        "bundle_path": str(release),
        **WINDOW,
        "trajectory_path": str(out / "trajectory.jsonl"),
        "receipt_path": str(out / "receipt.json"),
    }
    values.update(extra)
    return RunConfig(**values)


def body_text(receipt_path: Path) -> str:
    raw = receipt_path.read_text()
    return raw[len('{"body":') : raw.index(',"body_sha256":')]


def test_same_config_twice_writes_identical_body_and_trajectory(
    march_release: Path, tmp_path: Path
) -> None:
    first = run(stub(), config(march_release, tmp_path / "a"))
    second = run(stub(), config(march_release, tmp_path / "b"))
    assert first.receipt["body_sha256"] == second.receipt["body_sha256"]
    assert body_text(tmp_path / "a" / "receipt.json") == body_text(tmp_path / "b" / "receipt.json")
    assert (tmp_path / "a" / "trajectory.jsonl").read_bytes() == (
        tmp_path / "b" / "trajectory.jsonl"
    ).read_bytes()


def test_nine_cells_leaky_unreachable_and_gaps_listed(march_release: Path, tmp_path: Path) -> None:
    body = run(stub(), config(march_release, tmp_path)).body
    cells = {(c["arm"], c["clock"]): c for c in body["cells"]}
    assert len(cells) == 9
    assert all(c["reachable"] is (clock != "leaky") for (_, clock), c in cells.items())
    assert body["protocol_gaps"] == ["P1_model_version", "P2_training_cutoffs"]
    assert body["protocol_complete"] is False
    assert body["valid"] is True and body["invalidated_by"] == []
    assert all(
        c["total_return"] is None for c in body["cells"]
    )  # no prices: n/a, receipt still complete
    assert body["protocol"]["P4_costs_and_frictions"]["prices"] is None


def test_declared_model_and_cutoff_close_the_gaps_and_check_the_window(
    march_release: Path, tmp_path: Path
) -> None:
    body = run(
        stub(),
        config(march_release, tmp_path, model_version="m-2024-05", training_cutoff="2023-10-01"),
    ).body
    assert body["protocol_gaps"] == []
    assert body["protocol"]["P2_training_cutoffs"]["check"] == "window_ends_before_cutoff"
    crossing = run(
        stub(),
        config(march_release, tmp_path / "x", model_version="m", training_cutoff="2023-03-05"),
    ).body
    assert crossing["protocol"]["P2_training_cutoffs"]["check"] == "window_crosses_cutoff"


def test_window_without_acceptance_stamps_gives_identical_pit_and_dump(tmp_path: Path) -> None:
    release = tmp_path / "unstamped"
    synth_release(
        release,
        start=date(2022, 11, 1),
        end=date(2022, 11, 30),
        seed=3,
        rows=4000,
        acceptance_fraction=0,
    )
    body = run(
        stub(),
        config(release, tmp_path / "out", start="2022-11-01", end="2022-11-15", forms=("8-K", "4")),
    ).body
    cells = {(c["arm"], c["clock"]): c for c in body["cells"]}
    for arm in ("main", "redacted", "shifted"):
        assert cells[(arm, "pit")]["trades_sha256"] == cells[(arm, "dump")]["trades_sha256"]
        assert cells[(arm, "pit")]["trades"] == cells[(arm, "dump")]["trades"] > 0
    p3 = body["protocol"]["P3_retrieval_timestamps"]
    assert p3["acceptance_stamped_rows"] == 0
    assert p3["pit_fallback_rows"] == p3["rows_in_window"]


def test_pit_fallbacks_are_counted(march_release: Path, tmp_path: Path) -> None:
    body = run(stub(), config(march_release, tmp_path)).body
    cells = {(c["arm"], c["clock"]): c for c in body["cells"]}
    rows = Bundle.load(march_release, forms=["8-K"], start="2023-03-01", end="2023-03-10").rows(
        "main"
    )
    unstamped = sum(1 for r in rows if not r["acceptance_at"])
    assert 0 < unstamped < len(rows)
    assert body["protocol"]["P3_retrieval_timestamps"]["pit_fallback_rows"] == unstamped
    assert cells[("main", "pit")]["pit_fallbacks_served"] == unstamped
    assert cells[("main", "dump")]["pit_fallbacks_served"] == 0


def test_control_arms_trade_the_same_rows_on_the_main_clock(
    march_release: Path, tmp_path: Path
) -> None:
    result = run(stub(), config(march_release, tmp_path))
    for clock in ("leaky", "dump", "pit"):
        main = [(t.row_key, t.entry_session) for t in result.trades("main", clock)]
        assert main == [(t.row_key, t.entry_session) for t in result.trades("shifted", clock)]
        assert main == [(t.row_key, t.entry_session) for t in result.trades("redacted", clock)]


def test_integration_example_with_prices(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    bundle = Bundle.load(march_release, forms=["8-K"], start="2023-03-01", end="2023-03-10")
    prices = load_prices(march_prices, source="SYNTHETIC test walk", pulled_at="2026-11-29")

    def my_agent(prompt: str, tools: Any) -> list[str]:
        return [r["row_key"] for r in tools.pit_list(limit=20)["rows"]]

    result = run(
        from_callable(my_agent),
        RunConfig(
            bundle_path=bundle.root,
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-10",
            trajectory_path=str(tmp_path / "trajectory.jsonl"),
            receipt_path=str(tmp_path / "receipt.json"),
        ),
        bundle,
        prices,
    )
    trades = result.trades("main", "pit")
    priced = [t for t in trades if t.ret is not None]
    assert priced, "tickers of the synthetic release are priced"
    for t in priced:  # recompute each trade from the price file itself
        assert t.ret == pytest.approx(
            prices.price(t.ticker, date.fromisoformat(t.exit_session))
            / prices.price(t.ticker, date.fromisoformat(t.entry_session))
            - 1
        )  # type: ignore[arg-type,operator]
    assert result.total_return("main", "pit") == pytest.approx(
        sum(t.ret for t in priced) / len(priced)
    )  # type: ignore[misc]
    cell = next(c for c in result.body["cells"] if (c["arm"], c["clock"]) == ("main", "pit"))
    assert cell["total_return"] == pytest.approx(result.total_return("main", "pit"), abs=1e-6)
    assert len(trades) <= 20 * cell["sessions"]
    contamination = result.body["contamination"]["pit"]
    assert contamination["main_minus_shifted"] == pytest.approx(
        result.total_return("main", "pit") - result.total_return("shifted", "pit"),
        abs=2e-6,  # type: ignore[operator]
    )
    assert (
        result.body["protocol"]["P4_costs_and_frictions"]["prices"]["source"]
        == "SYNTHETIC test walk"
    )


def test_unknowable_and_duplicate_picks_are_rejected_not_traded(
    march_release: Path, tmp_path: Path
) -> None:
    rows = Bundle.load(march_release, forms=["8-K"], start="2023-03-01", end="2023-03-10").rows(
        "main"
    )
    last = max(rows, key=lambda r: r["partition_date"])["row_key"]  # knowable only at the end

    def greedy(prompt: str, tools: Any) -> list[str]:
        new = [r["row_key"] for r in tools.pit_list(limit=1)["rows"]]
        return [last, *new, *new, "r-0000000000000000"]

    result = run(
        from_callable(greedy), config(march_release, tmp_path, arms=("main",), clocks=("pit",))
    )
    cell = result.body["cells"][0]
    assert cell["rejected_picks"] >= 2 * cell["sessions"] - 1
    assert all(t.row_key != last for t in result.trades("main", "pit")[:-2])
    keys = [t.row_key for t in result.trades("main", "pit")]
    assert len(keys) == len(set(keys))


def test_agent_exception_is_recorded_and_scores_nothing(
    march_release: Path, tmp_path: Path
) -> None:
    def broken(prompt: str, tools: Any) -> list[str]:
        raise RuntimeError("model provider said no")

    result = run(
        from_callable(broken), config(march_release, tmp_path, arms=("main",), clocks=("dump",))
    )
    cell = result.body["cells"][0]
    assert cell["agent_errors"] == cell["sessions"] > 0
    assert cell["trades"] == 0
    assert result.valid
    lines = [json.loads(x) for x in (tmp_path / "trajectory.jsonl").read_text().splitlines()]
    assert any(
        e["event"] == "decision" and "model provider said no" in (e["agent_error"] or "")
        for e in lines
    )


class _Unmasker:
    """Reads the shifted date and subtracts ten years: the mask must report a leak."""

    def decide(self, task: Any, tools: Any) -> Decision:
        if task.kind != "probe":
            tools.pit_list()  # reads what it is served, buys nothing
            return Decision()
        shown = json.loads(task.prompt.splitlines()[1])
        year, rest = shown["partition_date"].split("-", 1)
        # names carry years too ("Receivables Trust 2031-B"): unshift those as well
        issuer = re.sub(r"\b(20[3-9]\d)\b", lambda m: str(int(m[1]) - 10), shown["issuer"])
        return Decision(text=f"It was filed on {int(year) - 10}-{rest} by {issuer}")


class _YearOnly:
    def decide(self, task: Any, tools: Any) -> Decision:
        if task.kind != "probe":
            tools.pit_list()
            return Decision()
        return Decision(text="Sometime in 2023, I think.")


class _Blind:
    def decide(self, task: Any, tools: Any) -> Decision:
        return Decision(text="2023-03-01")


def test_probe_has_no_items_when_nothing_was_served(march_release: Path, tmp_path: Path) -> None:
    probe = run(AgentSpec("blind", _Blind), config(march_release, tmp_path)).body["probe"]
    assert probe["served_rows"] == 0 and probe["items"] == []
    assert probe["verdict"] == "no_items"


def test_probe_catches_an_agent_that_recovers_the_real_date(
    march_release: Path, tmp_path: Path
) -> None:
    probe = run(AgentSpec("unmasker", _Unmasker), config(march_release, tmp_path)).body["probe"]
    assert probe["verdict"] == "mask_leaks"
    assert probe["recovered"] == probe["total"] == 10
    assert all(i["score"]["issuer_recovered"] for i in probe["items"])


def test_probe_records_a_bare_year_as_weaker_evidence(march_release: Path, tmp_path: Path) -> None:
    probe = run(AgentSpec("year", _YearOnly), config(march_release, tmp_path)).body["probe"]
    assert probe["verdict"] == "mask_holds"
    assert probe["year_only"] == probe["total"] == 10
    assert not any(i["score"]["date_recovered"] for i in probe["items"])


def test_stub_probe_holds_with_every_item_scored(march_release: Path, tmp_path: Path) -> None:
    probe = run(stub(), config(march_release, tmp_path)).body["probe"]
    assert probe["verdict"] == "mask_holds"
    assert probe["total"] == 10 and len(probe["items"]) == 10
    assert probe["stride"] == probe["served_rows"] // 10
    assert all(i["answer"].startswith("stub: at 2033-") for i in probe["items"])
    assert all(
        set(i["score"]) >= {"date_recovered", "year_recovered", "issuer_recovered"}
        for i in probe["items"]
    )


def test_trajectory_lines_are_canonical_and_hold_every_tool_call(
    march_release: Path, tmp_path: Path
) -> None:
    from harness import canonical

    body = run(stub(), config(march_release, tmp_path)).body
    lines = (tmp_path / "trajectory.jsonl").read_text().splitlines()
    assert len(lines) == body["trajectory"]["events"]
    events = [json.loads(x) for x in lines]
    assert all(canonical.line(e) == x for e, x in zip(events, lines, strict=True))
    assert [e["seq"] for e in events] == list(range(len(events)))
    calls = [e for e in events if e["event"] == "tool_call"]
    assert len(calls) == sum(c["tool_calls"] for c in body["cells"]) + 0
    shifted = [c for c in calls if c["arm"] == "shifted"]
    assert shifted and all(c["result"]["session_date"].startswith("203") for c in shifted)
    assert all(r["known_at"].startswith("203") for c in shifted for r in c["result"]["rows"])


def test_large_window_path_writes_the_same_receipt(
    march_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows parsed on demand (the whole-release path) change memory, not results."""
    import harness.runs.inputs

    parsed = run(stub(), config(march_release, tmp_path / "parsed"))
    monkeypatch.setattr(harness.runs.inputs, "PARSE_UP_FRONT", 0)
    lazy = run(stub(), config(march_release, tmp_path / "lazy"))
    assert lazy.receipt["body_sha256"] == parsed.receipt["body_sha256"]
    assert (tmp_path / "lazy" / "trajectory.jsonl").read_bytes() == (
        tmp_path / "parsed" / "trajectory.jsonl"
    ).read_bytes()


class _ProbeCrasher:
    def decide(self, task: Any, tools: Any) -> Decision:
        if task.kind == "probe":
            raise RuntimeError("model unavailable")
        tools.pit_list()
        return Decision()


def test_a_probe_the_agent_could_not_answer_is_inconclusive_not_a_pass(
    march_release: Path, tmp_path: Path
) -> None:
    probe = run(AgentSpec("crasher", _ProbeCrasher), config(march_release, tmp_path)).body["probe"]
    assert probe["total"] == probe["agent_errors"] == 10
    assert probe["verdict"] == "inconclusive"
