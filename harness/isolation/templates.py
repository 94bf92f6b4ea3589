"""Sandboxes a process keeps from one run to the next.

A site's worker runs one cell per job, and a sandbox's start (bubblewrap, the zygote's
interpreter and imports, the tree limits' trial cells and the probe cell) costs more than a
small cell. :class:`Templates` keeps a started sandbox after a run that ended cleanly and
hands it to the next run that would start the same one, so that its cells fork from a
template that is already up.

Nothing of an agent's crosses through it: the template (the zygote) never runs agent code,
each cell is forked from it into fresh namespaces, limits and a fresh filesystem view, and
a sandbox is kept only when it is alive, no cell of it is open and its output file is
small (``LOG_KEPT``). Two runs get the same template only when bubblewrap would be started
with the same command for both, so the same folders are shown and the same paths masked;
the capability probe's findings hold for it. A run with a model proxy starts a sandbox of
its own (the proxy's folder is bound per run).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from harness.isolation.sandbox import outside

# A sandbox whose processes wrote more than this to their shared output (a by-value
# agent's prints land there) is ended rather than kept: the file would grow job by job.
LOG_KEPT = 1 << 20

# (bubblewrap's command as it would start the sandbox, the settings, by value)
_Key = tuple[tuple[str, ...], outside.SandboxSettings, bool]


class Templates:
    """At most ``size`` idle sandboxes, the least recently used ended first. A sandbox is
    lent to one run at a time (:meth:`take`) and every one lent is handed to
    :meth:`give_back` when its run ends.
    Entries inherited through ``fork`` are dropped unclosed: they are the parent's."""

    def __init__(self, size: int = 2) -> None:
        self.size = size
        self._idle: OrderedDict[_Key, outside.Sandbox] = OrderedDict()
        self._keys: dict[int, _Key] = {}
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self.started = 0  # sandboxes made here (the tests read it)

    def take(
        self,
        *,
        binds: tuple[tuple[str, str], ...],
        hidden: list[str],
        settings: outside.SandboxSettings,
        by_value: bool,
    ) -> outside.Sandbox:
        """The idle sandbox that would be started for these, or a new one (not launched)."""
        command = outside.bwrap_command(fd=0, binds=binds, hidden=hidden, by_value=by_value)
        key: _Key = (tuple(command), settings, by_value)
        with self._lock:
            self._forget_inherited()
            sandbox = self._idle.pop(key, None)
        if sandbox is not None and not sandbox.alive:
            sandbox.close()
            sandbox = None
        if sandbox is None:
            sandbox = outside.Sandbox(
                binds=binds, hidden=hidden, settings=settings, by_value=by_value
            )
            self.started += 1
        with self._lock:
            self._keys[id(sandbox)] = key
        return sandbox

    def give_back(self, sandbox: outside.Sandbox, *, keep: bool) -> None:
        """The end of the run ``sandbox`` was lent to: kept for a later run if ``keep``
        (the run ended cleanly), it is alive with no cell open and it has not written
        more than ``LOG_KEPT`` bytes of output; else ended."""
        with self._lock:
            key = self._keys.pop(id(sandbox), None)
        keep = keep and sandbox.alive and sandbox.idle and sandbox.log_bytes <= LOG_KEPT
        if key is None or not keep:
            sandbox.close()
            return
        ended: list[outside.Sandbox] = []
        with self._lock:
            self._forget_inherited()
            replaced = self._idle.pop(key, None)
            if replaced is not None:
                ended.append(replaced)
            self._idle[key] = sandbox
            while len(self._idle) > self.size:
                ended.append(self._idle.popitem(last=False)[1])
        for old in ended:
            old.close()

    def close(self) -> None:
        """End every idle sandbox."""
        with self._lock:
            self._forget_inherited()
            ended = list(self._idle.values())
            self._idle.clear()
        for sandbox in ended:
            sandbox.close()

    def idle(self) -> list[outside.Sandbox]:
        """The sandboxes kept and not lent, the least recently used first."""
        with self._lock:
            self._forget_inherited()
            return list(self._idle.values())

    def __len__(self) -> int:
        return len(self._idle)

    def _forget_inherited(self) -> None:
        if os.getpid() != self._pid:
            self._idle.clear()
            self._keys.clear()
            self._pid = os.getpid()
