#!/usr/bin/env bash
# The evaluators' own tools reading the export as meant (README: "Exports for other eval
# tools"): Inspect, promptfoo and lm-evaluation-harness, each installed in a throwaway
# environment under WORK (default .tools, emptied first) from its own lock, each run
# asserting as many cases as the samples file has lines and exit code 0. Prints how long
# each took. CI runs it (.ci/run); it needs the network for the installs.
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-.tools}"
rm -rf "$work" && mkdir -p "$work" && work="$(cd "$work" && pwd)"
pit=.venv/bin/pit-harness

# one synthetic release and one export: the shifted arm (dates ten years on, no release
# name), the pit clock, a window of two weeks
"$pit" release synth --out "$work/release" --start 2023-03-01 --end 2023-03-31 --seed 7 \
  --rows 4000 --acceptance-fraction 0.05 >/dev/null
"$pit" export --bundle "$work/release" --arm shifted --clock pit --forms 8-K \
  --start 2023-03-01 --end 2023-03-14 --out "$work/samples.jsonl"

for tool in inspect promptfoo lm-eval; do
  started=$(date +%s)
  args=("$work/$tool" "$work/samples.jsonl")
  if [ "$tool" = inspect ]; then args+=("$work/release"); fi  # Inspect rebinds the tools
  bash "examples/$tool/check.sh" "${args[@]}"
  echo "$tool: $(($(date +%s) - started)) s (install and run)"
done
