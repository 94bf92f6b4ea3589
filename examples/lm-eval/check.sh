#!/usr/bin/env bash
# lm-evaluation-harness 0.4.13 reads a `pit-harness export` as meant: the pit_decisions
# task, run with the dummy model in a throwaway venv, logs one doc per line of SAMPLES,
# each equal to its line, timestamps as the exact strings (the "Z" kept).
# Usage: check.sh WORKDIR SAMPLES. Nothing is written outside WORKDIR, nothing fetched
# but the locked wheels.
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 WORKDIR SAMPLES" >&2; exit 2; fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
samples="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
mkdir -p "$1"
work="$(cd "$1" && pwd)"
# the real interpreter, resolved while HOME is still the one a pyenv shim looks in
python="$(python3.11 -c 'import sys; print(sys.executable)')"

rm -rf "$work/venv" "$work/out"
mkdir -p "$work/home" "$work/tmp"
# HOME, caches and temp files into WORKDIR; no byte code beside utils.py (lm-eval imports
# it from this folder); the hubs offline, so a load that would fetch fails instead
export HOME="$work/home" XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp" HF_HOME="$work/hf"
export PYTHONDONTWRITEBYTECODE=1
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1

start=$SECONDS
"$python" -m venv "$work/venv"
# --no-deps: the lock is the whole closure, and pip's resolver refuses a hashed pin that a
# dependency asks for with an extra (typepy[datetime]; pypa/pip#9644); pip check confirms it
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --no-deps \
  -r "$here/requirements.lock"
"$work/venv/bin/pip" check --disable-pip-version-check >/dev/null
built=$((SECONDS - start))

cp "$samples" "$work/samples.jsonl"
start=$SECONDS
rc=0
# the task reads samples.jsonl from the cwd
(cd "$work" && "$work/venv/bin/lm_eval" --model dummy --tasks pit_decisions \
  --include_path "$here" --log_samples --output_path "$work/out") >"$work/lm_eval.log" 2>&1 || rc=$?
ran=$((SECONDS - start))
if [ "$rc" -ne 0 ]; then
  tail -n 20 "$work/lm_eval.log" >&2
  echo "lm-eval: exit $rc (log: $work/lm_eval.log)" >&2
  exit 1
fi

"$work/venv/bin/python" - "$work/samples.jsonl" "$work/out" "$built" "$ran" <<'PY'
import glob, json, sys

samples, out, built, ran = sys.argv[1:]
TIMESTAMPS = ("known_at", "session_date", "window_start", "window_end")


def flat(sample):
    """A sample's scalars by dotted key; null is how a declared key absent from the
    line (release, on the shifted arm) comes back, so it counts as absent."""
    top = {k: v for k, v in sample.items() if k not in ("metadata", "vars")}
    for part in ("metadata", "vars"):
        top.update({f"{part}.{k}": v for k, v in sample[part].items()})
    return {k: v for k, v in top.items() if v is not None}


with open(samples, encoding="utf-8") as handle:
    lines = [json.loads(line) for line in handle.read().splitlines()]
logs = glob.glob(f"{out}/**/samples_pit_decisions_*.jsonl", recursive=True)
if len(logs) != 1:
    sys.exit(f"lm-eval: expected one samples log under {out}, found {logs}")
with open(logs[0], encoding="utf-8") as handle:
    docs = {}
    for record in map(json.loads, handle):
        docs[record["doc"]["id"]] = record["doc"]
if len(docs) != len(lines):
    sys.exit(f"lm-eval: {len(docs)} cases logged from {len(lines)} lines")
problems = []
for line in lines:
    want = flat(line)
    if any(f"{part}.{key}" not in want for part in ("metadata", "vars") for key in TIMESTAMPS):
        problems.append(f"{line['id']}: the line lacks a timestamp")
    got = flat(docs.get(line["id"]) or {"metadata": {}, "vars": {}})
    for key in sorted(set(want) | set(got)):
        if got.get(key) != want.get(key):
            problems.append(f"{line['id']}: {key} logged {got.get(key)!r}, line has {want.get(key)!r}")
if problems:
    sys.exit("lm-eval: the round trip changed the data\n  " + "\n  ".join(problems[:10]))
print(f"lm-eval: {len(docs)} cases from {len(lines)} lines, timestamps kept "
      f"(venv {built}s, eval {ran}s)")
PY
