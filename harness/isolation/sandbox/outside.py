"""The harness's side of the sandbox: start the zygote under bubblewrap, open a fresh
cell process per cell, and serve its tool calls from the harness's own state.

The sandbox sees, read-only: the system's library folders, the interpreter (its prefix
and the virtual environment's), the ``harness`` package and the agent's own module file
or package folder. Nothing else of the host: the release, price files and outputs are
never bound, and where one lies under a bound folder it is masked (an empty tmpfs over a
folder, ``/dev/null`` over a file). The namespaces and limits are tested for effect in
probe cells when the sandbox starts; what the probes could not confirm is reported False.

Limits hold for the agent's whole process tree: memory, CPU time and the number of
processes are accounted across the cell's PID namespace by the cell's outer process
(``harness.isolation.sandbox.limits``), and each decision has a wall-clock budget, tool calls
included, kept here. Passing any of them kills the cell's tree and is the agent's
``resource_limit``.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import outcomes
from harness.agents.base import AgentSpec, Decision, Task, locate_module
from harness.isolation.guard import EgressAttempt
from harness.isolation.sandbox import limits as tree_limits
from harness.isolation.sandbox import messages as msg
from harness.isolation.sandbox.channel import (
    Channel,
    ChannelClosed,
    ChannelTimeout,
    LineTooLong,
    ProtocolError,
)
from harness.isolation.sandbox.inside import (
    CELL_SETUP_FAILED,
    HOST_PROC,
    LIMIT_CODES,
    PROBE_TARGET,
)
from harness.isolation.sandbox.shim import attempt_from_message
from harness.isolation.sandbox.wire import WireAttempt, WireReport
from harness.tools.table import TOOLS

if TYPE_CHECKING:
    from harness.tools.toolbox import Toolbox

SANDBOX_UID = 65534
AGENT_ROOT = "/pit-agent"
SYSTEM_ROOTS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}
_ROWS_MARK = '"\\u0000rows\\u0000"'
TUN_DEVICE = "/dev/net/tun"
# What every cell shows of its host, the same on every machine (nothing of ours that an
# agent can read may differ between a run and its re-execution): its name, and a resolver
# on TEST-NET, so that a name lookup is a packet on the cell's wire, counted and refused.
HOSTNAME = "pit-sandbox"
ETC_FILES = {
    "resolv.conf": "nameserver 192.0.2.53\noptions attempts:1 timeout:1\n",
    "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
}
# How long the harness waits for a cell's wire report to end once the cell has ended.
WIRE_GRACE = 10.0


# The zygote's start: the folder holding the harness (bound read-only at its own path) is
# the last place the interpreter looks, so a harness run from a source tree (on
# PYTHONPATH, not installed) starts its sandbox as an installed one does.
ZYGOTE = (
    "import sys; sys.path.append(sys.argv[1]); "
    "from harness.isolation.sandbox.inside import main; main(sys.argv[2:])"
)


class SandboxError(RuntimeError):
    """The sandbox could not be set up as asked (a usage or environment problem)."""


@dataclass(frozen=True)
class SandboxSettings:
    """Limits for each cell, and how long the harness waits for it.

    ``memory_bytes``, ``cpu_seconds`` (over the cell's life) and ``max_processes`` (at
    once) hold for the agent's whole process tree, ``open_files`` for each process;
    ``decision_timeout`` is each decision's wall-clock budget, tool calls included."""

    memory_bytes: int = 4 << 30
    cpu_seconds: int = 900
    open_files: int = 256
    max_processes: int = 64
    decision_timeout: float = 900.0
    start_timeout: float = 60.0

    def limits(self) -> dict[str, Any]:
        return {
            "memory_bytes": self.memory_bytes,
            "cpu_seconds": self.cpu_seconds,
            "open_files": self.open_files,
            "max_processes": self.max_processes,
        }


class DecisionOverBudget(Exception):
    """A decision's wall-clock budget ran out while the harness waited on its cell."""


