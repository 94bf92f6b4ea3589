"""Loader and scoring for pit_decisions.yaml (lm-evaluation-harness 0.4.13)."""

import json
import os
import re

import datasets

# harness/runs/export.py FIELDS, copied: this venv has no harness in it. load() refuses a
# key or a type that differs, since Dataset.from_list would drop the one and coerce the other.
FIELDS = {
    "arm": str,
    "clock": str,
    "session_date": str,
    "known_at": str,
    "session_number": int,
    "newly_knowable": int,
    "hold_sessions": int,
    "window_start": str,
    "window_end": str,
    "forms": str,
    "rows_in_window": int,
    "bundle_content_digest": str,
    "release": str,  # absent on the shifted arm: comes through as None
    "scorer": str,
}
_VALUE = {str: datasets.Value("string"), int: datasets.Value("int64")}
_META = {key: _VALUE[kind] for key, kind in FIELDS.items()}
FEATURES = datasets.Features(
    {
        "id": _VALUE[str],
        "input": _VALUE[str],
        "target": _VALUE[str],
        "metadata": _META,
        "vars": {"prompt": _VALUE[str], **_META},
    }
)

# as harness/agents/adapters/plain.py reads a reply's picks
ROW_KEY = re.compile(r"\br-[0-9a-f]{16}\b")


def load(samples="samples.jsonl", **_):
    """The export as the test split, with FEATURES declared.

    Not ``load_dataset("json", features=...)``: that loader lets pyarrow parse the file
    first, and pyarrow reads ISO-8601 strings as naive timestamps, so ``...T14:30:00Z``
    comes back as ``... 14:30:00`` whatever the declared type (datasets 5.2, pyarrow 26).
    Parsed here by ``json``, no type is ever guessed. ``samples`` is relative to the cwd,
    or given with ``--metadata '{"samples": PATH}'``; lm-eval's other metadata is ignored.
    """
    with open(os.path.expanduser(samples), encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    for n, row in enumerate(rows, 1):
        if set(row) != set(FEATURES):
            raise ValueError(f"{samples}:{n}: keys {sorted(row)}, not {sorted(FEATURES)}")
        for part, fields in (("metadata", FIELDS), ("vars", {"prompt": str, **FIELDS})):
            for key, value in row[part].items():
                if type(value) is not fields.get(key):  # bool is no int here
                    raise ValueError(f"{samples}:{n}: {part}.{key}={value!r} is not as declared")
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows, features=FEATURES)})


def process_results(doc, results):
    """What can be said of a reply without the window: how many row keys it names, and
    whether it says anything. The target is empty, so exact_match would mean nothing;
    the scorer that means something is ``knowable_picks`` (examples/inspect)."""
    reply = results[0]
    return {"row_keys": len(set(ROW_KEY.findall(reply))), "answered": float(bool(reply.strip()))}
