"""A fault plan at work (seed 002): each armable mode on both dialects, over real HTTP
servers on loopback. A fault changes what the agent is shown or which of its submissions
is accepted, never the book: a deterministic agent's trades and returns are the unfaulted
run's under every mode; the evidence is in the receipt, rank-neutral, re-derived by
``verify`` and reproduced by re-execution under the same plan."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import run
from harness.agents.base import Task
from harness.agents.external import http_agent
from harness.cli import main
from harness.market.prices import load_prices
from harness.receipt.build import receipt_text
from harness.receipt.rederive import rederive
from harness.rundata.config import ConfigError, RunConfig
from harness.rundata.faultplan import parse_plan
from harness.runs.faults import CellFaults
from harness.runs.observe import PIT, SHARPEBENCH
from harness.runs.reexecute import REPRODUCED, reexecute
from tests.support.http_agents import first_two, serving

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"
MODES = {
    "projection_lag": ("max_lag_steps", "read_your_writes"),
    "amount_sign": ("max_span_steps", "position_sign_convention"),
    "rate_limit": ("max_rejected_presentations", "submission_acceptance"),
}


def plan(mode: str, bound: int = 3, ppm: int = 1_000_000) -> dict[str, Any]:
    parameter, relaxation = MODES[mode]
    return {
        "schema_version": "sharpebench.fault-plan.v1",
        "seed": 11,
        "declared_relaxations": [relaxation],
        "faults": [{"id": mode.replace("_", "-"), "cohort_ppm": ppm,
                    "fault": {"mode": mode, parameter: bound}}],
    }  # fmt: skip


class Seen:
    """A deterministic agent that ignores what it holds (it buys the first two rows shown
    as new), and everything it was shown, in order, per cell."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.shown: dict[str, list[dict[str, Any]]] = {}

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if self.dialect == "sharpebench":
            self.shown.setdefault("all", []).append(body)  # one observation per call
            symbols = [s["symbol"] for s in body["symbols"]][:2]
            orders = [{"symbol": s, "action": "buy", "target_weight": 0.1} for s in symbols]
            return 200, {"orders": orders}
        message = body["message"]
        if message["type"] == "task":
            self.shown.setdefault(body["session"], []).append(message)
        return 200, first_two(message)

    def tasks(self) -> list[dict[str, Any]]:
        return [m for ms in self.shown.values() for m in ms if m.get("kind", "trade") == "trade"]


def _config(
    release: Path, out: Path, url: str, dialect: str, prices: Path, **extra: Any
) -> RunConfig:
    return RunConfig(
        bundle_path=str(release),
        forms=("8-K",),
        start="2023-03-01",
        end="2023-03-10",
        agent_http=url,
        dialect=dialect,
        probe=0,
        prices={"path": str(prices), "source": "SYNTHETIC test walk"},
        trajectory_path=str(out / "trajectory.jsonl"),
        receipt_path=str(out / "receipt.json"),
        **extra,
    )


def _decisions(trajectory: str) -> list[tuple[str, str, str, list[str]]]:
    events = [json.loads(line) for line in Path(trajectory).read_text().splitlines()]
    return [
        (e["arm"], e["clock"], e["session"], e["picks"]) for e in events if e["event"] == "decision"
    ]


def _book(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c["arm"], c["clock"], c["trades"], c["total_return"]) for c in body["cells"]]


@pytest.fixture(scope="module")
def unfaulted(
    march_release: Path, march_prices: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[dict[str, Any], list[Any], list[Any]]]:
    runs = {}
    for dialect in ("pit", "sharpebench"):
        out = tmp_path_factory.mktemp(f"plain-{dialect}")
        agent = Seen(dialect)
        with serving(agent.answer) as url:
            config = _config(march_release, out, url, dialect, march_prices)
            body = run(http_agent(url, dialect=dialect), config).body
        runs[dialect] = (body, _decisions(config.trajectory_path), agent.tasks())
    return runs


