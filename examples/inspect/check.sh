#!/usr/bin/env bash
# Inspect on both sides of the harness, in a throwaway environment built from the
# [inspect] extra's own lock (requirements/inspect.lock) and the harness itself:
#   1. an Inspect solver (mock_agent.py) run by pit-harness through nine sandboxed cells,
#      and its receipt verified;
#   2. `inspect eval reverse.py` over the exported samples: as many samples scored as the
#      file has lines, exit 0.
# Usage: check.sh WORKDIR SAMPLES RELEASE   (nothing is written outside WORKDIR)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="$1" samples="$(realpath "$2")" release="$(realpath "$3")"
mkdir -p "$work" && work="$(cd "$work" && pwd)"

python="$(command -v python3.11 || command -v python3)"
"$python" -m venv "$work/venv"
# the harness from a copy of its sources: a build writes beside them
mkdir -p "$work/src" && cp -r "$repo"/{pyproject.toml,README.md,LICENSE,harness,pit_harness} "$work/src/"
pip=("$work/venv/bin/pip" install --quiet --disable-pip-version-check)
{ "${pip[@]}" --require-hashes -r "$repo/requirements/inspect.lock" &&
  "${pip[@]}" --no-deps "$work/src"; } >"$work/pip.log" 2>&1 || { tail -n 40 "$work/pip.log"; exit 1; }
bin="$work/venv/bin"
# Inspect keeps its logs and data where it is told, never in the user's home
export INSPECT_LOG_DIR="$work/logs" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
# the examples are imported from this folder: no byte code written beside them
export PYTHONPATH="$here" PYTHONDONTWRITEBYTECODE=1

# 1. the forward direction: nine cells, a receipt that verifies
cd "$work"
"$bin/python" - "$here/run.json" "$release" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config.update(bundle_path=sys.argv[2], agent_process="isolated")
json.dump(config, open("run.json", "w"))
PY
"$bin/pit-harness" run --config run.json >run.out
"$bin/pit-harness" verify out/receipt.json --trajectory out/trajectory.jsonl --bundle "$release" >verify.out
"$bin/python" - <<'PY'
import json
body = json.load(open("out/receipt.json"))["body"]
cells = body["cells"]
assert body["valid"] and len(cells) == 9, (body["valid"], len(cells))
assert all(c["status"] == "complete" and c["agent_errors"] == 0 for c in cells), cells
assert body["capabilities"]["agent_process"] == "isolated"
trades = sum(c["trades"] for c in cells)
print(f"inspect: a solver through {len(cells)} isolated cells, {trades} trades, receipt verified")
PY

# 2. the reverse direction: Inspect reads the samples and drives the harness's tools
lines=$(wc -l <"$samples")
cd "$here"  # Inspect resolves a task file relative to where it runs
"$bin/inspect" eval reverse.py -T samples="$samples" -T release="$release" \
  --display none --log-format json >"$work/eval.out" 2>&1 || { cat "$work/eval.out"; exit 1; }
"$bin/python" - "$lines" <<'PY'
import glob, os, sys
from inspect_ai.log import read_eval_log
lines = int(sys.argv[1])
(path,) = glob.glob(os.path.join(os.environ["INSPECT_LOG_DIR"], "*.json"))
log = read_eval_log(path)
samples = log.samples or []
assert log.status == "success", log.status
assert len(samples) == lines, (len(samples), lines)
scores = [s.scores["knowable_picks"].value for s in samples]
print(f"inspect: {len(samples)} samples from {lines} lines, knowable_picks mean {sum(scores) / len(scores):.3f}")
PY
