"""Reading a JSON file someone else wrote, within limits: at most ``MAX_BYTES`` read
(whatever the file's size), UTF-8 text, complete JSON, nested at most ``MAX_DEPTH`` deep.
Each refusal names the file and the limit it broke, so a file built to exhaust memory or
the parser is refused before anything reads its content."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# PITFALL's 174-point artifact is about 1.3 MB and nests 5 deep; a live-shadow seal holds
# every attempt's event trace. These leave room for files many times larger.
MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 32


class JsonFileError(ValueError):
    """The file is too large, not UTF-8, not complete JSON, or nested too deep."""


def _text(file: Path) -> str:
    with file.open("rb") as handle:  # read at most one byte past the limit, whatever the file
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise JsonFileError(
            f"{file}: larger than {MAX_BYTES} bytes ({MAX_BYTES >> 20} MiB), the limit for an "
            "artifact"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JsonFileError(f"{file}: not UTF-8 text") from None


def _deeper_than(data: Any, limit: int) -> bool:
    stack = [(data, 1)]
    while stack:  # a loop, not recursion: the depth is what is being checked
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                return True
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return False


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON value in ``path``, once it is within every limit."""
    file = Path(path)
    text = _text(file)
    too_deep = f"{file}: nested deeper than {MAX_DEPTH} levels, the limit for an artifact"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonFileError(f"{file}: not complete JSON (truncated?): {exc}") from None
    except RecursionError:  # deeper than the parser goes is deeper than the limit
        raise JsonFileError(too_deep) from None
    except ValueError as exc:  # a number longer than Python converts
        raise JsonFileError(f"{file}: not JSON that can be read: {exc}") from None
    if _deeper_than(data, MAX_DEPTH):
        raise JsonFileError(too_deep)
    return data
