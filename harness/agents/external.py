"""Agents in another process, in any language, behind the closed wire protocol.

``command_agent`` makes the spec of an agent that is a command (``--agent-cmd``): every
cell starts it afresh (inside the cell's sandbox in an isolated run), and the harness and
the agent exchange one compact JSON object per line on its stdin and stdout, in the
agent's dialect (``harness.protocol``):

- ``pit``: the harness sends a ``task``; the agent may send ``tool`` calls, each answered
  with a ``result``; it ends the task with its ``decision``.
- ``sharpebench``: the harness sends a ``MarketObservation`` at each session's opening
  bell; the agent answers with a ``Decision`` (orders). The runner reads the picks off the
  orders (``harness.protocol.sharpebench.picks``).

What the agent sends is read by the dialect's closed types: an unknown field, a wrong type
or a message out of turn is the agent's ``protocol_violation``; a line past 8 MiB is its
``oversized_output``; a decision past its wall-clock budget is its ``resource_limit``. Its
process exiting or closing its stdout mid-cell is a runtime failure: the cell starts again
from its first step with a fresh process (``harness.outcomes``).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import http.client
import ipaddress
import os
import selectors
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from harness import canonical, outcomes
from harness.agents.base import AgentSpec, Decision, Task, load_agent
from harness.protocol import (
    AgentProtocolFault,
    decision_from_wire,
    message_from_wire,
    pit,
    sharpebench,
)
from harness.protocol.wire import DIALECTS, validate_for
from harness.rundata.config import RunConfig

if TYPE_CHECKING:
    from harness.tools.toolbox import Toolbox

TRANSPORTS = ("stdio", "http")
MAX_LINE = 8 << 20  # bytes in one line from the agent
MAX_FOLDER_FILES = 20_000  # files hashed under one --agent-dir
DEFAULT_TIMEOUT = 900.0
STDERR_TAIL = 2000


class AgentCommandError(ValueError):
    """An agent command that cannot be run as given (a usage error, not the agent's)."""


@dataclass(frozen=True)
class External:
    """An agent in another process: how it is reached and which dialect it speaks.

    ``argv`` holds absolute paths where the command named files; ``paths`` are the files
    and folders shown to it read-only at their own paths (a sandboxed run binds them)."""

    transport: str
    dialect: str
    argv: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    url: str = ""
    timeout: float = DEFAULT_TIMEOUT

    def digest(self) -> str:
        """sha256 over what makes the agent: its argv with every file it names replaced
        by that file's name and sha256, and every file under each agent folder by its
        path there and sha256 (or the URL of an HTTP agent). It does not depend on where
        the files lie, so the same agent has the same digest on any machine."""
        if self.transport == "http":
            return canonical.digest({"transport": "http", "url": self.url})
        files = set(self.paths)
        argv: list[Any] = [
            {"file": os.path.basename(word), "sha256": _file_sha256(word)}
            if word in files and os.path.isfile(word)
            else word
            for word in self.argv
        ]
        folders = [
            {"folder": os.path.basename(p.rstrip("/")), "files": _folder_digests(p)}
            for p in self.paths
            if os.path.isdir(p)
        ]
        return canonical.digest({"transport": "stdio", "argv": argv, "folders": folders})

    def name(self) -> str:
        """How the receipt names the agent: the transport and the command (files by their
        base name), or the URL."""
        if self.transport == "http":
            return f"http:{self.url}"[:200]
        shown = " ".join(os.path.basename(w) if w in self.paths else w for w in self.argv)
        return f"stdio:{shown}"[:200]

    def to_message(self) -> dict[str, Any]:
        return {
            "kind": "command",
            "transport": self.transport,
            "dialect": self.dialect,
            "argv": list(self.argv),
            "paths": list(self.paths),
            "url": self.url,
            "timeout": self.timeout,
        }

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> External:
        return cls(
            transport=str(message["transport"]),
            dialect=str(message["dialect"]),
            argv=tuple(str(w) for w in message["argv"]),
            paths=tuple(str(p) for p in message["paths"]),
            url=str(message.get("url", "")),
            timeout=float(message["timeout"]),
        )


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def _folder_digests(folder: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(top, name)
            if not os.path.isfile(path):
                continue
            if len(found) >= MAX_FOLDER_FILES:
                raise AgentCommandError(
                    f"agent folder {folder}: more than {MAX_FOLDER_FILES} files to bind and hash"
                )
            found[os.path.relpath(path, folder)] = _file_sha256(path)
    return found


def command_agent(
    command: str | Sequence[str],
    *,
    dialect: str = "pit",
    agent_dirs: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
) -> AgentSpec:
    """The spec of an agent that is a command. Every word of it that names an existing
    file (relative to the current folder, as a shell reads it) becomes that file's
    absolute path and is shown to the agent read-only at that path; ``agent_dirs`` are
    shown too (a program's other files, a virtual environment)."""
    if dialect not in DIALECTS:
        raise AgentCommandError(f"dialect {dialect!r}: one of {', '.join(DIALECTS)}")
    try:
        argv = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]
    except ValueError as exc:
        raise AgentCommandError(f"agent command: {exc}") from None
    if not argv:
        raise AgentCommandError("agent command: empty")
    paths: list[str] = []
    resolved = []
    for word in argv:
        if os.path.isfile(word):
            word = os.path.realpath(word)
            paths.append(word)
        resolved.append(word)
    for folder in agent_dirs:
        if not os.path.isdir(folder):
            raise AgentCommandError(f"agent folder {folder}: not a folder")
        paths.append(os.path.realpath(folder))
    if shutil.which(resolved[0]) is None and not os.path.isfile(resolved[0]):
        raise AgentCommandError(
            f"agent command: {resolved[0]!r} is not a program on PATH or a file (give the "
            "interpreter too: 'python3 agent.py', 'node agent.js')"
        )
    external = External("stdio", dialect, tuple(resolved), tuple(dict.fromkeys(paths)),
                        timeout=timeout)  # fmt: skip
    return external_spec(external)


def external_spec(external: External) -> AgentSpec:
    if external.transport == "http":
        return http_agent(external.url, dialect=external.dialect, timeout=external.timeout)

    def factory() -> StdioAgent:
        return StdioAgent(external)

    return AgentSpec(external.name(), factory, external=external)


def spec_from_message(message: dict[str, Any]) -> AgentSpec:
    """The spec a cell makes from its load message (``External.to_message``)."""
    return external_spec(External.from_message(message))


# -- the dialects, over either transport --------------------------------------------------

# What the harness sends an agent, in either dialect.
_ToAgent = pit.Task | pit.ToolResult | sharpebench.MarketObservation


class _Link(Protocol):
    """How a message travels to the agent and its answer back: all that stdio and HTTP
    differ in. The dialects (``_speak_pit``, ``_speak_sharpebench``) speak over it."""

    def exchange(self, message: _ToAgent, deadline: float, budget: float) -> bytes:
        """The agent's answer to ``message``, by ``deadline`` (its ``resource_limit``
        past it)."""
        ...

    def abort(self) -> None:
        """The agent broke the contract: whatever the transport ends before the fault is
        raised."""
        ...


def _speak(external: External, link: _Link, task: Task, tools: Toolbox) -> Decision:
    """One decision, in the agent's dialect, within its wall-clock budget (tool calls
    included)."""
    budget = external.timeout
    deadline = time.monotonic() + budget
    if external.dialect == "sharpebench":
        return _speak_sharpebench(link, task, deadline, budget)
    return _speak_pit(link, task, tools, deadline, budget)


def _speak_pit(link: _Link, task: Task, tools: Toolbox, deadline: float, budget: float) -> Decision:
    """Ours: the task, then a result for each tool call, until the agent decides."""
    message: pit.Task | pit.ToolResult = pit.Task(
        kind="probe" if task.kind == "probe" else "trade",
        prompt=task.prompt,
        arm=task.arm,  # type: ignore[arg-type]
        clock=task.clock,  # type: ignore[arg-type]
        session_date=task.session_date,
        known_at=task.known_at,
        newly_knowable=tools.newly_knowable(),
        positions=[pit.Position(key, units) for key, units in task.positions],
    )
    while True:
        answer = link.exchange(message, deadline, budget)
        try:
            said = message_from_wire(answer)
        except AgentProtocolFault as exc:
            link.abort()
            raise _protocol_fault(exc) from None
        if isinstance(said, pit.Decision):
            return Decision(picks=tuple(said.picks), text=said.text)
        try:
            result = getattr(tools, said.tool)(**said.args)
        except TypeError as exc:
            link.abort()
            raise outcomes.AgentFault(
                outcomes.PROTOCOL_VIOLATION, f"tool call {said.tool}: {exc}"
            ) from None
        message = pit.ToolResult(result=result)


def _speak_sharpebench(link: _Link, task: Task, deadline: float, budget: float) -> Decision:
    """sharpebench's: the observation out, the orders back, checked against it."""
    if task.kind != "trade" or task.observation is None:
        raise RuntimeError("the harness asked a sharpebench agent a task with no observation")
    observation = msgspec.convert(task.observation, sharpebench.MarketObservation)
    answer = link.exchange(observation, deadline, budget)
    try:
        decision = decision_from_wire(answer, dialect="sharpebench")
        validate_for(decision, observation)
    except AgentProtocolFault as exc:
        link.abort()
        raise _protocol_fault(exc) from None
    return Decision(text=decision.reasoning, wire=msgspec.to_builtins(sharpebench.scored(decision)))


def _protocol_fault(exc: AgentProtocolFault) -> outcomes.AgentFault:
    return outcomes.AgentFault(outcomes.PROTOCOL_VIOLATION, str(exc))


_TOOLS_INCLUDED = " (wall clock, tool calls included)"
_KILLED = "; the agent's process group was killed"


def _time_limit(
    budget: float, then: str = "", *, scope: str = _TOOLS_INCLUDED
) -> outcomes.AgentFault:
    """The agent's ``resource_limit``: its decision ran past its budget. ``then`` says
    what the harness was waiting for or did about it."""
    return outcomes.AgentFault(
        outcomes.RESOURCE_LIMIT, f"decision time limit of {budget:g} s{scope} reached{then}"
    )


# -- the agent's process ------------------------------------------------------------------


# In a sandbox cell (whose /tmp is its own and new) the agent's process works in this one
# fixed folder, so nothing of ours it can see differs between a run and its re-execution;
# set by the cell's shim. Elsewhere each process gets a fresh folder of its own.
CELL_HOME: str | None = None


def _working_folder() -> str:
    if CELL_HOME is None:
        return tempfile.mkdtemp(prefix="agent-")
    os.makedirs(CELL_HOME, mode=0o700, exist_ok=True)
    return CELL_HOME


class _Process:
    """The agent's process and its two pipes: compact JSON lines each way."""

    def __init__(self, argv: Sequence[str]) -> None:
        self._home = _working_folder()
        environment = dict(os.environ)
        # the interpreter the harness runs under is the agent's too, before the system's
        bin_dir = os.path.dirname(sys.executable)
        environment["PATH"] = os.pathsep.join(
            dict.fromkeys([bin_dir, *environment.get("PATH", "/usr/bin:/bin").split(os.pathsep)])
        )
        try:
            self.proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._home,
                env=environment,
                start_new_session=True,  # its own process group, torn down whole
                close_fds=True,
            )
        except OSError as exc:
            shutil.rmtree(self._home, ignore_errors=True)
            raise outcomes.AgentFault(
                outcomes.LOAD_FAILED, f"the agent's command could not start: {exc}"
            ) from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._in = self.proc.stdin.fileno()
        os.set_blocking(self._in, False)
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        self._buffer = bytearray()
        self._tail: collections.deque[bytes] = collections.deque(maxlen=64)
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        with contextlib.suppress(OSError):
            for chunk in iter(lambda: os.read(fd, 4096), b""):
                self._tail.append(chunk)

    def stderr_tail(self) -> str:
        text = b"".join(self._tail)[-STDERR_TAIL:].decode("utf-8", "replace").strip()
        return f"; its stderr ended: {text}" if text else ""

    def send(self, line: bytes, deadline: float, budget: float) -> None:
        """One line to the agent, by ``deadline``: an agent that stops reading cannot
        hold the harness past its budget."""
        data = memoryview(line + b"\n")

        def limit() -> outcomes.AgentFault:
            return _time_limit(budget, ": the agent stopped reading its stdin" + _KILLED, scope="")

        with selectors.DefaultSelector() as selector:
            selector.register(self._in, selectors.EVENT_WRITE)
            while data:
                self._wait(selector, deadline, limit)
                try:
                    data = data[os.write(self._in, data) :]
                except BlockingIOError:
                    continue
                except OSError:
                    raise self._exited("closed its stdin") from None

    def line(self, deadline: float, budget: float) -> bytes:
        """The agent's next line (without its newline), by ``deadline``; at EOF, what it
        wrote after its last newline, if anything (a final unterminated line)."""

        def limit() -> outcomes.AgentFault:
            return _time_limit(budget, _KILLED)

        with selectors.DefaultSelector() as selector:
            selector.register(self._out, selectors.EVENT_READ)
            while True:
                end = self._buffer.find(b"\n")
                if end >= 0:
                    if end > MAX_LINE:
                        raise self._oversized()
                    line = bytes(self._buffer[:end])
                    del self._buffer[: end + 1]
                    return line
                if len(self._buffer) > MAX_LINE:
                    raise self._oversized()
                self._wait(selector, deadline, limit)
                try:
                    chunk = os.read(self._out, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    if self._buffer:
                        # a final line with no newline before EOF still counts as a line,
                        # as sharpebench reads it (its last decision, say, then it left)
                        line = bytes(self._buffer)
                        self._buffer.clear()
                        return line
                    raise self._exited("closed its stdout")
                self._buffer += chunk

    def _wait(
        self,
        selector: selectors.BaseSelector,
        deadline: float,
        limit: Callable[[], outcomes.AgentFault],
    ) -> None:
        """Until the pipe ``selector`` watches is ready. At ``deadline`` the agent's
        process group is killed and ``limit()`` raised; a select that returns early, with
        time left, is waited again."""
        while True:
            left = deadline - time.monotonic()
            if left > 0 and selector.select(left):
                return
            if time.monotonic() >= deadline:
                self.kill()
                raise limit()

    def _oversized(self) -> outcomes.AgentFault:
        self.kill()
        return outcomes.AgentFault(
            outcomes.OVERSIZED_OUTPUT, f"a line from the agent passed {MAX_LINE} bytes"
        )

    def _exited(self, how: str) -> outcomes.AgentProcessExited:
        code = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self.proc.wait(timeout=1.0)
        self.kill()
        self._drain.join(timeout=1.0)
        state = "is still running" if code is None else f"exited with code {code}"
        return outcomes.AgentProcessExited(
            f"{outcomes.AGENT_PROCESS_EXITED} or {how} mid-cell (it {state}){self.stderr_tail()}"
        )

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)

    def close(self) -> None:
        """End of the cell: stdin closed, a moment to leave, then the group killed."""
        with contextlib.suppress(OSError, ValueError):
            self._stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1.0)
        self.kill()
        self._drain.join(timeout=1.0)
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        shutil.rmtree(self._home, ignore_errors=True)