@pytest.mark.parametrize("dialect", ["pit", "sharpebench"])
@pytest.mark.parametrize("mode", list(MODES))
def test_each_mode_changes_what_is_shown_and_never_the_book(
    march_release: Path,
    march_prices: Path,
    tmp_path: Path,
    unfaulted: dict[str, tuple[dict[str, Any], list[Any], list[Any]]],
    dialect: str,
    mode: str,
) -> None:
    agent = Seen(dialect)
    with serving(agent.answer) as url:
        config = _config(
            march_release, tmp_path, url, dialect, march_prices,
            fault_plan=plan(mode),
        )  # fmt: skip
        body = run(http_agent(url, dialect=dialect), config).body
        shown = agent.tasks()
        again = reexecute(
            config.receipt_path,
            trajectory=config.trajectory_path,
            bundle=march_release,
            agent=http_agent(url, dialect=dialect),
        )
    plain, plain_decisions, plain_shown = unfaulted[dialect]
    # the book: every accepted decision, every trade and every return as without faults
    assert _decisions(config.trajectory_path) == plain_decisions
    assert _book(body) == _book(plain)
    assert body["contamination"] == plain["contamination"]
    assert any(c["trades"] for c in body["cells"])

    report = body["fault_injection"]
    assert report["rank_neutral"] is True
    assert report["plan_sha256"] == parse_plan(json.dumps(plan(mode)).encode()).sha256
    assert report["declared_relaxations"] == [MODES[mode][1]]
    (denominator,) = report["denominators"]
    assert denominator["cells"] == denominator["assigned"] == 9  # a million ppm
    assert 0 < denominator["fired"] <= 9
    events = [e for cell in report["evidence"] for e in cell["events"]]
    assert events and all(e["fault_id"] == mode.replace("_", "-") for e in events)
    assert body["config"]["fault_plan"]["sha256"] == report["plan_sha256"]

    if mode == "rate_limit":
        kinds = {e["fault_event"] for e in events}
        assert kinds == {"rate_limited"}
        for event in events:
            assert 1 <= event["rejected_presentations"] <= 3
            assert event["resubmissions_under_limit"] == event["rejected_presentations"] - 1
            assert event["resubmitted_after_deadline"] is True  # it restated its decision
        # each refusal is the identical task presented again
        assert len(shown) == len(plain_shown) + sum(e["rejected_presentations"] for e in events)
        repeats = sum(a == b for a, b in itertools.pairwise(shown))
        assert repeats >= sum(e["rejected_presentations"] for e in events)
    else:
        held = [_holdings(dialect, task) for task in shown]
        if mode == "amount_sign":
            assert any(v < 0 for h in held for v in h.values())
            assert {e["fault_event"] for e in events} == {"sign_inverted"}
            graded = [r for e in events for r in e["responses"]]
            assert graded and all(r["presented"] == "negative" for r in graded)
        else:
            assert all(v >= 0 for h in held for v in h.values())
            kinds = [e["fault_event"] for e in events]
            assert "projection_stale" in kinds
            assert "projection_converged" in kinds or "projection_unconverged" in kinds
            # per cell, as sharpebench holds it: a run of consecutive stale steps (at most
            # the bound), then convergence observed on the very next step, or none by the end
            for cell in report["evidence"]:
                stale = [
                    e["step"] for e in cell["events"] if e["fault_event"] == "projection_stale"
                ]
                ends = [e for e in cell["events"] if e["fault_event"] != "projection_stale"]
                if not stale:
                    assert ends == []
                    continue
                assert 1 <= len(stale) <= 3 and stale == list(range(stale[0], stale[-1] + 1))
                (end,) = ends
                assert end["stale_presentations"] == len(stale)
                if end["fault_event"] == "projection_converged":
                    assert end["step"] == stale[-1] + 1

    # verify re-derives the report; re-execution under the same plan reproduces the run
    checked = rederive(
        config.receipt_path,
        trajectory=config.trajectory_path,
        release=march_release,
        prices=load_prices(march_prices, source="SYNTHETIC test walk", pulled_at=""),
    )
    assert checked.ok, checked.first_mismatch
    assert again.result == REPRODUCED, again.to_json()


def _holdings(dialect: str, task: dict[str, Any]) -> dict[str, float]:
    if dialect == "sharpebench":
        return {p["symbol"]: p["shares"] for p in task["portfolio"]}
    return {p["row_key"]: p["units"] for p in task.get("positions", [])}


