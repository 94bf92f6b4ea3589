"""The four window tools, declared once: name, description and parameters (type, default,
bounds) of each.

Everything else about a tool's surface comes from here: the model-facing OpenAI specs
(``TOOL_SCHEMA``), the toolbox's argument checks and their words (``Tool.type_problem``,
``Tool.check``), the
names a sandboxed call may carry, and the sandbox's proxies (``proxy``), whose signatures
are the table's. The toolbox's own methods are written out, for their types and the
agents' editors, and a test holds their signatures to the table. The inside of the
sandbox imports this module, so it imports nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType
from typing import Any, Literal

# A limit larger than this is read as this.
MAX_LIMIT = 10_000


class ToolError(ValueError):
    """Bad arguments from the agent: reported to it, recorded, never fatal."""


def json_type(value: Any) -> str:
    """The JSON type of ``value`` (a diagnostic names it, never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _an(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    """One parameter. ``kind`` is its JSON type. Checked: a ``count`` (an integer >= 0,
    never a bool, read as at most ``MAX_LIMIT`` when ``capped``), a ``choice`` (one of
    ``choices``), ``text`` (a string with something besides spaces). Every parameter's
    JSON type (``kind``, null where ``nullable`` or ``none_is_default``) is checked first
    (``type_problem``): a value of another type is the agent's protocol fault. An
    unchecked parameter of its type (a form filter, a row key) is taken as it is: a value
    that matches no row finds none."""

    name: str
    kind: Literal["integer", "string"]
    default: Any = REQUIRED
    nullable: bool = False  # null is a value of its own (pit_list's limit: no cap)
    none_is_default: bool = False  # null reads as the default (pit_search's limit)
    check: Literal["count", "choice", "text"] | None = None
    choices: tuple[str, ...] = ()
    capped: bool = False

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def spec(self) -> dict[str, Any]:
        """The parameter's JSON Schema, as the model is shown it."""
        out: dict[str, Any] = {"type": [self.kind, "null"] if self.nullable else self.kind}
        if self.check == "count":
            out["minimum"] = 0
        if self.choices:
            out["enum"] = list(self.choices)
        return out

    def type_problem(self, value: Any) -> str | None:
        """Why ``value`` is not of the parameter's JSON type, or None. Said by the type it
        is, never by the value: the agent wrote it, and what it wrote is never echoed."""
        if value is None and (self.nullable or self.none_is_default):
            return None
        got = json_type(value)
        if got == self.kind:
            return None
        wanted = _an(self.kind) + (" or null" if self.nullable or self.none_is_default else "")
        return f"{self.name} must be {wanted}, got {_an(got)}"

    def checked(self, value: Any) -> Any:
        """The value the tool works with; ``ToolError`` in the agent's words if bad."""
        if value is None and (self.nullable or self.none_is_default):
            return self.default if self.none_is_default else None
        if self.check == "count":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ToolError(f"{self.name} must be a non-negative integer, got {value!r}")
            return min(value, MAX_LIMIT) if self.capped else value
        if self.check == "choice" and value not in self.choices:
            raise ToolError(f"{self.name} must be " + " or ".join(map(repr, self.choices)))
        if self.check == "text" and (not isinstance(value, str) or not value.strip()):
            raise ToolError(f"{self.name} must be a non-empty {self.kind}")
        return value


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: tuple[Param, ...] = ()
    # the order arguments are checked in, where it is not the parameters' own
    check_order: tuple[str, ...] | None = None

    @property
    def arg_names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.params)

    def spec(self) -> dict[str, Any]:
        """The OpenAI-style function spec."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.spec() for p in self.params},
                    "required": [p.name for p in self.params if p.required],
                    "additionalProperties": False,
                },
            },
        }

    def type_problem(self, args: dict[str, Any]) -> str | None:
        """The first argument not of its parameter's JSON type (in the check order), as
        ``<tool>: <why>``; None when every one is. Checked before anything is answered: a
        value of the wrong type is the agent's protocol fault."""
        by_name = {p.name: p for p in self.params}
        # the check order first, then what it leaves out (a form filter)
        for name in dict.fromkeys([*(self.check_order or ()), *by_name]):
            problem = by_name[name].type_problem(args.get(name))
            if problem is not None:
                return f"{self.name}: {problem}"
        return None

    def check(self, args: dict[str, Any]) -> dict[str, Any]:
        """Every checked argument as the tool works with it; the first bad one (in the
        check order) raises ``ToolError``."""
        by_name = {p.name: p for p in self.params}
        order = self.check_order or tuple(by_name)
        return {name: by_name[name].checked(args[name]) for name in order}


_FORM = Param("form", "string", default=None, nullable=True)

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "pit_list",
            "List filings knowable at this session's opening bell (default: new since the "
            "previous session).",
            (
                Param("limit", "integer", 100, nullable=True, check="count", capped=True),
                Param("offset", "integer", 0, check="count"),
                Param(
                    "since",
                    "string",
                    "previous_session",
                    check="choice",
                    choices=("previous_session", "window_start"),
                ),
                _FORM,
            ),
            check_order=("limit", "offset", "since"),
        ),
        Tool(
            "pit_search",
            "Search knowable filings by text (title, issuer, ticker, form, accession).",
            (
                Param("query", "string", check="text"),
                Param("limit", "integer", 20, none_is_default=True, check="count", capped=True),
                _FORM,
            ),
            check_order=("limit", "query"),
        ),
        Tool("pit_read", "Read one filing by row_key.", (Param("row_key", "string"),)),
        Tool("pit_coverage", "Counts of what is knowable so far."),
    )
}


# The four tools as OpenAI-style function specs (for tool-loop adapters): one list, which
# every toolbox, in process or in the sandbox, hands out.
TOOL_SCHEMA = [tool.spec() for tool in TOOLS.values()]


def proxy(tool: Tool, owner: str) -> Callable[..., dict[str, Any]]:
    """A method of class ``owner`` with the tool's signature, which hands its arguments,
    by name, to ``self._call(tool_name, args)``.

    Built from source, as ``dataclasses`` builds ``__init__``: an agent that calls it with
    the wrong arguments gets the very ``TypeError`` a written method would raise, naming
    ``owner.tool``.
    """
    names = [p.name for p in tool.params]
    defaults = {f"_default_{p.name}": p.default for p in tool.params if not p.required}
    signature = ", ".join(
        ["self"] + [p.name if p.required else f"{p.name}=_default_{p.name}" for p in tool.params]
    )
    packed = ", ".join(f"{n!r}: {n}" for n in names)
    source = f"def {tool.name}({signature}):\n    return self._call({tool.name!r}, {{{packed}}})\n"
    namespace: dict[str, Any] = {}
    exec(source, dict(defaults), namespace)  # the source is made above, from the table alone
    method: FunctionType = namespace[tool.name]
    qualname = f"{owner}.{tool.name}"
    method.__qualname__ = qualname
    method.__code__ = method.__code__.replace(co_qualname=qualname)
    method.__doc__ = tool.description
    return method