class StdioAgent:
    """One cell's external agent over stdio: a fresh process, spoken to in its dialect, a
    line each way per message."""

    def __init__(self, external: External) -> None:
        if external.transport != "stdio":
            raise ValueError(f"a StdioAgent speaks stdio, not {external.transport}")
        self.external = external
        self._process = _Process(external.argv)

    def decide(self, task: Task, tools: Toolbox) -> Decision:
        return _speak(self.external, self, task, tools)

    def exchange(self, message: _ToAgent, deadline: float, budget: float) -> bytes:
        self._process.send(msgspec.json.encode(message), deadline, budget)
        return self._process.line(deadline, budget)

    def abort(self) -> None:
        self._process.kill()

    def close(self) -> None:
        self._process.close()


def describe(spec: AgentSpec) -> dict[str, Any]:
    """The receipt's account of how the agent was reached: transport, dialect, digest."""
    external = spec.external
    if external is None:
        return {}
    return {
        "agent_transport": external.transport,
        "agent_dialect": external.dialect,
        "agent_digest": external.digest(),
    }


def configured_agent(config: RunConfig) -> AgentSpec:
    """The agent a run config names: a command
    (``agent_cmd``), or a Python agent by name (``agent``)."""
    if config.agent_cmd:
        return command_agent(config.agent_cmd, dialect=config.dialect, agent_dirs=config.agent_dirs)
    if config.agent_http:
        return http_agent(config.agent_http, dialect=config.dialect)
    return load_agent(config.agent)


