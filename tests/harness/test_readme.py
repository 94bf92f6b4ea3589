"""The README's and docs/'s blocks, run as written: their printed figures are what the
commands print; and every block no test runs is listed here with why.

A block is run when the line before it is a marker (``<!-- runnable...``) whose kind a
test below (or tests/pitweb/test_readme_site.py) runs; an ``<!-- output`` marker after it
holds what it must print (``...`` stands for what is left out). A marker of a kind no
test runs fails, and so does a block that is neither marked nor listed in ``NOT_RUN``."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.readme import (
    DOCS,
    README,
    REPO,
    doc_name,
    fenced_blocks,
    matches_in_order,
    run_block,
    runnable,
)
from tests.support.sandbox import require_sandbox

# every kind of runnable block, and the test that runs it
KINDS = {
    "<!-- runnable:": "test_the_walk_throughs_print_what_they_say (here)",
    "<!-- runnable-points:": "test_the_points_walk_through_runs_on_the_demo_model (here)",
    "<!-- runnable-site:": "tests/pitweb/test_readme_site.py",
    "<!-- runnable-staff:": "tests/pitweb/test_readme_site.py",
}

# Every fenced block that no test runs: (file, the start of its first line), and why.
NOT_RUN = {
    ("README.md", "make demo    # set up"): "the two commands themselves: CI runs `make test`; "
    "`make demo` serves until stopped (its seeding is tested by test_demo_seed)",
    ("README.md", "export DJANGO_DEBUG=true"): "runs a part of the test suite, which the suite "
    "cannot run inside itself; test_debug_is_off_unless_asked_for_so_a_missing_key_refuses_to_"
    "start holds the refusal it avoids",
    ("docs/points.md", "python manage.py import_pitfall"): "needs a checkout of PITFALL; "
    "tests/pitweb/points/test_points_site.py runs the same command on the copy of its points "
    "and baseline in ../shared/data/pitfall and checks the figures docs/points.md quotes",
    ("docs/evaluators.md", "make evaluators"): "installs three tools from the network, "
    "minutes of it; .ci/run runs it after the tests, and tests/harness/agents/test_inspect.py "
    "runs the Inspect half",
    ("docs/architecture.md", " submitter's machine"): "a diagram, not a command",
    ("docs/site.md", "pit-harness certificate verify certificate.json --keys pitweb-keys.json"): (
        "needs a site's certificate, keys and list: tests/pitweb/runs/test_verify_yourself.py "
        "runs the run page's certificate commands against a live site, offline, and sees "
        "them fail once the certificate is revoked"
    ),
    ("docs/points.md", "pit-harness points answer --questions questions.json"): (
        "needs a model and a site's sealed set: tests/harness/points/test_points_questions.py "
        "runs `points answer --questions` on a published Questions document against a "
        "loopback model, and tests/pitweb/points/test_sealed_answers.py uploads such answers"
    ),
    ("docs/site.md", 'curl -o commitments-log.json "$PITWEB_URL/forward/log.json"'): (
        "needs a site that serves a log and a head the reader kept: "
        "tests/pitweb/forward/test_forward_execution.py downloads /forward/log.json and runs "
        "`pit-harness commitments verify` and `verify --log` on it"
    ),
    ("docs/site.md", 'curl -o pitweb-keys.json "$PITWEB_URL/.well-known/pitweb-keys.json"'): (
        "needs a site with a board's snapshots and its key set: tests/pitweb/board/"
        "test_snapshot_chain.py downloads the signed snapshots of a chain and runs "
        "`pit-harness snapshot verify --keys` on them, edited and not"
    ),
    ("docs/site.md", 'curl -o head.json "$PITWEB_URL/forward/log/head.signed.json"'): (
        "needs a site that serves a signed head and, later, its log: tests/pitweb/forward/"
        "test_signed_head.py keeps a signed head and runs `pit-harness commitments verify "
        "--signed-head` on the log as it grew and as rewritten"
    ),
    ("README.md", "pit-harness commitments verify commitments-log.json --head SEQ:DIGEST"): (
        "a sketch with the reader's placeholders (a head kept, a release and a day's index): "
        "tests/harness/cli/test_commitments_cli.py runs `commitments verify`, the growing "
        "release walk-through in docs/release.md runs `release append` and `verify-chain`, and "
        "tests/pitweb/forward/test_forward_execution.py verifies a site's log and runs offline"
    ),
    ("docs/receipt.md", '{"prices": {"path": "prices.csv", "source": "Vendor X"'): (
        "a run config's market index and cost model, shown for their keys; tests/harness/cli/"
        "test_market_cli.py runs such a run.json, then verify --index and rescore --cost-bps"
    ),
    ("docs/receipt.md", '"forward": {'): "a run config's forward binding, shown for its keys; "
    "tests/harness/forward/test_forward_runs.py runs bound configs and validates each key",
    ("docs/site.md", "cell:  queued -> running"): "a state diagram, not a command; "
    "tests/pitweb/execution/test_execution.py and test_execution_workers.py walk its moves",
    ("docs/sandbox.md", '{"bundle_path": "release"'): "the model agent's run config, shown "
    "for its keys (it needs a model provider and its key); tests/harness/agents/"
    "test_model_agent.py runs it against a loopback endpoint",
    ("README.md", "export OPENAI_API_KEY=sk-..."): "needs a model provider and its key; "
    "tests/harness/agents/test_model_agent.py runs the same agent and config with "
    "`pit-harness run` against a loopback HTTPS model that answers with tool calls",
    ("docs/agents.md", "export OPENAI_API_KEY=sk-..."): "the README's three lines again; "
    "tests/harness/agents/test_model_agent.py runs them against a loopback model",
    ("docs/agents.md", "PYTHONPATH=. pit-harness verify model-out"): "needs the run above; "
    "tests/harness/agents/test_model_agent.py runs this re-execution by replay",
    ("docs/agents.md", "pit-harness fault-plan describe plan.json"): "needs a plan file and "
    "an agent; tests/harness/runs/test_faults.py::test_the_command_line_runs_a_stdio_agent_under_"
    "a_plan_and_verifies_it runs describe, run --fault-plan, verify and re-execution as an "
    "operator types them",
    ("docs/sandbox.md", '"capabilities": {'): "an excerpt of a receipt, not a command",
    ("docs/points.md", "pit-harness points validate"): "a list of the verbs; tests/harness/points/"
    "test_points.py runs validate, list, render and show on the real points, and its own "
    "walk-through runs validate, answer, judge and verify; test_points_pitfall_suite.py runs "
    "pitfall-suite on a cohort built as PITFALL writes one",
    ("docs/site.md", "cp .env.example .env"): "needs a Docker engine; test_deploy checks the "
    "compose file, the proxy configuration and the image's runtime instead",
    ("docs/deploy.md", "cp .env.example .env"): "serves until stopped, as root; "
    "test_compose_processes runs the same script with the worker scaled to two, copies a "
    "release in and execs the site's commands as the block does",
    ("docs/release.md", "curl --fail"): "downloads from the SEC; tests/harness/release/"
    "test_edgar_files.py builds releases from that very file (../shared/data/edgar)",
    ("docs/release.md", "date,symbol,open,close"): "a sample of the price file's format, "
    "not a command; tests/harness/market/test_prices_real.py reads such files",
    ("docs/release.md", '{"prices": {"path"'): "an excerpt of a run config, shown for its "
    "keys; tests/harness/cli/test_verify_cli.py refuses a prices object without them",
}


def test_every_block_is_run_or_says_why_not() -> None:
    listed = set()
    for doc in DOCS:
        for before, first in fenced_blocks(doc.read_text()):
            if before.startswith("<!-- output"):
                continue
            if before.startswith("<!-- runnable"):
                assert before.startswith(tuple(KINDS)), (
                    f"{doc_name(doc)}: a block marked {before[:30]!r}, a kind no test runs"
                )
                continue
            keys = [k for k in NOT_RUN if k[0] == doc_name(doc) and first.startswith(k[1])]
            assert keys, (
                f"{doc_name(doc)}: block {first!r} is neither marked runnable nor listed in NOT_RUN"
            )
            listed.update(keys)
    assert listed == set(NOT_RUN), (
        f"NOT_RUN lists blocks that are not there: {set(NOT_RUN) - listed}"
    )


def test_every_kind_of_runnable_block_is_there() -> None:
    text = "\n".join(doc.read_text() for doc in DOCS)
    for kind in KINDS:
        assert runnable(text, kind), f"no block is marked {kind!r}; {KINDS[kind]} runs none"
    assert any("pit-harness run" in b.code for b in runnable(README.read_text()))
    assert all(b.expected for b in runnable(text))


def test_the_walk_throughs_print_what_they_say(tmp_path: Path) -> None:
    """Each page's blocks, in order, in an empty folder of the page's own."""
    require_sandbox()  # the printed capability line is the sandboxed one
    for doc in DOCS:
        folder = tmp_path / doc.stem
        folder.mkdir()
        for block in runnable(doc.read_text()):
            done = run_block(block.code, folder, language=block.language)
            assert done.returncode == 0, f"{doc_name(doc)}:\n{block.code}\n{done.stderr[-3000:]}"
            missing = matches_in_order(done.stdout, block.expected or "")
            assert missing is None, (
                f"{doc_name(doc)} shows {missing!r}; the commands printed:\n{done.stdout}"
            )


def test_the_points_walk_through_runs_on_the_demo_model(tmp_path: Path) -> None:
    """No key, no network: the demo model the block starts, and the points it ships."""
    shutil.copytree(REPO / "examples" / "points", tmp_path / "examples" / "points")
    [block] = [b for doc in DOCS for b in runnable(doc.read_text(), "<!-- runnable-points:")]
    done = run_block(block.code, tmp_path, drop=("OPENAI_API_KEY",))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    missing = matches_in_order(done.stdout, block.expected or "")
    assert missing is None, (
        f"docs/points.md shows {missing!r}; the commands printed:\n{done.stdout}"
    )
