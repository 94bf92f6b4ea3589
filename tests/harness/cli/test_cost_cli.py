"""``pit-harness cost``: a real run's measured model usage priced with a rate card, and
``pit-harness verify`` refusing a receipt whose token counts were forged."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness import run
from harness.agents.adapters.plain import from_callable
from harness.cli import main
from harness.outcomes import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE
from harness.receipt.build import receipt_text
from tests.support.loopback_agents import openai_agent
from tests.support.model_server import SECRET, DetailedUsageHandler, egress_config, serving_https
from tests.support.sandbox import require_sandbox

MODEL = "loopback-1-2026-01-01"


@dataclass
class _Run:
    folder: Path
    prompts: list[int]  # each request's prompt, in characters (one token each)


@pytest.fixture(scope="module")
def model_run(march_release: Path, tmp_path_factory: pytest.TempPathFactory) -> _Run:
    """An isolated agent asking a loopback model that reports detailed usage."""
    require_sandbox()
    out = tmp_path_factory.mktemp("cost")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PIT_TEST_MODEL_KEY", SECRET)
        with serving_https(DetailedUsageHandler, out / "model") as (port, cert, seen):
            agent = from_callable(openai_agent(f"https://127.0.0.1:{port}/v1"))
            run(agent, egress_config(march_release, out, port, cert))
    return _Run(out, [len(s["messages"][-1]["content"]) for s in seen])


def _card(folder: Path, models: dict[str, Any]) -> Path:
    path = folder / "card.json"
    path.write_text(json.dumps({"schema_version": "pit-harness.rate-card.v1", "models": models}))
    return path


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cost_prices_the_measured_tokens_of_every_cell_and_the_run(
    model_run: _Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rates = {"input": 200, "cached_input": 50, "output": 800, "reasoning": 1000}
    card = _card(tmp_path, {MODEL: rates})
    receipt = str(model_run.folder / "receipt.json")
    code, out, err = _cli(capsys, "cost", receipt, "--rate-card", str(card), "--json")
    assert code == EXIT_OK, err
    shown = json.loads(out)
    prompts = model_run.prompts
    cached = sum(p // 2 for p in prompts)
    expected = (
        (sum(prompts) - cached) * 200 + cached * 50 + 15 * 800 * len(prompts)
    ) + 25 * 1000 * len(prompts)  # 40 output tokens each, 25 of them reasoning
    assert shown["run"]["cost_nanodollars"] == expected and shown["run"]["whole"] is True
    assert shown["run"]["exchanges"] == len(prompts)
    assert sum(c["cost_nanodollars"] for c in shown["cells"].values()) == expected
    assert len(shown["cells"]) == 9 and shown["rate_card"]["sha256"].startswith("sha256:")
    assert shown["self_reported"] is None  # the agent said nothing of its cost

    code, out, _ = _cli(capsys, "cost", receipt, "--rate-card", str(card))
    assert code == EXIT_OK
    assert out.splitlines()[-2].startswith("run ") and "cost $0.0" in out.splitlines()[-2]


def test_a_model_the_card_does_not_list_makes_the_figure_a_floor(
    model_run: _Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = _card(tmp_path, {"another-model": {"input": 1, "output": 1}})
    receipt = str(model_run.folder / "receipt.json")
    code, out, _ = _cli(capsys, "cost", receipt, "--rate-card", str(card))
    assert code == EXIT_OK
    run_line = out.splitlines()[-2]
    assert f"at least $0.000000000 (unpriced: {MODEL})" in run_line


def test_a_refused_card_is_a_usage_error(
    model_run: _Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = _card(tmp_path, {MODEL: {"input": -3, "output": 1}})
    receipt = str(model_run.folder / "receipt.json")
    code, _, err = _cli(capsys, "cost", receipt, "--rate-card", str(card))
    assert code == EXIT_USAGE and "--rate-card" in err and "input" in err


def test_verify_refuses_a_receipt_whose_token_count_was_forged(
    model_run: _Run, march_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    receipt = json.loads((model_run.folder / "receipt.json").read_text())
    body = receipt["body"]
    body["cells"][4]["usage"]["input_tokens"] //= 2  # a cheaper run, hashed again
    forged = tmp_path / "receipt.json"
    forged.write_text(receipt_text(body, receipt["emitted_at"]))
    args = ["--trajectory", str(model_run.folder / "trajectory.jsonl"), "--bundle"]
    code, out, _ = _cli(capsys, "verify", str(forged), *args, str(march_release))
    assert code == EXIT_MISMATCH
    assert "redacted/dump usage" in out and "input_tokens" in out
    code, _, _ = _cli(
        capsys, "verify", str(model_run.folder / "receipt.json"), *args, str(march_release)
    )
    assert code == EXIT_OK
