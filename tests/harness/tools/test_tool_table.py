"""The four tools as an agent meets them: the specs a model is shown, the errors bad
arguments get, in process and through the sandbox's proxies, and the bytes a proxy
puts on the pipe. Each is held to what agents met before the tools were one table."""

from __future__ import annotations

import inspect
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.agents.base import Task
from harness.isolation.sandbox.channel import Channel
from harness.isolation.sandbox.shim import RemoteToolbox
from harness.tools.table import TOOLS
from harness.tools.toolbox import Toolbox
from harness.vocabulary import TOOL_NAMES
from tests.harness.tools.test_tools import KNOWABLE, NEW, SESSION, A, C, E, base_rows, make_toolbox

SPECS = Path(__file__).parents[1] / "fixtures" / "tool-specs.json"


def test_the_specs_a_model_sees_are_byte_for_byte_the_published_ones() -> None:
    tools, _ = make_toolbox(base_rows())
    assert json.dumps(tools.schema()) + "\n" == SPECS.read_text()


@pytest.mark.parametrize(
    ("tool", "kwargs", "error"),
    [
        ("pit_list", {"limit": -1}, "limit must be a non-negative integer, got -1"),
        ("pit_list", {"offset": -1}, "offset must be a non-negative integer, got -1"),
        ("pit_list", {"since": "yesterday"}, "since must be 'previous_session' or 'window_start'"),
        # the first bad argument is the one named
        (
            "pit_list",
            {"limit": -1, "offset": -1, "since": "x"},
            "limit must be a non-negative integer, got -1",
        ),
        ("pit_list", {"offset": -1, "since": "x"}, "offset must be a non-negative integer, got -1"),
        ("pit_search", {"query": ""}, "query must be a non-empty string"),
        ("pit_search", {"query": "   "}, "query must be a non-empty string"),
        ("pit_search", {"query": "x", "limit": -3}, "limit must be a non-negative integer, got -3"),
    ],
)
def test_bad_arguments_get_the_same_error_words(
    tool: str, kwargs: dict[str, Any], error: str
) -> None:
    tools, calls = make_toolbox(base_rows())
    result = getattr(tools, tool)(**kwargs)
    assert result["error"] == error
    assert calls[0][1] == {**_defaults(tool), **kwargs}
    assert tools.take_fault() is None  # a value out of bounds is told, never a fault


@pytest.mark.parametrize(
    ("tool", "kwargs", "error"),
    [
        ("pit_list", {"limit": "5"}, "pit_list: limit must be an integer or null, got a string"),
        ("pit_list", {"limit": True}, "pit_list: limit must be an integer or null, got a boolean"),
        ("pit_list", {"limit": 2.5}, "pit_list: limit must be an integer or null, got a number"),
        ("pit_list", {"offset": None}, "pit_list: offset must be an integer, got a null"),
        ("pit_list", {"offset": False}, "pit_list: offset must be an integer, got a boolean"),
        ("pit_list", {"since": None}, "pit_list: since must be a string, got a null"),
        ("pit_list", {"form": 5}, "pit_list: form must be a string or null, got an integer"),
        # the type of every argument is checked before any value
        (
            "pit_list",
            {"limit": -1, "form": [1]},
            "pit_list: form must be a string or null, got an array",
        ),
        ("pit_search", {"query": 5}, "pit_search: query must be a string, got an integer"),
        (
            "pit_search",
            {"query": "", "limit": "2"},
            "pit_search: limit must be an integer or null, got a string",
        ),
        ("pit_read", {"row_key": {"a": 1}}, "pit_read: row_key must be a string, got an object"),
    ],
)
def test_an_argument_of_the_wrong_type_is_named_by_its_type_and_is_the_agents_fault(
    tool: str, kwargs: dict[str, Any], error: str
) -> None:
    tools, calls = make_toolbox(base_rows())
    args = {**_defaults(tool), **kwargs}
    result = getattr(tools, tool)(**kwargs)
    assert result == {"tool": tool, "arm": "main", "clock": "pit", "session_date": SESSION.isoformat(),
                      "known_at": result["known_at"], "error": error}  # fmt: skip
    assert calls[0][1] == args  # recorded as sent
    fault = tools.take_fault()
    assert fault is not None
    assert (fault.fault.kind, fault.fault.message) == (
        "protocol_violation",
        f"a tool argument of the wrong type: {error}",
    )


def _defaults(tool: str) -> dict[str, Any]:
    return {
        "pit_list": {"limit": 100, "offset": 0, "since": "previous_session", "form": None},
        "pit_search": {"limit": 20, "form": None},
        "pit_read": {},
    }[tool]


@pytest.mark.parametrize(
    ("tool", "kwargs", "keys"),
    [
        ("pit_list", {"limit": None}, NEW),  # no cap
        ("pit_list", {"limit": 20_000, "since": "window_start"}, KNOWABLE),  # capped, not refused
        ("pit_search", {"query": "8-K", "limit": None}, [A, C, E]),  # the default
        ("pit_list", {"form": "10-Q/A"}, []),  # a form that is no form matches nothing
        ("pit_search", {"query": "8-K", "form": "nothing"}, []),
    ],
)
def test_arguments_the_tools_take_as_they_are(
    tool: str, kwargs: dict[str, Any], keys: list[str]
) -> None:
    tools, _ = make_toolbox(base_rows())
    result = getattr(tools, tool)(**kwargs)
    assert [row["row_key"] for row in result["rows"]] == keys
    assert result["total"] == len(keys)


