"""What runs inside the sandbox: the zygote, and the cell process it forks for each cell.

``python -m harness.isolation.sandbox.inside FD`` is started by bubblewrap with FD a Unix socket
to the harness (the control channel). The zygote imports the shim once and then, for
every cell, forks a process that

1. enters fresh user, mount, network, UTS, IPC and PID namespaces, so that its ``/tmp``
   and ``/dev/shm`` are new empty tmpfs mounts, its ``/proc`` lists its own processes
   only (no other cell, no zygote: nothing of theirs to read or write), its loopback
   interface, sockets (TCP states such as TIME_WAIT, abstract Unix names), host name,
   System V IPC and session keyring are its own, and every process it leaves behind dies
   with it (it is the init of its PID namespace);
2. drops every capability (bounding set too) and sets its per-process resource limits;
3. only then loads the agent (by reference or by value) and serves the cell's tasks over
   its own socket, whose other end the zygote handed to the harness.

The cell's outer process, parent of that init and beyond the agent's reach, holds the
memory, CPU-time and process-count limits for the whole tree (``harness.isolation.sandbox.limits``)
and kills it whole when one is passed, exiting with the code that names the limit.

So no file, global, environment variable or process crosses from one cell to another,
and the agent's import-time code runs confined like the rest of it. The zygote never
imports or runs agent code.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import mmap
import os
import re
import resource
import select
import signal
import socket
import sys
from typing import Any

from harness.isolation.sandbox import limits as tree_limits
from harness.isolation.sandbox import messages as msg
from harness.isolation.sandbox import wire
from harness.isolation.sandbox.channel import Channel, ChannelClosed

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_REC, MS_PRIVATE = 1 << 14, 1 << 18
MNT_DETACH = 2
# Machine-wide files of /proc that a cell's own /proc keeps (see _private_proc).
PROC_FILES = (
    "cpuinfo",
    "meminfo",
    "stat",
    "loadavg",
    "uptime",
    "version",
    "filesystems",
    "cmdline",
    "swaps",
    "diskstats",
)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME, PR_CAPBSET_DROP = 1, 4, 15, 24
# The names a cell's init goes by in ps and /proc/PID/comm: a spare waiting for its first
# message, and a cell that has been handed its task (the one running, when agent code runs).
SPARE_NAME, CELL_NAME = b"pit-spare", b"pit-cell"
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# The namespaces a cell must hold apart from the zygote (and so from every other cell).
CELL_NAMESPACES = ("net", "ipc", "uts", "mnt", "pid", "user")
_CAP_V3 = 0x20080522
# The host's /proc, shown to the zygote so that each cell can mount a /proc of its own.
HOST_PROC = "/run/pit-host-proc"
# TEST-NET-1: where the probe cell knocks, to see the wire refuse it (and record it).
PROBE_TARGET = "192.0.2.1:9"

# Exit codes of the cell's outer process, read by the zygote. An agent's own exit code
# is reported as at most 99, and a signal as 128 + its number, so none reads as these.
CELL_CPU_LIMIT = 100
CELL_SETUP_FAILED = 101
CELL_MEMORY_LIMIT = 102
CELL_PROCESS_LIMIT = 103
LIMIT_CODES = {
    tree_limits.CPU: CELL_CPU_LIMIT,
    tree_limits.MEMORY: CELL_MEMORY_LIMIT,
    tree_limits.PROCESSES: CELL_PROCESS_LIMIT,
}
# The limit probe: each tree limit set small in a cell of its own, how many children
# pass it together (none alone), and how long a cell waits to be killed for it.
_PROBE_BASE = {
    "memory_bytes": 1 << 30,
    "cpu_seconds": 60,
    "open_files": 64,
    "max_processes": 64,
    "per_process": False,  # the tree's limits alone
    "poll_interval": 0.005,
}
PROBE_LIMITS: dict[str, dict[str, Any]] = {
    tree_limits.MEMORY: {"memory_bytes": 32 << 20},
    tree_limits.CPU: {"cpu_seconds": 0.02},
    tree_limits.PROCESSES: {"max_processes": 4},
}
_PROBE_CHILDREN = {tree_limits.MEMORY: 3, tree_limits.CPU: 2, tree_limits.PROCESSES: 6}
_PROBE_CHILD_MEMORY = 14 << 20
_PROBE_PATIENCE = 2.0

_libc = ctypes.CDLL(None, use_errno=True)


def _ok(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("eff", ctypes.c_uint32), ("perm", ctypes.c_uint32), ("inh", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        _ok(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    _ok(_libc.capset(ctypes.byref(_CapHeader(_CAP_V3, 0)), (_CapData * 2)()), "capset")


def _enter_cell_namespaces() -> None:
    """Every namespace but the PID namespace (``_enter_cell_pid_namespace``): the wire's
    server must be forked between the two, outside the namespace the agent's processes
    will share (a process that has unshared its PID namespace can start no thread)."""
    uid, gid = os.getuid(), os.getgid()
    _ok(
        _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC),
        "unshare",
    )
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _enter_cell_pid_namespace() -> None:
    _ok(_libc.unshare(CLONE_NEWPID), "unshare the PID namespace")


def _loopback_up() -> None:
    """A new network namespace starts with its loopback down; the model relay (and an
    agent's own loopback traffic) needs it up. Nothing else exists to bring up."""
    import fcntl
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def namespace_ids() -> dict[str, int]:
    """This process's namespaces, by inode: a cell compares its own with the zygote's."""
    found = {}
    for name in CELL_NAMESPACES:
        with contextlib.suppress(OSError):
            found[name] = os.stat(f"/proc/self/ns/{name}").st_ino
    return found


# The zygote's namespaces, read before any cell is forked (a cell's /proc shows only itself).
_ZYGOTE_NAMESPACES: dict[str, int] = {}


# What the sandbox shows under /tmp (the harness, the interpreter or the agent's code when
# they live there), kept in a cell's fresh /tmp at the same paths; filled in each cell.
_KEPT_UNDER_TMP: list[str] = []


def _fresh_mounts() -> None:
    _ok(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    _fresh_tmp()
    if os.path.isdir("/dev/shm"):
        _tmpfs("/dev/shm")
    _own_proc()


def _tmpfs(target: str) -> None:
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


def _fresh_tmp() -> None:
    """A new empty /tmp, in which what the sandbox shows under the old one (read-only
    binds, with the masks inside them) appears again at the same paths: a checkout, a
    virtual environment or an agent under /tmp works as anywhere else.

    The binds came from a more privileged namespace, so they are locked: they cannot be
    moved, only copied whole (MS_BIND | MS_REC keeps their children and read-only flag).
    They are copied to a stage on /dev/shm, /tmp is covered, and they are copied back."""
    kept = _submounts("/tmp")
    if not kept:
        _tmpfs("/tmp")
        return
    stage = "/dev/shm"
    if not os.path.isdir(stage):
        raise OSError(errno.ENOENT, "no /dev/shm to stage the folders shown under /tmp")
    _tmpfs(stage)
    for n, path in enumerate(kept):
        _mount(path, _placeholder(f"{stage}/{n}", like=path), None, MS_BIND | MS_REC)
    _tmpfs("/tmp")
    for n, path in enumerate(kept):
        _mount(f"{stage}/{n}", _placeholder(path, like=f"{stage}/{n}"), None, MS_BIND | MS_REC)
    _ok(_libc.umount2(stage.encode(), MNT_DETACH), "unmount the stage on /dev/shm")
    _KEPT_UNDER_TMP[:] = kept


def _placeholder(path: str, *, like: str) -> str:
    """An empty folder or file at ``path`` to mount ``like`` on."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.isdir(like):
        os.mkdir(path)
    else:
        open(path, "x").close()
    return path


def _submounts(folder: str) -> list[str]:
    """The mount points directly on ``folder``'s own mount (not nested in another one)."""
    table = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split()
            table.append((fields[0], fields[1], _unescape(fields[4])))
    ids = {point: mount_id for mount_id, _, point in table}  # the last mount on a point wins
    parent = ids.get(folder)
    points = [
        point
        for mount_id, parent_id, point in table
        if parent_id == parent and point.startswith(folder + "/") and ids[point] == mount_id
    ]
    # a mount whose point lies in another one's folder, on the same parent, was mounted
    # first and is covered by it (a file an agent's command names, then the folder holding
    # it): what shows there is the folder's
    return [p for p in points if not any(p.startswith(q + "/") for q in points)]


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    _ok(
        _libc.mount(
            source and source.encode(),
            target.encode(),
            kind and kind.encode(),
            flags,
            data.encode() or None,
        ),
        f"mount {target}",
    )


def _own_proc() -> None:
    """A /proc of the cell's own PID namespace, read-only: it lists the cell's processes
    only (not the zygote, not the next cell's), and numbers them as the cell does, so
    nothing in it (``/proc/self/status``'s NSpid, ``stat``) carries the sandbox's process
    numbers, which differ from one execution to the next. Where the kernel refuses it,
    the view of ``_private_proc``. Either way the host's /proc is covered."""
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)
    except OSError:
        _private_proc()
    if os.path.isdir(HOST_PROC):
        _mount(
            "tmpfs", HOST_PROC, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555"
        )


def _private_proc() -> None:
    """Put a /proc in front of the sandbox's that holds this cell's own process (as
    ``self`` and as ``1``, its number in its PID namespace), the machine-wide files
    programs read, and ``sys`` read-only. No other process is listed: not the zygote, not
    the next cell's process waiting to start, so nothing of theirs (``oom_score_adj``,
    ``coredump_filter``, memory) can carry state from one cell to another.

    (A fresh procfs is not possible here: bubblewrap's /proc has covers a nested user
    namespace may not mount past. A cell's subprocesses see its first process as self.)
    """
    me = os.readlink("/proc/self")
    stage = "/tmp/.proc"
    os.mkdir(stage, 0o700)
    _mount("/proc", stage, None, MS_BIND | MS_REC)
    _mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755")
    binds: list[tuple[str, str]] = [(me, "self"), (me, "1"), ("sys", "sys")]
    binds += [(name, name) for name in PROC_FILES]
    for source, name in binds:
        origin = f"{stage}/{source}"
        if not os.path.exists(origin):
            continue
        if os.path.isdir(origin):
            os.mkdir(f"/proc/{name}")
        else:
            open(f"/proc/{name}", "x").close()
        _mount(origin, f"/proc/{name}", None, MS_BIND | MS_REC)
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    _mount(None, "/proc/sys", None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags)
    for name in ("mounts", "net"):
        os.symlink(f"self/{name}", f"/proc/{name}")
    _mount(None, "/proc", None, MS_REMOUNT | MS_RDONLY | flags)
    _ok(_libc.umount2(stage.encode(), MNT_DETACH), "unmount the staging of /proc")
    os.rmdir(stage)


def _set_limits(limits: dict[str, Any]) -> None:
    """Each process's own limits, a first line under the tree's: address space, CPU time
    and open files per process, no core files, and a ceiling on tasks (threads count)
    that stops a fork bomb between two polls of the tree (the kernel skips it for a user
    that is root outside the sandbox)."""
    if limits.get("per_process", True):  # a limit probe checks the tree's limits alone
        memory = limits["memory_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        # soft == hard: the kernel then sends SIGKILL, which reaches a PID namespace's init
        cpu = max(1, int(limits["cpu_seconds"]))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    tasks = 16 * limits["max_processes"]
    resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))


