"""The harness installs alone: its own wheel, into a fresh environment, from the local
wheel cache ``make setup`` fills (no network here), without the site's dependencies; the
seed-shaped session runs there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".wheels"


def _run(
    *argv: str | Path, cwd: Path | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(extra)
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{argv}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_harness_installs_from_its_own_wheel_and_runs_without_the_site(
    tmp_path: Path,
) -> None:
    if not CACHE.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("make setup fills .wheels; CI must run this test")
        pytest.skip("no local wheel cache (.wheels): run make setup")
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "-w", dist, ROOT)  # fmt: skip
    [wheel] = dist.glob("*.whl")
    # the wheel is the engine alone: the site runs from its checkout, never from this wheel
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist() if "/" in name}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"harness", "pit_harness"}
    assert "harness/receipt/schemas/receipt-body.schema.json" in archive.namelist()
    assert "harness/protocol/published/sharpebench/decision.schema.json" in archive.namelist()
    for vendored in ("every-eval-ever.eval.schema.json", "every-eval-ever.LICENSE"):
        assert f"harness/interchange/schemas/{vendored}" in archive.namelist()
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", CACHE,
         "--disable-pip-version-check", wheel)  # fmt: skip

    # no Django, no Celery; the schema file is there
    probe = _run(
        python,
        "-c",
        "import importlib.util as u, json; from harness.receipt.schemas import receipt_body_schema; "
        "print(json.dumps([u.find_spec(m) is None for m in ('django', 'celery', 'rest_framework')]"
        " + [receipt_body_schema()['title']]))",
        cwd=tmp_path,
    )
    assert json.loads(probe.stdout) == [True, True, True, "pit-harness receipt body"]

    # the seed-shaped session, with the installed command
    harness = venv / "bin" / "pit-harness"
    _run(harness, "release", "synth", "--out", "release", "--start", "2023-03-01",
         "--end", "2023-03-31", "--seed", "7", "--rows", "4000", cwd=tmp_path)  # fmt: skip
    (tmp_path / "run.json").write_text(
        json.dumps(
            {
                "bundle_path": "release",
                "forms": ["8-K"],
                "start": "2023-03-01",
                "end": "2023-03-10",
            }
        )
    )
    ran = _run(harness, "run", "--config", "run.json", cwd=tmp_path)
    assert "valid=True" in ran.stdout and ran.stdout.count("total_return") == 9
    checked = _run(harness, "verify", "receipt.json", "--trajectory", "trajectory.jsonl",
                   "--bundle", "release", cwd=tmp_path)  # fmt: skip
    assert checked.stdout.count(" ok ") == 3
    # exported as an Every Eval Ever record, validated with the vendored schema (no Inspect)
    exported = _run(harness, "export-eee", "receipt.json", "--trajectory", "trajectory.jsonl",
                    "--bundle", "release", "--out", "eee.json", cwd=tmp_path)  # fmt: skip
    assert "(Every Eval Ever 0.3.0, validated)" in exported.stdout
    # and the seed's import names
    _run(python, "-c", "from pit_harness import Bundle, RunConfig, load_prices, run; "
         "from pit_harness.adapters.plain import from_callable", cwd=tmp_path)  # fmt: skip


AGENT_MODULE = """
def decide(prompt, tools):
    return [r["row_key"] for r in tools.pit_list(limit=3)["rows"]]
"""


def test_everything_under_a_temporary_folder_runs_sandboxed_as_anywhere(tmp_path: Path) -> None:
    """The harness installed in an environment under /tmp (where a first try often lands),
    the agent's own code beside it, and the outputs there too: agents named by reference,
    from the harness and from the user's folder, load in every cell, and the run is
    confined and isolated (the cell's fresh /tmp keeps what the sandbox shows there)."""
    from tests.support.sandbox import require_sandbox

    require_sandbox()
    if not CACHE.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("make setup fills .wheels; CI must run this test")
        pytest.skip("no local wheel cache (.wheels): run make setup")
    assert str(tmp_path).startswith("/tmp/") or os.environ.get("CI") != "true"
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "-w", dist, ROOT)  # fmt: skip
    [wheel] = dist.glob("*.whl")
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-index",
         "--find-links", CACHE, "--disable-pip-version-check", wheel)  # fmt: skip
    harness = venv / "bin" / "pit-harness"
    _run(harness, "release", "synth", "--out", "release", "--start", "2023-03-01",
         "--end", "2023-03-31", "--seed", "7", "--rows", "4000", cwd=tmp_path)  # fmt: skip
    mine = tmp_path / "my-agent"
    mine.mkdir()
    (mine / "three_first.py").write_text(AGENT_MODULE)
    for agent in ("harness.agents.baselines:earliest_five", "three_first:decide"):
        out = tmp_path / agent.split(":")[1]
        config = {"bundle_path": "release", "forms": ["8-K"], "start": "2023-03-01",
                  "end": "2023-03-03", "agent": agent, "agent_process": "isolated",
                  "trajectory_path": f"{out}/trajectory.jsonl",
                  "receipt_path": f"{out}/receipt.json"}  # fmt: skip
        (tmp_path / "run.json").write_text(json.dumps(config))
        _run(harness, "run", "--config", "run.json", cwd=tmp_path, PYTHONPATH=str(mine))
        body = json.loads((out / "receipt.json").read_text())["body"]
        assert [c["status"] for c in body["cells"]] == ["complete"] * 9, agent
        capabilities = body["capabilities"]
        assert capabilities["filesystem_confined"] is True, agent
        assert capabilities["cells_isolated"] is True, agent
        assert sum(c["trades"] for c in body["cells"]) > 0, agent