class CellSocket(socket.socket):
    """The socket to a cell. While ``deadline`` (a ``time.monotonic()`` instant) is set,
    no read or write on it waits past that instant: it raises ``DecisionOverBudget``,
    however the agent trickles its bytes or stops reading."""

    deadline: float | None = None

    def _left(self) -> float:
        assert self.deadline is not None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DecisionOverBudget
        return left

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        if self.deadline is not None and not select.select([self], [], [], self._left())[0]:
            raise DecisionOverBudget
        return super().recv(bufsize, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        if self.deadline is None:
            return super().sendall(data, flags)
        self.settimeout(self._left())
        try:
            return super().sendall(data, flags)
        except TimeoutError:
            raise DecisionOverBudget from None
        finally:
            self.settimeout(None)


@functools.lru_cache(maxsize=1)
def availability() -> tuple[bool, str]:
    """(available, reason): bubblewrap is installed and can make the namespaces."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bubblewrap (bwrap) is not installed"
    try:
        done = subprocess.run(
            [bwrap, *_namespace_flags(), "--ro-bind", "/", "/", "true"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap failed to start ({exc})"
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip()[:300]
        return False, f"bubblewrap cannot create namespaces here ({reason})"
    return True, ""


def _namespace_flags() -> list[str]:
    return [
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--hostname",
        HOSTNAME,
        "--die-with-parent",
        "--new-session",
    ]


# -- what the agent's process may see ---------------------------------------------------


@dataclass(frozen=True)
class AgentPayload:
    """How a cell gets the agent: by reference (imported inside) or by value."""

    message: dict[str, Any]
    binds: tuple[tuple[str, str], ...]  # (host path, path inside the sandbox)


def _interpreter_roots() -> list[str]:
    roots = {sys.base_prefix, sys.prefix, os.path.dirname(os.path.dirname(sys.executable))}
    roots |= {os.path.realpath(r) for r in list(roots)}
    return sorted(roots)


def harness_root() -> str:
    return str(Path(__file__).resolve().parents[2])  # the harness package's own folder


def visible_roots() -> list[str]:
    return [*SYSTEM_ROOTS, *_interpreter_roots(), harness_root()]


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies in it."""
    return _under(path, [folder])


def agent_payload(spec: AgentSpec) -> AgentPayload:
    if spec.external is not None:
        # a command started in each cell: what it names is shown at its own path (a
        # cell keeps what the sandbox shows under /tmp at the same paths)
        return AgentPayload(spec.external.to_message(), tuple((p, p) for p in spec.external.paths))
    if spec.ref is not None:
        return _by_reference(spec.ref)
    return AgentPayload({"kind": "pickle", "data": _pickle(spec)}, ())


def _by_reference(ref: str) -> AgentPayload:
    if ref == "stub":
        return AgentPayload({"kind": "ref", "ref": ref, "sys_path": []}, ())
    module_name = ref.partition(":")[0]
    top = module_name.split(".")[0]
    spec = locate_module(top)
    if spec is None or locate_module(module_name) is None:
        raise SandboxError(f"agent {ref!r}: no module named {module_name!r} on the Python path")
    if spec.submodule_search_locations:
        folders = [os.path.realpath(p) for p in spec.submodule_search_locations]
        paths = folders
    elif spec.origin and os.path.isfile(spec.origin):
        paths = [os.path.realpath(spec.origin)]
    else:  # built in or frozen: nothing to bind
        paths = []
    roots = visible_roots()
    if all(_under(p, roots) for p in paths):  # installed beside the harness: visible already
        return AgentPayload({"kind": "ref", "ref": ref, "sys_path": []}, ())
    # The agent's code goes to a fixed place: a cell mounts a fresh /tmp, so a bind at its
    # own path (often under /tmp) would be hidden again.
    binds = tuple((p, f"{AGENT_ROOT}/{n}/{os.path.basename(p)}") for n, p in enumerate(paths))
    return AgentPayload(
        {"kind": "ref", "ref": ref, "sys_path": [os.path.dirname(d) for _, d in binds]}, binds
    )


def _pickle(spec: AgentSpec) -> str:
    """cloudpickle, with every module the sandbox cannot import taken by value."""
    import cloudpickle

    roots = visible_roots()
    registered = []
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        if not _under(os.path.realpath(file), roots):
            try:
                cloudpickle.register_pickle_by_value(module)
            except ValueError:
                continue
            registered.append(module)
    try:
        data = cloudpickle.dumps(spec)
    except Exception as exc:
        raise SandboxError(
            f"agent {spec.name!r} cannot be sent to its sandbox by value ({exc}); name it "
            "by reference ('module:attribute') or run with agent_process='in_process'"
        ) from None
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)
    return base64.b64encode(data).decode("ascii")