# -- over HTTP ----------------------------------------------------------------------------

HTTP_ATTEMPTS = 3  # tries of one request, for transport errors only
CONNECT_TIMEOUT = 10.0  # seconds to open a connection before it is a transport fault
BREAKER_FAULTS = 3  # consecutive transport faults that open the run's circuit breaker


class CircuitBreaker:
    """One per run: after ``BREAKER_FAULTS`` consecutive transport faults no request is
    sent again; every cell left fails at once on the harness's side (never scored as the
    agent's), instead of waiting out each timeout."""

    def __init__(self) -> None:
        self.faults = 0
        self.last = ""

    @property
    def open(self) -> bool:
        return self.faults >= BREAKER_FAULTS

    def fault(self, what: str) -> None:
        self.faults += 1
        self.last = what

    def held(self) -> None:
        self.faults = 0


# Why an address may not be reached (None: it may).
AddressPolicy = Callable[[str], "str | None"]


def public_addresses_only(address: str) -> str | None:
    """A policy for agents a server calls on others' behalf: no loopback, private,
    link-local (cloud metadata), multicast, reserved, unspecified or otherwise not
    globally reachable address (carrier-grade NAT's shared range among them), IPv4 ones
    inside IPv6 included (mapped, 6to4, Teredo)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inside = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inside is not None:  # IPv4 carried inside IPv6 (mapped, 6to4, Teredo)
            ip = inside
    for kind in ("unspecified", "loopback", "link_local", "private", "multicast", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return f"{address} is a {kind.replace('_', '-')} address"
    if not ip.is_global:  # shared (carrier-grade NAT) and other special-purpose ranges
        return f"{address} is not a globally reachable address"
    return None


def http_agent(
    url: str,
    *,
    dialect: str = "pit",
    timeout: float = DEFAULT_TIMEOUT,
    addresses: AddressPolicy | None = None,
) -> AgentSpec:
    """The spec of an agent that is an HTTP service: sharpebench's dialect as ``POST
    {url}/decide`` per decision, ours as ``POST {url}/step`` per message. It runs outside
    the harness's sandbox (``agent_process=remote``). With ``addresses``, every address the
    host resolves to is checked before each connection, and the connection goes to the
    address checked (no second lookup to rebind); redirects are never followed."""
    if dialect not in DIALECTS:
        raise AgentCommandError(f"dialect {dialect!r}: one of {', '.join(DIALECTS)}")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise AgentCommandError(f"agent URL {url!r}: an http:// or https:// URL with a host")
    if parsed.query or parsed.fragment or parsed.username or parsed.password:
        raise AgentCommandError(f"agent URL {url!r}: no query, fragment or credentials")
    external = External("http", dialect, url=url.rstrip("/"), timeout=timeout)
    breaker = CircuitBreaker()  # one per spec, and a spec serves one run

    def factory() -> HttpAgent:
        return HttpAgent(external, breaker, addresses)

    return AgentSpec(external.name(), factory, external=external)


class _PastBudget(Exception):
    """The decision's budget ran out during a request."""


