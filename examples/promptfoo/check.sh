#!/usr/bin/env bash
# Check that promptfoo reads a `pit-harness export` file as meant: one JSONL
# line -> exactly one test case, all passing with the echo provider, and no
# schema warnings. promptfoo exits 0 even when list vars fan one line out into
# many cases, or when null vars fail its schema, so those are checked here.
#
# Usage: check.sh WORKDIR SAMPLES
#   WORKDIR  scratch folder (created if missing); everything is written here.
#   SAMPLES  JSONL file from `pit-harness export`.
set -euo pipefail

die() { echo "promptfoo check: $*" >&2; exit 1; }

[[ $# -eq 2 ]] || { echo "usage: $0 WORKDIR SAMPLES" >&2; exit 2; }
[[ -f $2 ]] || die "samples file not found: $2"

here=$(cd "$(dirname "$0")" && pwd)
samples="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
mkdir -p "$1"
work=$(cd "$1" && pwd)

# Keep every write inside WORKDIR: npm's cache and logs, promptfoo's
# config dir (db, logs, notices, id file; defaults to ~/.promptfoo), temp files.
export npm_config_cache="$work/.npm-cache"
export TMPDIR="$work/tmp"
export PROMPTFOO_CONFIG_DIR="$work/.promptfoo"
# Names verified in promptfoo 0.121.20's dist code.
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1
# Inherited, this would hide exactly the list-var fan-out this check exists for.
unset PROMPTFOO_DISABLE_VAR_EXPANSION
mkdir -p "$TMPDIR"

# WORKDIR may be this folder itself (a local run next to the config).
[[ $here -ef $work ]] ||
  cp "$here/package.json" "$here/package-lock.json" "$here/promptfooconfig.yaml" "$work/"
[[ $samples -ef $work/samples.jsonl ]] || cp "$samples" "$work/samples.jsonl"
# A stale results file from an earlier run must not be able to pass.
rm -f "$work/results.json"
cd "$work"

# --ignore-scripts: echo needs no native postinstalls, and some optional deps'
# postinstalls (playwright's chromium, onnxruntime) download into $HOME.
# Optional deps can't be omitted: the results db needs @libsql/<platform>.
t0=$SECONDS
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >npm-ci.log 2>&1 \
  || { tail -n 40 npm-ci.log >&2; die "npm ci failed (log: $work/npm-ci.log)"; }
t_ci=$((SECONDS - t0))

# --no-table: the table is for humans, and an earlier trial with it exited 1
# on "write after end"; -o gives the machine-readable result; --no-write skips
# the results db nobody reads here; </dev/null rules out interactive prompts.
t0=$SECONDS
rc=0
# The proxy is a closed local port: with telemetry disabled promptfoo 0.121.20 still sends
# one "telemetry disabled" event, and echo needs no network, so nothing may leave (seen:
# its one connection attempt goes to the proxy, refused, and no name is looked up).
HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY= \
  ./node_modules/.bin/promptfoo eval -c promptfooconfig.yaml -o results.json \
  --no-table --no-progress-bar --no-cache --no-share --no-write \
  >promptfoo.log 2>&1 </dev/null || rc=$?
t_eval=$((SECONDS - t0))

problems=()
[[ $rc -eq 0 ]] || problems+=("promptfoo eval exited $rc")
# e.g. a null var: promptfoo warns "TestSuite Schema Validation Error ... at tests[0].vars" and runs anyway.
if grep -q "Schema Validation Error" promptfoo.log; then
  problems+=("promptfoo printed a schema validation warning")
fi
summary=""
if [[ -f results.json ]]; then
  summary=$(node - samples.jsonl results.json <<'JS'
const fs = require("fs");
const [samplesPath, resultsPath] = process.argv.slice(2);
// Blank lines are skipped by promptfoo's JSONL reader too.
const ids = fs.readFileSync(samplesPath, "utf8").split("\n")
  .filter((l) => l.trim()).map((l) => JSON.parse(l).id);
const rows = JSON.parse(fs.readFileSync(resultsPath, "utf8")).results.results;
const bad = [];
if (rows.length !== ids.length)
  bad.push(`${rows.length} cases from ${ids.length} lines` +
    (rows.length > ids.length ? " (promptfoo expands a list-valued var into one case per element)" : ""));
const seen = rows.map((r) => r.testCase && r.testCase.id).sort().join("\n");
if (rows.length === ids.length && seen !== [...ids].sort().join("\n"))
  bad.push("case ids differ from the export's line ids");
const failed = rows.filter((r) => !r.success);
if (failed.length)
  bad.push(`${failed.length} case(s) failed, first: ${failed[0].testCase?.id}: ` +
    (failed[0].error || failed[0].gradingResult?.reason || "no reason given"));
if (bad.length) { console.log(bad.join("; ")); process.exit(1); }
console.log(`${rows.length} cases from ${ids.length} lines, all passed`);
JS
  ) || problems+=("$summary")
else
  problems+=("promptfoo wrote no results.json")
fi

if ((${#problems[@]})); then
  echo "--- last 40 lines of $work/promptfoo.log" >&2
  tail -n 40 promptfoo.log >&2
  printf 'promptfoo check FAILED: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "promptfoo: $summary (npm ci ${t_ci}s, eval ${t_eval}s)"