def _tree_limits(limits: dict[str, Any]) -> tree_limits.TreeLimits:
    return tree_limits.TreeLimits(
        memory_bytes=limits["memory_bytes"],
        cpu_seconds=limits["cpu_seconds"],
        max_processes=limits["max_processes"],
        poll_interval=limits.get("poll_interval", tree_limits.POLL_INTERVAL),
    )


# -- the zygote ---------------------------------------------------------------------


class _Spare:
    """A cell process forked ahead of need: its namespaces, mounts, capabilities and
    limits are set up while the previous cell runs, and it waits for its first message.
    It runs no agent code before the harness sends that message, which happens only
    after the previous cell has ended, so two cells never run agent code at once."""

    def __init__(self, limits: dict[str, Any]) -> None:
        self.limits = limits
        self.ours, theirs = socket.socketpair()
        # the cell's wire report: written by its outer process only, read by the harness
        self.wire, wire = socket.socketpair()
        self.pid = os.fork()
        if self.pid == 0:  # the cell's outer process
            code = CELL_SETUP_FAILED
            try:
                for fd in _inherited:
                    os.close(fd)
                self.ours.close()
                self.wire.close()
                code = _cell_outer(theirs, limits, wire)
            finally:
                os._exit(code)
        theirs.close()
        wire.close()
        _inherited.update((self.ours.fileno(), self.wire.fileno()))

    def discard(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self._close()

    def _close(self) -> None:
        _inherited.difference_update((self.ours.fileno(), self.wire.fileno()))
        self.ours.close()
        self.wire.close()


# Descriptors of the zygote that a newly forked cell must close at once.
_inherited: set[int] = set()


def zygote(control: Channel, *, by_value: bool = False) -> None:
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # nothing in a cell may ptrace or read us
    _ZYGOTE_NAMESPACES.update(namespace_ids())
    _preimport(by_value)
    _inherited.add(control.fileno())
    # the tree's limits are tried while the run goes on; the harness asks for the
    # outcome between cells (at the end of a run), so they cost the run no start time
    trying = start_tree_limit_probes()
    held: dict[str, bool] | None = None
    control.send(msg.Hello(pid=os.getpid()).wire())
    spare: _Spare | None = None
    try:
        while True:
            try:
                message = msg.read(control.recv(), msg.ToZygote)
            except ChannelClosed:
                return
            if isinstance(message, msg.Quit):
                return
            if isinstance(message, msg.AskTreeLimits):
                held = collect_tree_limits(trying) if held is None else held
                control.send(msg.TreeLimitsHeld(held=held).wire())
            if isinstance(message, msg.OpenCell):
                limits = message.limits
                if spare is None or spare.limits != limits:
                    if spare is not None:
                        spare.discard()
                    spare = _Spare(limits)
                cell, spare = spare, None
                spare = _run_cell(control, cell)
    finally:
        if spare is not None:
            spare.discard()


def start_tree_limit_probes() -> dict[str, _Spare]:
    """Try each of the tree's limits for effect, in cells of their own run side by side
    (no agent code runs in them); :func:`collect_tree_limits` reads the outcome."""
    cells = {
        which: _Spare({**_PROBE_BASE, **PROBE_LIMITS[which]}) for which in tree_limits.TREE_LIMITS
    }
    for which, cell in cells.items():
        with contextlib.suppress(ChannelClosed):
            Channel(cell.ours).send(msg.ProbeLimit(limit=which).wire())
    return cells


def collect_tree_limits(cells: dict[str, _Spare]) -> dict[str, bool]:
    """Which limits killed a cell that passed them only with its children's share
    counted, with the exit code that names it."""
    held = {}
    for which, cell in cells.items():
        _, status = os.waitpid(cell.pid, 0)
        held[which] = os.waitstatus_to_exitcode(status) == LIMIT_CODES[which]
        cell._close()
    return held


def probe_tree_limits() -> dict[str, bool]:
    """Try each of the tree's limits for effect and wait for the outcome."""
    return collect_tree_limits(start_tree_limit_probes())


def _preimport(by_value: bool) -> None:
    # The shim's own modules, so that a cell starts without importing them again; the
    # unpickler only for an agent that travels by value.
    import harness.agents.adapters.plain
    import harness.agents.baselines
    import harness.agents.stub
    import harness.isolation.guard
    import harness.isolation.sandbox.messages
    import harness.isolation.sandbox.shim
    import harness.tools.table  # noqa: F401

    if by_value:
        with contextlib.suppress(ImportError):  # without it, the cell reports the failure
            import cloudpickle  # noqa: F401


def _run_cell(control: Channel, cell: _Spare) -> _Spare:
    """Hand ``cell`` to the harness, fork the next one, and wait for ``cell`` to end."""
    socket.send_fds(
        control.sock, [b'{"op":"cell_started"}\n'], [cell.ours.fileno(), cell.wire.fileno()]
    )
    cell._close()
    spare = _Spare(cell.limits)
    pidfd = os.pidfd_open(cell.pid)
    try:
        while True:
            ready, _, _ = select.select([control.fileno(), pidfd], [], [])
            if pidfd in ready:
                break
            try:
                request = msg.read(control.recv(), msg.ToZygote)
            except ChannelClosed:
                os.kill(cell.pid, signal.SIGKILL)
                break
            if isinstance(request, msg.Kill):
                os.kill(cell.pid, signal.SIGKILL)
    finally:
        os.close(pidfd)
    _, status = os.waitpid(cell.pid, 0)
    control.send(msg.CellExit(code=os.waitstatus_to_exitcode(status)).wire())
    return spare


def _cell_outer(sock: socket.socket, limits: dict[str, Any], report: socket.socket) -> int:
    """Start the cell (init of a new PID namespace) and watch its tree until it ends,
    holding the cell's wire (``harness.isolation.sandbox.wire``) and reporting on it; the
    exit code says how: a limit's code, ``128 + signal``, or the cell's own code (<= 99)."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _enter_cell_namespaces()
    server = _serve_wire(_open_wire(report), report, sock)
    _enter_cell_pid_namespace()
    # The sandbox's procfs lists the cell's processes; the cell's own /proc will not.
    proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
    pid = os.fork()
    if pid == 0:  # the cell: init of its own PID namespace
        code = CELL_SETUP_FAILED
        try:
            # first: nothing in the cell may read the other processes, nor reach the wire
            os.close(proc)
            if server is not None:
                os.close(server[1])
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            _fresh_mounts()
            _loopback_up()
            _drop_capabilities()
            _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            _set_limits(limits)
        except BaseException as exc:
            try:
                Channel(sock).send(msg.SetupFailed(message=f"{exc}"[:500]).wire())
            finally:
                os._exit(CELL_SETUP_FAILED)
        code = 0
        try:
            code = _cell(Channel(sock, max_line=1 << 40), limits)  # the harness's side is trusted
        finally:
            os._exit(code)
    sock.close()
    hit, status, cpu = tree_limits.watch(pid, _tree_limits(limits), proc)
    if server is not None:  # the cell has ended: the wire's server reports the rest
        os.close(server[1])
        os.waitpid(server[0], 0)
    if hit is not None:
        return LIMIT_CODES[hit]
    if os.WIFSIGNALED(status):
        signal_number = os.WTERMSIG(status)
        if signal_number in (signal.SIGKILL, signal.SIGXCPU) and cpu >= limits["cpu_seconds"] - 0.5:
            return CELL_CPU_LIMIT  # the init's own CPU-time limit, the first line
        return 128 + signal_number
    return min(os.WEXITSTATUS(status), 99)


def _open_wire(report: socket.socket) -> int | None:
    """The cell's TUN device; the first line of the report says whether the cell has one
    (without it the cell's network has loopback alone, and the guard counts)."""
    try:
        tun = wire.open_wire()
    except OSError as exc:
        wire.send_line(report, {"wire": False, "why": f"{exc}"[:300]})
        report.close()
        return None
    wire.send_line(report, {"wire": True})
    return tun


def _serve_wire(
    tun: int | None, report: socket.socket, sock: socket.socket
) -> tuple[int, int] | None:
    """Fork the wire's server, which alone keeps the device and the report: outside the
    PID namespace the agent's processes will share, so none of them can name it. Returns
    its pid and the descriptor whose closing tells it the cell has ended."""
    if tun is None:
        return None
    stop, ended = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            sock.close()
            os.close(ended)
            wire.serve(tun, report, stop)
        finally:
            os._exit(0)
    os.close(stop)
    os.close(tun)
    report.close()
    return pid, ended


# -- the cell ------------------------------------------------------------------------


def _cell(chan: Channel, limits: dict[str, Any]) -> int:
    _libc.prctl(PR_SET_NAME, SPARE_NAME, 0, 0, 0)
    message = msg.read(chan.recv(), msg.ToCell)
    if isinstance(message, msg.Probe):
        chan.send(msg.Capabilities(**probe(message.hidden, limits)).wire())
        return 0
    if isinstance(message, msg.ProbeLimit):
        return exceed(message.limit)
    if not isinstance(message, msg.Load):
        raise msg.MessageError(f"a cell starts with load, not {type(message).__name__}")
    _libc.prctl(PR_SET_NAME, CELL_NAME, 0, 0, 0)
    from harness.isolation.sandbox.shim import serve

    return serve(chan, message)


def exceed(which: str) -> int:
    """Pass the tree's limit ``which`` (set small by the harness for this cell) with
    children, none of which passes it alone, and wait to be killed for it. Returns (exit
    code 0) only if the limit did not hold; a cell that is killed exits with its code."""
    if which not in _PROBE_CHILDREN:
        return 0
    release, hold = os.pipe()
    children = []
    for _ in range(_PROBE_CHILDREN[which]):
        child = os.fork()
        if child == 0:
            _probe_child(which, release)
        children.append(child)
    select.select([], [], [], _PROBE_PATIENCE)
    os.close(hold)
    for child in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    return 0


def _probe_child(which: str, release: int) -> None:
    """A child of the limit probe: its share of the limit, then wait (never returns)."""
    try:
        if which == tree_limits.MEMORY:
            held = bytearray(b"\x01") * _PROBE_CHILD_MEMORY
            held[-1] = 0
        while which == tree_limits.CPU:
            pass
        os.read(release, 1)
    finally:
        os._exit(0)


def probe(hidden: list[str], limits: dict[str, Any]) -> dict[str, Any]:
    """Test, for effect, what this cell enforces; every fact comes from trying it. (The
    tree's memory, CPU-time and process limits are tried in cells of their own, each
    killed for passing one: see ``exceed``.)"""
    return {
        "uid": os.getuid(),
        "capabilities_dropped": _no_capabilities(),
        "network_isolated": _network_isolated(),
        "filesystem_confined": _filesystem_confined(hidden),
        "pid_isolated": os.getpid() == 1,
        "namespaces_private": _namespaces_private(),
        "tmp_private": _tmp_private(),
        "processes_hidden": [p for p in os.listdir("/proc") if p.isdigit()] == ["1"],
        "nothing_shared_writable": not any(_writable(d) for d in ("/", "/dev", "/proc")),
        "per_process_limits": {
            "memory": _memory_enforced(limits["memory_bytes"]),
            "cpu": resource.getrlimit(resource.RLIMIT_CPU)[1] == max(1, int(limits["cpu_seconds"])),
        },
        "open_files_enforced": _open_files_enforced(limits["open_files"]),
        "environment": sorted(os.environ),
    }


def _namespaces_private() -> bool:
    """Every namespace that could carry state (sockets and TCP states, IPC, host name,
    mounts, processes) is this cell's own, none the zygote's, so none another cell's."""
    mine = namespace_ids()
    return set(mine) == set(CELL_NAMESPACES) and all(
        _ZYGOTE_NAMESPACES.get(name) not in (None, inode) for name, inode in mine.items()
    )


def _tmp_private() -> bool:
    """/tmp is writable and holds nothing but the folders the sandbox shows there."""
    if not os.access("/tmp", os.W_OK):
        return False
    allowed = {"/tmp"}
    for path in _KEPT_UNDER_TMP:
        while path != "/tmp":
            allowed.add(path)
            path = os.path.dirname(path)
    for top, folders, files in os.walk("/tmp"):
        shown = [f for f in folders if os.path.join(top, f) in _KEPT_UNDER_TMP]
        folders[:] = [f for f in folders if f not in shown]  # their content is the host's
        for name in [*folders, *files]:
            path = os.path.join(top, name)
            if path not in allowed and path not in _KEPT_UNDER_TMP:
                return False
    return True


def _no_capabilities() -> bool:
    with open("/proc/self/status") as handle:
        caps = {
            line.split(":")[0]: int(line.split(":")[1], 16)
            for line in handle
            if line.startswith("Cap")
        }
    return all(caps.get(k, 1) == 0 for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb"))


def _network_isolated() -> bool:
    """Loopback and the cell's wire are the only interfaces, and a connection out is
    refused (by the wire, which the harness checks saw it) or unreachable."""
    if {name for _, name in socket.if_nameindex()} - {"lo", wire.DEVICE}:
        return False
    import _socket

    host, _, port = PROBE_TARGET.partition(":")
    raw = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        raw.settimeout(2)
        raw.connect((host, int(port)))  # only a route out could reach it
    except OSError as exc:
        refused = (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH)
        return exc.errno in (*refused, errno.EACCES, errno.EPERM)
    finally:
        raw.close()
    return False


def _writable(folder: str) -> bool:
    path = os.path.join(folder, ".pit-harness-write-test")
    try:
        with open(path, "w"):
            pass
    except OSError:
        return False
    os.unlink(path)
    return True


def _filesystem_confined(hidden: list[str]) -> bool:
    return not _writable("/") and not any(_visible(path) for path in hidden)


def _visible(path: str) -> bool:
    """A masked folder is an empty tmpfs and a masked file is /dev/null."""
    if os.path.isdir(path):
        return bool(os.listdir(path))
    return os.path.isfile(path)


def _memory_enforced(limit: int) -> bool:
    if resource.getrlimit(resource.RLIMIT_AS) != (limit, limit):
        return False
    try:
        block = mmap.mmap(-1, limit + (64 << 20))
    except (OSError, MemoryError, OverflowError):
        return True
    block.close()
    return False


def _open_files_enforced(limit: int) -> bool:
    if resource.getrlimit(resource.RLIMIT_NOFILE) != (limit, limit):
        return False
    opened = []
    try:
        for _ in range(limit + 1):
            opened.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as exc:
        return exc.errno == errno.EMFILE
    finally:
        for fd in opened:
            os.close(fd)
    return False


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    control = Channel(socket.socket(fileno=int(args[0])))
    zygote(control, by_value="--by-value" in args[1:])
    os._exit(0)  # nothing left to tear down that the sandbox's end does not


if __name__ == "__main__":
    main()