class HttpAgent:
    """One cell's agent over HTTP: a fresh session id, its steps numbered from 1."""

    def __init__(
        self,
        external: External,
        breaker: CircuitBreaker,
        addresses: AddressPolicy | None = None,
    ) -> None:
        self.external = external
        self.breaker = breaker
        self.session = uuid.uuid4().hex
        self.steps = 0
        self._addresses = addresses
        parsed = urllib.parse.urlsplit(external.url)
        self._path = parsed.path.rstrip("/")
        self._host = parsed.hostname or ""
        self._tls = ssl.create_default_context() if parsed.scheme == "https" else None
        self._port = parsed.port or (443 if self._tls else 80)
        self._connection: http.client.HTTPConnection = (
            http.client.HTTPSConnection(
                self._host, self._port, timeout=external.timeout, context=self._tls
            )
            if self._tls is not None
            else http.client.HTTPConnection(self._host, self._port, timeout=external.timeout)
        )

    def decide(self, task: Task, tools: Toolbox) -> Decision:
        return _speak(self.external, self, task, tools)

    def exchange(self, message: _ToAgent, deadline: float, budget: float) -> bytes:
        """sharpebench's observation as ``POST /decide``; ours inside a ``pit.Step`` as
        ``POST /step``. Both count the cell's steps."""
        self.steps += 1
        if isinstance(message, sharpebench.MarketObservation):
            path, body = "/decide", msgspec.json.encode(message)
        else:
            step = pit.Step(session=self.session, step=self.steps, message=message)
            path, body = "/step", msgspec.json.encode(step)
        return self._asked(path, body, deadline, budget, self.steps == 1)

    def abort(self) -> None:
        """Nothing to end: the request is answered, and the cell's end closes the
        connection."""

    def _asked(self, path: str, body: bytes, deadline: float, budget: float, twice: bool) -> bytes:
        """The answer to one request; the cell's first is sent twice, and a second answer
        that differs is the agent's protocol fault: a step may be sent again after a
        transport error, and the contract says it is answered as the first time."""
        answer = self._post(path, body, deadline, budget)
        if twice:
            again = self._post(path, body, deadline, budget)
            try:
                same = msgspec.json.decode(again) == msgspec.json.decode(answer)
            except msgspec.DecodeError:
                same = again == answer
            if not same:
                raise outcomes.AgentFault(
                    outcomes.PROTOCOL_VIOLATION,
                    f"POST {path} sent again (the cell's first step) was answered differently: "
                    "a repeated step must be answered as the first time",
                )
        return answer

    def _post(self, path: str, body: bytes, deadline: float, budget: float) -> bytes:
        """The agent's answer to one request. A transport error (no connection within
        ``CONNECT_TIMEOUT``, a reset, a 5xx) is tried again, the same request, up to
        ``HTTP_ATTEMPTS`` times within the decision's budget; then it is the harness's
        runtime failure. An answer not in by the budget's end (however slowly it drips)
        is the agent's ``resource_limit``; a 4xx, or an answer past 8 MiB, its own fault."""
        problem = "no attempt fitted in the budget"
        for _ in range(HTTP_ATTEMPTS):
            if self.breaker.open:
                raise outcomes.RuntimeFailure(
                    f"the agent's circuit breaker is open after {BREAKER_FAULTS} consecutive "
                    f"transport faults (the last: {self.breaker.last})"
                )
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                self._connect(left)
            except OSError as exc:
                problem = f"connect: {type(exc).__name__}: {exc}"[:300]
                self.breaker.fault(problem)
                continue
            try:
                status, answer = self._request(path, body, deadline)
            except _PastBudget:
                self._connection.close()
                raise _time_limit(budget, f" waiting for POST {path}") from None
            except (OSError, http.client.HTTPException) as exc:
                self._connection.close()
                problem = f"POST {path}: {type(exc).__name__}: {exc}"[:300]
                self.breaker.fault(problem)
                continue
            if status >= 500:
                problem = f"POST {path}: HTTP {status}"
                self.breaker.fault(problem)
                continue
            self.breaker.held()
            if len(answer) > MAX_LINE:
                self._connection.close()
                raise outcomes.AgentFault(
                    outcomes.OVERSIZED_OUTPUT, f"an answer from the agent passed {MAX_LINE} bytes"
                )
            if status != 200:
                raise outcomes.AgentFault(
                    outcomes.PROTOCOL_VIOLATION,
                    f"POST {path} answered HTTP {status}: "
                    f"{answer[:200].decode('utf-8', 'replace')}",
                )
            return answer
        if time.monotonic() >= deadline:
            raise _time_limit(budget)
        raise outcomes.RuntimeFailure(f"the agent could not be reached ({problem})")

    def _connect(self, left: float) -> None:
        """A connection, opened within ``CONNECT_TIMEOUT`` (a transport fault past it), to
        an address the policy allows, if there is one."""
        if self._connection.sock is not None:
            return
        self._connection.timeout = timeout = min(CONNECT_TIMEOUT, left)
        if self._addresses is None:
            self._connection.connect()
            return
        found = socket.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM)
        for *_, address in found:
            why = self._addresses(str(address[0]))
            if why is not None:
                raise ConnectionRefusedError(f"{self._host} resolves to {why}: refused")
        sock = socket.create_connection((str(found[0][4][0]), self._port), timeout=timeout)
        peer = str(sock.getpeername()[0])
        why = self._addresses(peer)
        if why is not None:  # what was reached, checked again
            sock.close()
            raise ConnectionRefusedError(f"connected to {why}: refused")
        if self._tls is not None:
            sock = self._tls.wrap_socket(sock, server_hostname=self._host)
        self._connection.sock = sock

    def _request(self, path: str, body: bytes, deadline: float) -> tuple[int, bytes]:
        """Send and read one request whole by ``deadline``: a watchdog shuts the socket
        when it passes, so an answer that drips a byte at a time cannot outlast it."""
        sock = self._connection.sock
        assert sock is not None
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

        watchdog = threading.Timer(max(deadline - time.monotonic(), 0.0), expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            self._connection.request(
                "POST", self._path + path, body, {"Content-Type": "application/json"}
            )
            response = self._connection.getresponse()
            answer = response.read(MAX_LINE + 1)
        except (OSError, http.client.HTTPException):
            if expired.is_set() or time.monotonic() >= deadline:
                raise _PastBudget from None
            raise
        finally:
            watchdog.cancel()
        if expired.is_set():
            raise _PastBudget
        return response.status, answer

    def close(self) -> None:
        self._connection.close()
