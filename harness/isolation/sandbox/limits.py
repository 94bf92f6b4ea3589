"""Limits held for a cell's whole process tree, by accounting across it.

A cell's first process is the init of its own PID namespace, so every process the agent
starts (and every orphan it leaves) descends from it, and killing it kills them all. The
cell's outer process, its parent, is outside that namespace and out of the agent's reach
(nothing in the cell can see, signal or trace it). It watches the tree through a handle
on a procfs that lists the cell's processes (the cell's own ``/proc`` lists only its
first process), and every ``POLL_INTERVAL`` seconds sums over the tree:

- memory: resident memory (RSS; when that sum is over the limit, the proportional set
  size, which shares a page among the processes that map it, decides), plus what the
  cell's private tmpfs mounts (``/tmp``, ``/dev/shm``) hold, since those files are memory;
- CPU time: user and system time of every live process, plus what each has reaped of
  its children, so a child's time stays counted after it exits and is waited for;
- processes: how many the tree holds at once (zombies included: they hold a PID).

When a sum passes its limit the whole tree is killed and the limit is named. This is
portable (no cgroup is needed), at the cost of what can happen between two polls: a
process that lives less than one interval and is reaped without being waited for (its
parent ignores SIGCHLD) takes its CPU time with it, and a burst of allocation or forking
can briefly pass a limit before it is seen. Per-process limits (address space, CPU time,
open files) set in each process remain the first line.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from dataclasses import dataclass

POLL_INTERVAL = 0.025
MEMORY, CPU, PROCESSES = "memory", "cpu", "processes"
TREE_LIMITS = (MEMORY, CPU, PROCESSES)
SCOPE = "process_tree_accounting"
# The cell's private tmpfs mounts, whose files are memory the tree holds.
TMPFS_MOUNTS = ("/tmp", "/dev/shm")

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class TreeLimits:
    """What the tree may hold: bytes of memory, seconds of CPU time, processes at once;
    and how often the tree is sampled."""

    memory_bytes: int
    cpu_seconds: float
    max_processes: int
    poll_interval: float = POLL_INTERVAL


@dataclass(frozen=True)
class ProcStat:
    """One process, as its ``/proc/PID/stat`` reads."""

    ppid: int
    cpu_ticks: int  # its own user and system time, plus its reaped children's
    rss_pages: int


def parse_stat(text: str) -> ProcStat:
    """Read ``/proc/PID/stat``; the command name (in parentheses) may hold anything."""
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is the state (field 3 of proc(5)); field n is fields[n - 3]
    ticks = sum(int(fields[n - 3]) for n in (14, 15, 16, 17))
    return ProcStat(ppid=int(fields[1]), cpu_ticks=ticks, rss_pages=int(fields[21]))


def _read(proc: int, path: str) -> str | None:
    """A file under the procfs handle ``proc``, or None once its process is gone."""
    try:
        fd = os.open(path, os.O_RDONLY, dir_fd=proc)
    except OSError:
        return None
    try:
        return os.read(fd, 1 << 16).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def process_table(proc: int) -> dict[int, ProcStat]:
    """Every process the procfs handle lists, by PID (those that vanish are left out)."""
    table = {}
    for name in os.listdir(proc):
        if name.isdigit():
            text = _read(proc, f"{name}/stat")
            if text:
                with contextlib.suppress(ValueError, IndexError):
                    table[int(name)] = parse_stat(text)
    return table


def tree(table: dict[int, ProcStat], root: int) -> list[int]:
    """``root`` and all its descendants in ``table`` (empty when ``root`` is not there)."""
    if root not in table:
        return []
    children: dict[int, list[int]] = {}
    for pid, stat in table.items():
        children.setdefault(stat.ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def pss_bytes(proc: int, pids: list[int]) -> int | None:
    """The proportional set size of ``pids`` (the tree, its root first), or None where
    the kernel does not show it for the root (an old kernel, or the root just ended)."""
    total = 0
    for n, pid in enumerate(pids):
        text = _read(proc, f"{pid}/smaps_rollup")
        if text is None and n == 0:
            return None
        for line in (text or "").splitlines():  # a zombie's is empty: it holds no memory
            if line.startswith("Pss:"):
                total += int(line.split()[1]) * 1024
                break
    return total


def tmpfs_bytes(mounts: tuple[str, ...] = TMPFS_MOUNTS) -> int:
    """What the cell's tmpfs mounts hold (they live in memory)."""
    total = 0
    for path in mounts:
        with contextlib.suppress(OSError):
            found = os.statvfs(path)
            total += (found.f_blocks - found.f_bfree) * found.f_frsize
    return total


def passed(limits: TreeLimits, proc: int, root: int, table: dict[int, ProcStat]) -> str | None:
    """The first limit the tree of ``root`` is past, or None."""
    pids = tree(table, root)
    if len(pids) > limits.max_processes:
        return PROCESSES
    if sum(table[p].cpu_ticks for p in pids) / _TICK > limits.cpu_seconds:
        return CPU
    files = tmpfs_bytes()
    resident = sum(table[p].rss_pages for p in pids) * _PAGE
    if resident + files > limits.memory_bytes:
        shared = pss_bytes(proc, pids)
        if (resident if shared is None else shared) + files > limits.memory_bytes:
            return MEMORY
    return None


def watch(pid: int, limits: TreeLimits, proc: int) -> tuple[str | None, int, float]:
    """Wait for the process ``pid`` (the init of the cell's namespace) to end, killing it,
    and so its whole tree, once the tree passes a limit. (The limit passed or None, the
    wait status, and the CPU seconds ``pid`` and the children it reaped used.)
    Guaranteed: a limit is not passed for longer than about one poll interval plus the
    time one sample takes, except as the module's docstring says."""
    pidfd = os.pidfd_open(pid)
    hit = None
    try:
        while not select.select([pidfd], [], [], limits.poll_interval)[0]:
            hit = passed(limits, proc, pid, process_table(proc))
            if hit is not None:
                os.kill(pid, signal.SIGKILL)
                break
    finally:
        os.close(pidfd)
    _, status, usage = os.wait4(pid, 0)
    return hit, status, usage.ru_utime + usage.ru_stime