def test_a_forged_fault_report_fails_verify(
    march_release: Path, march_prices: Path, tmp_path: Path
) -> None:
    with serving(Seen("pit").answer) as url:
        config = _config(march_release, tmp_path, url, "pit", march_prices,
                         fault_plan=plan("amount_sign"))  # fmt: skip
        run(http_agent(url), config)
    receipt = Path(config.receipt_path)
    data = json.loads(receipt.read_text())
    # the forger hides that its agent followed a flipped presentation
    data["body"]["fault_injection"]["evidence"][0]["events"] = []
    receipt.write_text(receipt_text(data["body"], data["emitted_at"]))
    checked = rederive(receipt, trajectory=config.trajectory_path, release=march_release,
                       prices=load_prices(march_prices, source="SYNTHETIC test walk", pulled_at=""))  # fmt: skip
    assert not checked.ok
    mismatch = checked.first_mismatch
    assert mismatch is not None and mismatch.name == "fault_injection"


def test_a_plan_needs_an_external_agent(march_release: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs an external agent"):
        RunConfig(bundle_path=str(march_release), agent="tests.x:y", fault_plan=plan("rate_limit"))
    config = RunConfig(
        bundle_path=str(march_release), fault_plan=plan("rate_limit"),
        trajectory_path=str(tmp_path / "t.jsonl"), receipt_path=str(tmp_path / "r.json"),
    )  # fmt: skip
    with pytest.raises(ConfigError, match="needs an external agent"):
        run(lambda prompt, tools: [], config)
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_every_refusal_on_the_command_line_exits_2_with_nothing_started(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.json"
    out = tmp_path / "out"
    config.write_text(json.dumps({
        "bundle_path": str(march_release), "forms": ["8-K"], "start": "2023-03-01",
        "end": "2023-03-03", "probe": 0, "agent_http": "http://127.0.0.1:9/",
        "trajectory_path": str(out / "t.jsonl"), "receipt_path": str(out / "r.json"),
    }))  # fmt: skip
    undeclared = plan("rate_limit")
    undeclared["declared_relaxations"] = ["read_your_writes"]
    cases = {
        "absent.json": None,
        "bad.json": b"{",
        "undeclared.json": json.dumps(undeclared).encode(),
        "unknown.json": json.dumps({**plan("amount_sign"), "extra": 1}).encode(),
    }
    for name, content in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        code = main(["run", "--config", str(config), "--fault-plan", str(tmp_path / name)])
        assert code == 2, name
        assert "--fault-plan" in capsys.readouterr().err
    code = main(["run", "--config", str(config), "--agent", "stub",
                 "--agent-http", "", "--fault-plan", str(tmp_path / "undeclared.json")])  # fmt: skip
    assert code == 2
    assert not out.exists()  # nothing started, nothing written


def test_describe_prints_the_declaration_to_publish(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan("projection_lag")))
    assert main(["fault-plan", "describe", str(path)]) == 0
    out = capsys.readouterr().out
    assert parse_plan(path.read_bytes()).sha256 in out
    assert "\n- read-your-writes is relaxed" in out
    assert main(["fault-plan", "describe", str(path), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["declared_relaxations"] == ["read_your_writes"]
    path.write_text(json.dumps({**plan("projection_lag"), "declared_relaxations": []}))
    assert main(["fault-plan", "describe", str(path)]) == 2


# -- the grades, one response at a time -----------------------------------------------


def _task(positions: dict[str, float]) -> Task:
    return Task("trade", "", "main", "pit", "2023-03-01", "", positions=tuple(positions.items()))


def _faults(mode: str, at: int = 0, amount: int = 2) -> CellFaults:
    faults = CellFaults(parse_plan(json.dumps(plan(mode)).encode()), PIT, (0, 10, 0), 10)
    opened = CellFaults.open(faults.plan, PIT, (0, 10, 0), 10)
    faults.armed = opened.armed
    faults.armed[0].at, faults.armed[0].amount = at, amount
    return faults


def _decide(*picks: str) -> Any:
    from harness.agents.base import Decision

    return Decision(picks=picks)


def test_a_pick_of_a_row_whose_purchase_was_hidden_is_graded_escalated() -> None:
    """In our dialect a pick buys again: the agent that re-picks a row because it was
    shown unheld pushes its holding further in the direction of the hidden write (the
    resubmission the fault exists to find); not picking it again is the idempotent
    answer (no order)."""
    for again, grade in (("a", "escalated"), ("b", "no_order")):
        faults = _faults("projection_lag", amount=1)
        faults.show(0, _task({}))
        faults.accepted(_decide("a"))  # the agent buys a: one unit
        shown, _ = faults.show(1, _task({"a": 1.0}))
        assert shown.positions == ()  # the write is hidden: a is shown unheld
        (stale,) = faults.accepted(_decide(again))
        assert stale["fault_event"] == "projection_stale"
        assert stale["responses"] == [{"symbol": "a", "grade": grade}]
    faults = _faults("projection_lag", amount=1)
    faults.show(0, _task({}))
    faults.accepted(_decide("a"))
    faults.show(1, _task({"a": 1.0}))
    faults.accepted(_decide())
    shown, events = faults.show(2, _task({"a": 1.0}))
    assert shown.positions == (("a", 1.0),)
    assert events == [{"fault_event": "projection_converged", "fault_id": "projection-lag",
                       "step": 2, "stale_presentations": 1}]  # fmt: skip


def test_a_stale_read_never_answered_is_no_order_and_unconverged_at_the_end() -> None:
    faults = _faults("projection_lag", amount=5)
    faults.show(0, _task({}))
    faults.accepted(_decide())
    faults.show(1, _task({"b": 1.0}))
    (stale,) = faults.accepted(_decide("c"))
    # the agent ordered "c", never "b": no order for the symbol whose purchase was hidden
    assert stale["responses"] == [{"symbol": "b", "grade": "no_order"}]
    assert faults.end()[0]["fault_event"] == "projection_unconverged"


def test_sharpebench_grades_escalation_against_its_own_last_target() -> None:
    from harness.agents.base import Decision

    def observe(portfolio: dict[str, float]) -> Task:
        return Task("trade", "", "main", "pit", "2023-03-01", "", observation={
            "date": "2023-03-01", "cash": 1.0, "symbols": [],
            "portfolio": [{"symbol": k, "shares": v, "avg_price": 0.0} for k, v in portfolio.items()],
        })  # fmt: skip

    def orders(**targets: float) -> Decision:
        return Decision(wire={"orders": [
            {"symbol": k, "action": "buy", "target_weight": v} for k, v in targets.items()]})  # fmt: skip

    for then, grade in ((0.5, "reaffirmed"), (0.8, "escalated"), (0.2, "revised")):
        faults = CellFaults.open(
            parse_plan(json.dumps(plan("projection_lag")).encode()), SHARPEBENCH, (0, 10, 0), 10
        )
        faults.armed[0].at, faults.armed[0].amount = 0, 2
        faults.show(0, observe({}))
        faults.accepted(orders(x=0.5))
        shown, _ = faults.show(1, observe({"x": 1.0}))
        assert shown.observation is not None and shown.observation["portfolio"] == []
        (stale,) = faults.accepted(orders(x=then))
        assert stale["responses"] == [{"symbol": "x", "grade": grade}]


def test_a_flipped_sign_grades_consistency_and_following_the_presentation() -> None:
    from harness.agents.base import Decision

    def observe(portfolio: dict[str, float]) -> Task:
        return Task("trade", "", "main", "pit", "2023-03-01", "", observation={
            "date": "2023-03-01", "cash": 1.0, "symbols": [],
            "portfolio": [{"symbol": k, "shares": v, "avg_price": 0.0} for k, v in portfolio.items()],
        })  # fmt: skip

    def target(weight: float) -> Decision:
        return Decision(
            wire={"orders": [{"symbol": "x", "action": "buy", "target_weight": weight}]}
        )

    for then, grade in ((0.4, "consistent_with_own_statement"), (-0.4, "followed_presentation"),
                        (0.0, "revised"), (None, "no_order")):  # fmt: skip
        faults = CellFaults.open(
            parse_plan(json.dumps(plan("amount_sign")).encode()), SHARPEBENCH, (0, 10, 0), 10
        )
        faults.armed[0].at, faults.armed[0].amount = 1, 1
        faults.show(0, observe({}))
        faults.accepted(target(0.5))
        shown, _ = faults.show(1, observe({"x": 1.0, "y": 0.0}))
        assert shown.observation is not None
        assert [p["shares"] for p in shown.observation["portfolio"]] == [-1.0, 0.0]  # zero alone
        (flipped,) = faults.accepted(
            Decision(wire={"orders": []}) if then is None else target(then)
        )
        assert flipped["responses"] == [{"symbol": "x", "presented": "negative", "grade": grade}]


def test_a_hold_never_starts_a_rate_limit_but_waits_under_one() -> None:
    faults = _faults("rate_limit", at=0, amount=3)
    faults.show(0, _task({}))
    assert not faults.refuses(_decide())  # a hold: accepted
    faults.accepted(_decide())
    faults.show(1, _task({}))
    assert faults.refuses(_decide("a"))  # orders: the limit starts
    assert faults.refuses(_decide())  # a hold under the limit: a wait
    assert faults.refuses(_decide("a"))  # restated
    assert not faults.refuses(_decide())  # the deadline passed: accepted, whatever it is
    (limited,) = faults.accepted(_decide())
    assert limited == {"fault_event": "rate_limited", "fault_id": "rate-limit", "step": 1,
                       "rejected_presentations": 3, "resubmissions_under_limit": 1,
                       "waits_under_limit": 1, "resubmitted_after_deadline": False}  # fmt: skip
    faults.show(2, _task({}))
    assert not faults.refuses(_decide("b"))  # fired once per cell


def test_the_command_line_runs_a_stdio_agent_under_a_plan_and_verifies_it(
    march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As an operator types it: describe, run, verify and re-execute, over stdio."""
    agent = f"{sys.executable} {EXAMPLES / 'pit_stdio.py'}"
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan("rate_limit")))
    config = tmp_path / "run.json"
    config.write_text(json.dumps({
        "bundle_path": str(march_release), "forms": ["8-K"], "start": "2023-03-01",
        "end": "2023-03-08", "probe": 2, "agent_process": "in_process",
    }))  # fmt: skip
    receipt, trajectory = tmp_path / "r.json", tmp_path / "t.jsonl"
    paths = ["--receipt", str(receipt), "--trajectory", str(trajectory)]
    assert main(["fault-plan", "describe", str(plan_file)]) == 0
    declared = capsys.readouterr().out
    assert "- submission acceptance is relaxed" in declared
    assert main(["run", "--config", str(config), "--agent-cmd", agent,
                 "--fault-plan", str(plan_file), *paths]) == 0  # fmt: skip
    capsys.readouterr()
    body = json.loads(receipt.read_text())["body"]
    assert body["fault_injection"]["plan_sha256"] in declared
    assert body["fault_injection"]["denominators"][0]["fired"] > 0
    verify = ["verify", str(receipt), "--trajectory", str(trajectory), "--bundle",
              str(march_release)]  # fmt: skip
    assert main([*verify, "--reexecute", "--agent-cmd", agent]) == 0
    out = capsys.readouterr().out
    assert "scores re-derived ok" in out and "reexecution ok" in out
    # the same run without the plan is another run: another id
    assert main(["run", "--config", str(config), "--agent-cmd", agent,
                 "--receipt", str(tmp_path / "plain.json"),
                 "--trajectory", str(tmp_path / "plain.jsonl")]) == 0  # fmt: skip
    plain = json.loads((tmp_path / "plain.json").read_text())["body"]
    assert plain["run_id"] != body["run_id"] and "fault_injection" not in plain
    assert [c["trades"] for c in plain["cells"]] == [c["trades"] for c in body["cells"]]


def test_a_step_still_flipped_is_not_convergence() -> None:
    both = {
        **plan("projection_lag"),
        "declared_relaxations": ["read_your_writes", "position_sign_convention"],
        "faults": plan("projection_lag")["faults"] + plan("amount_sign")["faults"],
    }
    faults = CellFaults.open(parse_plan(json.dumps(both).encode()), PIT, (0, 10, 0), 10)
    lag, flip = faults.armed
    lag.at, lag.amount = 0, 1
    flip.at, flip.amount = 2, 1
    faults.show(0, _task({}))
    faults.accepted(_decide())
    shown, events = faults.show(1, _task({"a": 1.0}))  # the write, hidden
    assert shown.positions == () and events == []
    faults.accepted(_decide())
    shown, events = faults.show(2, _task({"a": 1.0}))  # the lag is over, but flipped
    assert shown.positions == (("a", -1.0),) and events == []
    faults.accepted(_decide())
    shown, events = faults.show(3, _task({"a": 1.0}))
    assert shown.positions == (("a", 1.0),)
    assert [e["fault_event"] for e in events] == ["projection_converged"]
    assert events[0]["step"] == 3 and events[0]["stale_presentations"] == 1


ALL_MODES = {
    "schema_version": "sharpebench.fault-plan.v1",
    "seed": 5,
    "declared_relaxations": [
        "read_your_writes", "position_sign_convention", "submission_acceptance"
    ],
    "faults": [f for mode in MODES for f in plan(mode)["faults"]],
}  # fmt: skip


class _Stop(Exception):
    """The run stops here, as a kill would stop it."""


@pytest.mark.parametrize("dialect", ["pit", "sharpebench"])
def test_a_sweep_under_a_plan_stopped_and_resumed_is_the_uninterrupted_run(
    march_release: Path, march_prices: Path, tmp_path: Path, dialect: str
) -> None:
    from harness.runs.checkpoint import CheckpointRefused
    from tests.support.golden import body_text

    def stop_after(sessions: int) -> Any:
        def progress(done: int, total: int) -> None:
            if done == sessions:
                raise _Stop

        return progress

    with serving(Seen(dialect).answer) as url:
        agent = http_agent(url, dialect=dialect)
        whole = _config(march_release, tmp_path / "whole", url, dialect, march_prices,
                        fault_plan=ALL_MODES)  # fmt: skip
        run(agent, whole)
        resumed = _config(march_release, tmp_path / "resumed", url, dialect, march_prices,
                          fault_plan=ALL_MODES)  # fmt: skip
        file = tmp_path / "checkpoint.json"
        with pytest.raises(_Stop):
            run(agent, resumed, progress=stop_after(40), checkpoint=file)
        saved = file.read_bytes()
        # another plan (or none) is another invocation: refused, the file untouched
        other = {**ALL_MODES, "seed": 6}
        for changed in (other, None):
            config = _config(march_release, tmp_path / "resumed", url, dialect, march_prices,
                             fault_plan=changed)  # fmt: skip
            with pytest.raises(CheckpointRefused, match="contract differs"):
                run(agent, config, checkpoint=file)
            assert file.read_bytes() == saved
        run(agent, resumed, checkpoint=file)
    for name in ("trajectory.jsonl",):
        assert (tmp_path / "whole" / name).read_bytes() == (
            tmp_path / "resumed" / name
        ).read_bytes()
    assert body_text(tmp_path / "whole" / "receipt.json") == body_text(
        tmp_path / "resumed" / "receipt.json"
    )
    assert json.loads((tmp_path / "resumed" / "receipt.json").read_text())["body"][
        "fault_injection"
    ]


def test_every_relaxation_is_stated_where_an_entrant_reads_the_contract() -> None:
    """As sharpebench requires of its own: each relaxation named in the docs, and each
    armable one in the published schema an entrant validates against."""
    from harness.protocol.schemas import load
    from harness.rundata.faultplan import MODES, RELAXATIONS

    published = json.dumps(load("pit", "to-agent.schema.json"))
    docs = (Path(__file__).resolve().parents[3] / "docs" / "agents.md").read_text()
    armable = {relaxation for _, relaxation, arms in MODES.values() if arms}
    for relaxation in RELAXATIONS:
        assert f"`{relaxation}`" in docs
        if relaxation in armable:
            assert f"declares {relaxation}" in published, relaxation