def bwrap_command(
    *,
    fd: int,
    binds: tuple[tuple[str, str], ...],
    hidden: list[str],
    by_value: bool = False,
    etc: str | None = None,
) -> list[str]:
    """``etc``: a folder holding ``ETC_FILES``, shown read-only in the sandbox's /etc."""
    command = [shutil.which("bwrap") or "bwrap", *_namespace_flags(), "--clearenv"]
    for key, value in ENVIRONMENT.items():
        command += ["--setenv", key, value]
    command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    # the host's /proc, whole: a cell may then mount a /proc of its own PID namespace
    # (the kernel allows it only where a procfs is fully visible; bubblewrap's has covers)
    # and covers this one before any agent code runs
    command += ["--ro-bind-try", "/proc", HOST_PROC]
    if etc is not None:
        for name in ETC_FILES:
            command += ["--ro-bind", os.path.join(etc, name), f"/etc/{name}"]
    # each cell's outer process makes the cell's wire from it (``wire``); the agent,
    # without capabilities, can neither make nor attach to a device
    command += ["--dev-bind-try", TUN_DEVICE, TUN_DEVICE]
    links, bound = _views(binds)
    command += links
    for src, dest in bound:
        command += ["--ro-bind", src, dest]
    masks = _masks(hidden, bound)
    command += masks
    # a file the agent's command names stays shown though a masked folder holds it (an
    # agent beside the run's outputs): a file shows nothing but itself
    covered = [masks[n + 1] for n, arg in enumerate(masks) if arg == "--tmpfs"]
    for src, dest in binds:
        if os.path.isfile(src) and any(_under(dest, [c]) for c in covered):
            command += ["--ro-bind", src, dest]
    # nothing writable is shared between cells: each cell mounts its own /tmp and /dev/shm
    command += ["--remount-ro", "/dev", "--remount-ro", "/"]
    command += ["--chdir", "/tmp", "--", sys.executable, "-s", "-B", "-P"]
    command += ["-c", ZYGOTE, os.path.dirname(harness_root()), str(fd)]
    if by_value:
        command.append("--by-value")  # the zygote then imports cloudpickle once for all
    return command


def _views(binds: tuple[tuple[str, str], ...]) -> tuple[list[str], list[tuple[str, str]]]:
    """The system's symlinked roots, and every (host, inside) folder shown read-only: the
    system libraries, the interpreter, the harness and the agent's own code."""
    links: list[str] = []
    bound: list[tuple[str, str]] = []
    for root in SYSTEM_ROOTS:
        if os.path.islink(root):
            links += ["--symlink", os.readlink(root), root]
        elif os.path.isdir(root):
            bound.append((root, root))
    bound += [(p, p) for p in [*_interpreter_roots(), harness_root()]]
    bound += list(binds)
    return links, [(src, dest) for src, dest in bound if os.path.exists(src)]