def test_a_row_key_that_is_no_row_is_not_in_the_window() -> None:
    tools, _ = make_toolbox(base_rows())
    assert tools.pit_read("r-nothing")["status"] == "not_in_window"


@pytest.fixture()
def proxies() -> Iterator[tuple[RemoteToolbox, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    task = Task(
        kind="trade",
        prompt="p",
        arm="main",
        clock="pit",
        session_date=SESSION.isoformat(),
        known_at="2023-03-08T14:30:00Z",
    )
    yield RemoteToolbox(Channel(ours), task, 3), theirs
    ours.close()
    theirs.close()


@pytest.mark.parametrize(
    ("tool", "args", "kwargs", "error"),
    [
        (
            "pit_read",
            (),
            {"key": "r-1"},
            "RemoteToolbox.pit_read() got an unexpected keyword argument 'key'",
        ),
        (
            "pit_read",
            (),
            {},
            "RemoteToolbox.pit_read() missing 1 required positional argument: 'row_key'",
        ),
        (
            "pit_search",
            (),
            {"limit": 3},
            "RemoteToolbox.pit_search() missing 1 required positional argument: 'query'",
        ),
        (
            "pit_coverage",
            ("x",),
            {},
            "RemoteToolbox.pit_coverage() takes 1 positional argument but 2 were given",
        ),
        (
            "pit_list",
            (1, 2, "window_start", None, 5),
            {},
            "RemoteToolbox.pit_list() takes from 1 to 5 positional arguments but 6 were given",
        ),
        (
            "pit_list",
            (1,),
            {"limit": 2},
            "RemoteToolbox.pit_list() got multiple values for argument 'limit'",
        ),
    ],
)
def test_bad_calls_to_a_proxy_raise_what_a_method_raises(
    proxies: tuple[RemoteToolbox, socket.socket],
    tool: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    error: str,
) -> None:
    remote, _ = proxies
    with pytest.raises(TypeError) as raised:
        getattr(remote, tool)(*args, **kwargs)
    assert str(raised.value) == error


@pytest.mark.parametrize(
    ("tool", "args", "kwargs", "wire"),
    [
        (
            "pit_list",
            (),
            {},
            b'{"op": "tool", "tool": "pit_list", "args": {"limit": 100, "offset": 0, '
            b'"since": "previous_session", "form": null}}\n',
        ),
        (
            "pit_list",
            (None, 2),
            {"form": "8-K"},
            b'{"op": "tool", "tool": "pit_list", "args": {"limit": null, "offset": 2, '
            b'"since": "previous_session", "form": "8-K"}}\n',
        ),
        (
            "pit_search",
            ("\u00e9t\u00e9",),
            {},
            b'{"op": "tool", "tool": "pit_search", "args": {"query": "\\u00e9t\\u00e9", '
            b'"limit": 20, "form": null}}\n',
        ),
        (
            "pit_read",
            ("r-0000000000000003",),
            {},
            b'{"op": "tool", "tool": "pit_read", "args": {"row_key": "r-0000000000000003"}}\n',
        ),
        ("pit_coverage", (), {}, b'{"op": "tool", "tool": "pit_coverage", "args": {}}\n'),
    ],
)
def test_a_proxy_puts_the_same_bytes_on_the_pipe(
    proxies: tuple[RemoteToolbox, socket.socket],
    tool: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    wire: bytes,
) -> None:
    remote, theirs = proxies
    theirs.sendall(b'{"op":"result","result":{"tool":"x"}}\n')
    assert getattr(remote, tool)(*args, **kwargs) == {"tool": "x"}
    assert theirs.recv(1 << 16) == wire


def test_a_proxy_refuses_arguments_that_are_not_json(
    proxies: tuple[RemoteToolbox, socket.socket],
) -> None:
    remote, _ = proxies
    with pytest.raises(TypeError, match=r"^pit_read: arguments must be JSON values"):
        remote.pit_read(object())  # type: ignore[arg-type]


# -- one table -------------------------------------------------------------------------


@pytest.mark.parametrize("owner", [Toolbox, RemoteToolbox])
def test_every_toolbox_has_the_tables_signatures(owner: type) -> None:
    for tool in TOOLS.values():
        params = list(inspect.signature(getattr(owner, tool.name)).parameters.values())[1:]
        assert [p.name for p in params] == [p.name for p in tool.params], tool.name
        assert [p.default for p in params] == [
            inspect.Parameter.empty if p.required else p.default for p in tool.params
        ], tool.name


def test_the_table_names_the_vocabularys_tools_in_order() -> None:
    assert tuple(TOOLS) == TOOL_NAMES


def test_the_table_imports_nothing_the_sandbox_lacks() -> None:
    """The inside of the sandbox imports the table: the standard library only."""
    assert imported_beyond_the_standard_library("harness.tools.table") == [
        "harness",
        "harness.tools",
        "harness.tools.table",
        "harness.version",
    ]


def imported_beyond_the_standard_library(module: str) -> list[str]:
    """What importing ``module`` in a fresh interpreter loads that the standard library
    does not hold (the interpreter's own start-up hooks, named with a ``_``, aside)."""
    code = (
        f"import sys, json; import {module}; print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] not in sys.stdlib_module_names and m[0] != '_')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found: list[str] = json.loads(done.stdout)
    return found