def _masks(hidden: list[str], bound: list[tuple[str, str]]) -> list[str]:
    """Cover every hidden path that lies under a shown folder: an empty tmpfs over a
    folder, /dev/null over a file. A hidden path that is itself a shown folder is refused."""
    masks: list[str] = []
    folders = [os.path.realpath(p) for p in hidden if os.path.isdir(p)]
    for path in hidden:
        real = os.path.realpath(path)
        if any(real != f and _under(real, [f]) for f in folders):
            continue  # inside a folder that is masked whole
        for src, dest in bound:
            if real == src:
                raise SandboxError(
                    f"{path} is a folder the agent's sandbox must show (its code or the "
                    "interpreter); keep releases, prices and outputs elsewhere"
                )
            if _under(real, [src]):
                inside = dest + real[len(src) :]
                masks += (
                    ["--tmpfs", inside]
                    if os.path.isdir(real)
                    else ["--ro-bind", "/dev/null", inside]
                )
    return masks


# -- the sandbox: one zygote per run -----------------------------------------------------


class Sandbox:
    def __init__(
        self,
        *,
        binds: tuple[tuple[str, str], ...],
        hidden: list[str],
        settings: SandboxSettings,
        by_value: bool = False,
    ) -> None:
        self.binds = binds
        self.hidden = hidden
        self.by_value = by_value
        self.settings = settings
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: Channel | None = None
        self._started = False
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._etc = tempfile.TemporaryDirectory(prefix="pit-etc-")  # removed in close()
        self._found: dict[str, Any] = {}
        self._tree_limits: dict[str, Any] | None = None
        self._cells_open = 0  # handed over by the zygote and not yet seen to exit

    # the zygote ------------------------------------------------------------------------
    def launch(self) -> None:
        """Start bubblewrap and the zygote without waiting for them (``start`` waits)."""
        if self._proc is not None:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for name, text in ETC_FILES.items():
            Path(self._etc.name, name).write_text(text)
        command = bwrap_command(
            fd=theirs.fileno(),
            binds=self.binds,
            hidden=self.hidden,
            by_value=self.by_value,
            etc=self._etc.name,
        )
        self._proc = subprocess.Popen(
            command,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )
        theirs.close()
        self._control = Channel(ours)
        self._started = False

    def start(self) -> None:
        """Launch the zygote if needed and wait for its hello."""
        self.launch()
        if self._started:
            return
        assert self._control is not None
        try:
            hello = msg.read(
                self._control.recv(timeout=self.settings.start_timeout), msg.FromZygote
            )
        except (ChannelClosed, ChannelTimeout, ProtocolError, msg.MessageError) as exc:
            self.stop()
            raise RuntimeFailure(f"the sandbox did not start ({exc}): {self.log_tail()}") from None
        if not isinstance(hello, msg.Hello):
            self.stop()
            raise RuntimeFailure(f"the sandbox said {type(hello).__name__} instead of hello")
        self._tree_limits = None
        self._started = True

    def probe(self) -> dict[str, Any]:
        """Run the capability probe in a cell like any other and keep its findings, with
        ``tree_limits`` from the zygote's hello: which of the tree's limits were seen to
        kill a tree that passed them (each tried in a cell of its own at start)."""
        chan, report = self._open()
        try:
            try:
                wire_held = report.start(self.settings.start_timeout)
                chan.send(msg.Probe(hidden=self._hidden_inside()).wire())
                found = msg.read(chan.recv(timeout=self.settings.start_timeout), msg.FromCell)
            except (ChannelClosed, ChannelTimeout, ProtocolError, msg.MessageError) as exc:
                self._finish(kill=True)
                raise RuntimeFailure(f"the sandbox's probe cell failed ({exc})") from None
            finally:
                chan.close()
            self._finish(kill=False)
            # the probe knocked on PROBE_TARGET: a held wire must have seen it
            seen = report.take(until_end=WIRE_GRACE) if wire_held else []
        finally:
            report.close()
        if isinstance(found, msg.SetupFailed):
            raise RuntimeFailure(f"the sandbox's probe cell could not be set up: {found.message}")
        if not isinstance(found, msg.Capabilities):
            raise RuntimeFailure(f"the probe cell answered {type(found).__name__}")
        self._found = found.wire()
        self._found.pop("op")
        knocked = any((a.protocol, a.target()) == ("tcp", PROBE_TARGET) for a in seen)
        self._found["wire"] = wire_held and knocked
        self._found["wire_unavailable"] = (
            None
            if wire_held and knocked
            else report.why
            if not wire_held
            else f"the probe's attempt to {PROBE_TARGET} was not seen on the cell's wire"
        )
        return self._found

    @property
    def alive(self) -> bool:
        """Its zygote is running and its control channel open."""
        return self._proc is not None and self._proc.poll() is None and self._control is not None

    @property
    def pid(self) -> int | None:
        """Bubblewrap's process id, while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def idle(self) -> bool:
        """No cell of it is open: every cell handed over was seen to exit."""
        return self._cells_open == 0

    @property
    def log_bytes(self) -> int:
        """How much its processes have written to their shared output so far (the
        zygote's, and a by-value agent's own stdout and stderr)."""
        return os.fstat(self._log.fileno()).st_size

    @property
    def probed(self) -> bool:
        """Its probe cell ran and its findings are kept (``probe``)."""
        return bool(self._found)

    @property
    def wire_held(self) -> bool:
        """The probe cell's wire was held: every cell's must be (else the cell fails)."""
        return self._found.get("wire") is True

    @property
    def capabilities(self) -> dict[str, Any]:
        """What the probe cell found, with ``tree_limits``: which of the tree's limits were
        seen to kill a tree that passed them (each tried in a cell of its own from the
        sandbox's start; the outcome is asked for here, between cells)."""
        if self._found and "tree_limits" not in self._found:
            held = self._ask_tree_limits()
            self._found["tree_limits"] = {w: held.get(w) is True for w in tree_limits.TREE_LIMITS}
        return self._found

    def _ask_tree_limits(self) -> dict[str, Any]:
        if self._tree_limits is None:
            self._tree_limits = {}
            if self._control is not None:
                try:
                    self._control.send(msg.AskTreeLimits().wire())
                    reply = msg.read(
                        self._control.recv(timeout=self.settings.start_timeout), msg.FromZygote
                    )
                except (ChannelClosed, ChannelTimeout, ProtocolError, msg.MessageError):
                    return {}  # not seen to hold: every tree limit reads False
                held = reply.held if isinstance(reply, msg.TreeLimitsHeld) else {}
                self._tree_limits = dict(held)
        return self._tree_limits

    def _hidden_inside(self) -> list[str]:
        """Where each hidden path would appear inside: its own path, and its place under
        any bind of the agent's code."""
        paths = list(self.hidden)
        for path in self.hidden:
            real = os.path.realpath(path)
            paths += [dest + real[len(src) :] for src, dest in self.binds if _under(real, [src])]
        return paths

    def stop(self) -> None:
        if self._control is not None:
            with contextlib.suppress(ChannelClosed):
                self._control.send(msg.Quit().wire())
            self._control.close()
            self._control = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def close(self) -> None:
        self.stop()
        self._log.close()
        self._etc.cleanup()

    def log_tail(self, size: int = 2000) -> str:
        self._log.flush()
        self._log.seek(0, os.SEEK_END)
        end = self._log.tell()
        self._log.seek(max(0, end - size))
        return self._log.read().decode("utf-8", "replace").strip()

    # cells -----------------------------------------------------------------------------
    def _open(self) -> tuple[Channel, WireReport]:
        """A new cell: its socket, and the report of its wire."""
        self.start()
        assert self._control is not None
        try:
            self._control.send(msg.OpenCell(limits=self.settings.limits()).wire())
            _, fds, _, _ = socket.recv_fds(self._control.sock, 4096, 2)
        except (OSError, ChannelClosed) as exc:
            self.stop()
            raise RuntimeFailure(f"the sandbox's zygote is gone ({exc})") from None
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            self.stop()
            raise RuntimeFailure("the sandbox's zygote did not hand over a cell")
        self._cells_open += 1
        return Channel(CellSocket(fileno=fds[0])), WireReport(socket.socket(fileno=fds[1]))

    def _finish(self, *, kill: bool, grace: float | None = None) -> int | None:
        """Wait for the cell's process to end (killing it first if asked, or once
        ``grace`` seconds pass without it ending); its exit code."""
        if self._control is None:
            return None
        try:
            if kill:
                self._control.send(msg.Kill().wire())
            elif grace is not None:
                try:
                    code = self._exit_code(self._control.recv(timeout=grace))
                    self._cells_open -= 1
                    return code
                except ChannelTimeout:  # it closed its pipe and lives on: end it
                    self._control.send(msg.Kill().wire())
            while True:
                message = msg.read(self._control.recv(timeout=30), msg.FromZygote)
                if isinstance(message, msg.CellExit):
                    self._cells_open -= 1
                    return message.code
        except (ChannelClosed, ChannelTimeout, ProtocolError, msg.MessageError):
            self.stop()
            return None

    @staticmethod
    def _exit_code(message: dict[str, Any]) -> int | None:
        exited = msg.read(message, msg.FromZygote)
        if not isinstance(exited, msg.CellExit):
            raise ProtocolError(f"the zygote said {type(exited).__name__}, not cell_exit")
        return exited.code

    def open_cell(
        self, payload: AgentPayload, policy: str, relay: dict[str, Any] | None = None
    ) -> IsolatedAgent:
        from harness.isolation.guard import NetworkAbort

        chan, report = self._open()
        cell = IsolatedAgent(self, chan, report)
        try:
            cell.load(payload, policy, relay)
        except (outcomes.AgentFault, NetworkAbort) as exc:
            setattr(exc, "cell", cell)  # noqa: B010 - its egress attempts are still recorded
            raise
        return cell


# How long a cell whose pipe closed may take to exit before it is killed.
EXIT_GRACE = 2.0


class RuntimeFailure(outcomes.RuntimeFailure):
    pass


class AgentProcessExited(outcomes.AgentProcessExited):
    pass


class IsolatedAgent:
    """One cell's agent, in its own process: the runner's CellAgent for isolated runs."""

    def __init__(self, sandbox: Sandbox, chan: Channel, report: WireReport) -> None:
        self._sandbox = sandbox
        self._chan = chan
        self._report = report
        self._attempts: list[EgressAttempt | WireAttempt] = []
        self._ended = False

    def take_attempts(self) -> list[EgressAttempt | WireAttempt]:
        """The guard's call sites and the wire's attempts since the last call. Each
        attempt on the wire is reported before it is refused, so one the agent has
        seen refused is here by the time the agent's next message is."""
        taken, self._attempts = self._attempts, []
        if not self._ended:
            taken += self._report.take()
        return taken

    def load(self, payload: AgentPayload, policy: str, relay: dict[str, Any] | None = None) -> None:
        from harness.isolation.guard import NetworkAbort

        wire = self._report.start(self._sandbox.settings.start_timeout)
        if not wire and self._sandbox.wire_held:
            self._end(kill=True)
            raise RuntimeFailure(f"the cell's wire could not be set up: {self._report.why}")
        # the relay's environment may hold API keys: it travels over the cell's own
        # socket only, never on a command line or in a file
        self._send(
            msg.Load(agent=payload.message, policy=policy, relay=relay, wire_held=wire).wire()
        )
        reply = self._recv()
        if isinstance(reply, msg.Ready):
            return
        self._end(kill=False)
        if isinstance(reply, msg.Abort):
            raise NetworkAbort(self._last_attempt())
        if isinstance(reply, msg.AgentError):
            raise self._fault(reply)
        if isinstance(reply, msg.AgentExited):
            raise AgentProcessExited(reply.message)
        if isinstance(reply, msg.SetupFailed):
            raise RuntimeFailure(f"the cell's sandbox could not be set up: {reply.message}")
        raise outcomes.AgentFault(outcomes.PROTOCOL_VIOLATION, f"unexpected message {_op(reply)!r}")

    def decide(self, task: Task, tools: Toolbox) -> Decision:
        """The agent's decision, within the decision's wall-clock budget (tool calls
        included); past it the cell's tree is killed and it is the agent's
        ``resource_limit``."""
        sock = self._chan.sock
        assert isinstance(sock, CellSocket)
        sock.deadline = time.monotonic() + self._sandbox.settings.decision_timeout
        try:
            return self._decide(task, tools)
        except DecisionOverBudget:
            self._end(kill=True)
            raise outcomes.AgentFault(
                outcomes.RESOURCE_LIMIT,
                f"decision time limit of {self._sandbox.settings.decision_timeout:g} s "
                "(wall clock, tool calls included) reached; the agent's process tree was killed",
            ) from None
        finally:
            sock.deadline = None

    def _decide(self, task: Task, tools: Toolbox) -> Decision:
        from harness.isolation.guard import NetworkAbort

        fields = msg.TaskFields(
            kind=task.kind,
            prompt=task.prompt,
            arm=task.arm,
            clock=task.clock,
            session_date=task.session_date,
            known_at=task.known_at,
            observation=task.observation,
            held=list(task.held),
            positions=list(task.positions),
        )
        self._send(msg.TaskRequest(task=fields, newly_knowable=tools.newly_knowable()).wire())
        while True:
            reply = self._recv()
            if isinstance(reply, msg.ToolCall):
                self._serve_tool(reply, tools)
            elif isinstance(reply, msg.Decided):
                return self._decision(reply)
            elif isinstance(reply, msg.DecisionError):
                raise outcomes.AgentFault(outcomes.DECISION_RAISED, reply.message)
            elif isinstance(reply, msg.AgentError):
                self._end(kill=False)
                raise self._fault(reply)
            elif isinstance(reply, msg.AgentExited):
                self._end(kill=False)
                raise AgentProcessExited(reply.message)
            elif isinstance(reply, msg.Abort):
                self._end(kill=False)
                raise NetworkAbort(self._last_attempt())
            else:
                self._end(kill=True)
                raise outcomes.AgentFault(
                    outcomes.PROTOCOL_VIOLATION, f"unexpected message {_op(reply)!r}"
                )

    def close(self) -> None:
        if not self._ended:
            with contextlib.suppress(ChannelClosed):
                self._chan.send(msg.End().wire())
            self._end(kill=False)

    # -- plumbing ------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        try:
            self._chan.send(message)
        except ChannelClosed:
            raise self._died() from None

    def _recv(self) -> msg.FromCell:
        """The cell's next message. During a decision its socket's deadline bounds the
        wait (``DecisionOverBudget``); otherwise (loading the agent) no single wait lasts
        longer than the decision timeout."""
        deadline = getattr(self._chan.sock, "deadline", None)
        timeout = None if deadline is not None else self._sandbox.settings.decision_timeout
        try:
            reply = self._chan.recv(timeout=timeout)
        except ChannelTimeout:
            self._end(kill=True)
            raise RuntimeFailure(
                f"the agent's process sent nothing for {self._sandbox.settings.decision_timeout:g} s"
            ) from None
        except ChannelClosed:
            raise self._died() from None
        except LineTooLong as exc:
            self._end(kill=True)
            raise outcomes.AgentFault(outcomes.OVERSIZED_OUTPUT, str(exc)) from None
        except ProtocolError as exc:
            self._end(kill=True)
            raise outcomes.AgentFault(outcomes.PROTOCOL_VIOLATION, str(exc)) from None
        try:
            message: msg.FromCell = msg.read(reply, msg.FromCell)
        except msg.MessageError as exc:  # an unknown op or field, or a wrong type, named
            self._end(kill=True)
            raise outcomes.AgentFault(outcomes.PROTOCOL_VIOLATION, str(exc)) from None
        for attempt in getattr(message, "attempts", ()):
            self._attempts.append(attempt_from_message(attempt))
        return message

    def _died(self) -> Exception:
        code = self._end(kill=False, grace=EXIT_GRACE)
        limit = next((which for which, c in LIMIT_CODES.items() if c == code), None)
        if limit is not None:
            return outcomes.AgentFault(
                outcomes.RESOURCE_LIMIT,
                f"{self._limit_text(limit)} reached for the agent's process tree",
            )
        if code == CELL_SETUP_FAILED:
            return RuntimeFailure("the cell's sandbox could not be set up")
        if code is None:
            return RuntimeFailure("the sandbox did not report how the agent's process ended")
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        return AgentProcessExited(
            f"{outcomes.AGENT_PROCESS_EXITED} or closed its pipe mid-cell ({how})"
        )

    def _limit_text(self, which: str) -> str:
        settings = self._sandbox.settings
        if which == tree_limits.MEMORY:
            return f"memory limit of {_bytes(settings.memory_bytes)}"
        if which == tree_limits.CPU:
            return f"CPU time limit of {settings.cpu_seconds:g} s"
        return f"process limit of {settings.max_processes} processes at once"

    def _end(self, *, kill: bool, grace: float | None = None) -> int | None:
        if self._ended:
            return None
        self._ended = True
        self._chan.close()
        code = self._sandbox._finish(kill=kill, grace=grace)
        # the cell has ended: its outer process reports what is left on its wire and closes
        self._attempts += self._report.take(until_end=WIRE_GRACE)
        self._report.close()
        return code

    def _last_attempt(self) -> EgressAttempt:
        sites = [a for a in self._attempts if isinstance(a, EgressAttempt)]
        return sites[-1] if sites else EgressAttempt("unknown", "", "", ())

    @staticmethod
    def _fault(reply: msg.AgentError) -> outcomes.AgentFault:
        kind = reply.kind
        if kind not in outcomes.AGENT_ERROR_KINDS or kind == outcomes.DECISION_RAISED:
            return outcomes.AgentFault(outcomes.PROTOCOL_VIOLATION, f"unknown error kind {kind!r}")
        return outcomes.AgentFault(kind, reply.message[:500])

    def _decision(self, reply: msg.Decided) -> Decision:
        values: list[Any] = []
        for n, pick in enumerate(reply.picks):
            if isinstance(pick, str):
                values.append(pick)
            else:
                values.append(_Shown(str(reply.bad.get(str(n), repr(pick)))[:80]))
        return Decision(picks=tuple(values), text=reply.text, wire=reply.wire_decision)

    def _serve_tool(self, request: msg.ToolCall, tools: Toolbox) -> None:
        name, args = request.tool, request.args
        if name not in TOOLS or set(args) != TOOLS[name].arg_names:
            self._end(kill=True)
            raise outcomes.AgentFault(
                outcomes.PROTOCOL_VIOLATION, f"a malformed tool call {str(name)[:40]!r}"
            )
        problem = outcomes.json_data_problem(args, f"{name} arguments")
        if problem:
            self._end(kill=True)
            raise outcomes.AgentFault(outcomes.PROTOCOL_VIOLATION, f"not JSON data: {problem}")
        result = getattr(tools, str(name))(**args)
        texts = tools.last_served
        if texts is not None and "rows" in result:
            import json

            marked = msg.ToolResult(result={**result, "rows": "\x00rows\x00"})
            text = json.dumps(marked.wire())
            if text.count(_ROWS_MARK) == 1:
                self._send_text(text.replace(_ROWS_MARK, "[" + ",".join(texts) + "]", 1))
                return
        self._send(msg.ToolResult(result=result).wire())

    def _send_text(self, text: str) -> None:
        try:
            self._chan.send_text(text)
        except ChannelClosed:
            raise self._died() from None


def _op(message: msg.Message) -> str:
    return str(message.__struct_config__.tag)


def _bytes(count: int) -> str:
    """``count`` bytes in the largest binary unit that divides it, e.g. ``256 MiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count and count % (1 << shift) == 0:
            return f"{count >> shift} {unit}"
    return f"{count} bytes"


class _Shown:
    """A pick that was not a row key, carried as its repr so the rejection reads the same
    as in an in-process run."""

    def __init__(self, text: str) -> None:
        self._text = text

    def __repr__(self) -> str:
        return self._text
