"""One node's group of worker processes: start them, see each exit at once, stop them all.

Each worker is started in its own session (``start_new_session=True``), so it leads a process
group holding it and anything it starts; stopping a worker signals the whole group. A waiter
thread per worker blocks in ``wait()`` and queues a :class:`~launcher.failure.RankExit` the
moment the worker ends, so exits arrive in the order they happened and no zombie remains.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Set, Tuple

from disttorch._error_file import read_error_file

from . import guardian, output, reaper
from .failure import RankExit, recorded_before

#: Longest time :meth:`WorkerGroup.stop` waits, after SIGKILL, for the workers and their output.
_DRAIN_S = 5.0
#: A look at the workers' states more than this much later than the caller looks (``newly_frozen``'s
#: ``every``) means the launcher itself was stopped (a whole job suspended) or starved: the time
#: nobody looked is not counted as the workers' stop (it may not have been one).
_LOOK_SLACK_S = 0.1


@dataclass
class WorkerSpec:
    """How to start one worker."""

    rank: int
    local_rank: int
    node_rank: int
    cmd: List[str]
    env: Dict[str, str]
    error_file: str
    stdout_console: Optional[output.Console]  # None: not shown (redirected or filtered)
    stderr_console: Optional[output.Console]
    stdout_log: Optional[str]
    stderr_log: Optional[str]


class WorkerGroup:
    """The worker processes of one attempt on this node.

    ``exits`` is a queue of :class:`RankExit`, one per worker, in the order they ended.
    ``foreign_children`` are child pids of this process that the group must never reap.
    """

    def __init__(
        self,
        specs: List[WorkerSpec],
        foreign_children: Set[int],
        on_start: Optional[Callable[[int], None]] = None,
    ) -> None:
        self.specs = specs
        self._on_start = on_start  # told each worker's pid (the launcher's guardian watches them)
        self._foreign = foreign_children  # children of this process that are none of our business
        self.exits: "queue.Queue[RankExit]" = queue.Queue()
        self.ended: Dict[int, RankExit] = {}  # local rank -> exit, filled by the waiters
        self._procs: List[subprocess.Popen] = []
        self._waiters: List[threading.Thread] = []
        self._pumps: List[threading.Thread] = []
        self._stopping_since: Optional[float] = None
        self._frozen_since: Dict[int, float] = {}  # local rank -> when first seen stopped by a signal
        self._frozen_told: Set[int] = set()
        self._last_look = 0.0  # time.monotonic() of the last newly_frozen
        self._host = socket.gethostname()

    def start(self, stop: Optional[Callable[[], bool]] = None) -> None:
        """Start every worker with its output pumps and its waiter thread.

        ``stop``: asked before each worker starts; once it answers True (a signal came) no
        further worker is started, so that starting many ranks never delays a SIGTERM or a
        Ctrl-C (the caller stops those already started)."""
        for spec in self.specs:
            if stop is not None and stop():
                return
            proc = subprocess.Popen(
                spec.cmd,
                env=spec.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
            )
            self._procs.append(proc)
            if self._on_start is not None:
                self._on_start(proc.pid)
            prefix = f"[rank{spec.rank}]: ".encode()
            pumps = [
                output.LinePump(proc.stdout, prefix, spec.stdout_console, spec.stdout_log),
                output.LinePump(proc.stderr, prefix, spec.stderr_console, spec.stderr_log),
            ]
            waiter = threading.Thread(
                target=self._wait, args=(spec, proc), name=f"wait rank{spec.rank}", daemon=True
            )
            for thread in (*pumps, waiter):
                thread.start()
            self._pumps += pumps
            self._waiters.append(waiter)

    def _wait(self, spec: WorkerSpec, proc: subprocess.Popen) -> None:
        returncode = proc.wait()
        now = time.time()
        stopping = self._stopping_since
        record = read_error_file(spec.error_file)
        stopped = stopping is not None and now >= stopping and returncode != 0
        # one that had recorded its failure before the stop was ending of it: it failed, as it said
        exiting = stopped and recorded_before(record, stopping)
        ended = RankExit(
            rank=spec.rank,
            local_rank=spec.local_rank,
            node_rank=spec.node_rank,
            host=self._host,
            pid=proc.pid,
            returncode=returncode,
            time=now,
            stopped=stopped and not exiting,
            exiting=exiting,
            frozen=spec.local_rank in self._frozen_since,
            record=record,
        )
        self.ended[spec.local_rank] = ended
        self.exits.put(ended)

    def frozen_ranks(self) -> Set[int]:
        """The local ranks last seen stopped by a signal (see :meth:`newly_frozen`)."""
        return set(self._frozen_since)

    def newly_frozen(self, at_least: float, every: float = 0.0) -> List[Tuple[WorkerSpec, int, float]]:
        """The running workers stopped by a signal (SIGSTOP, SIGTSTP, ...) for ``at_least``
        seconds or more that no earlier call returned since they last ran: (spec, pid, seconds).
        ``every``: how often the caller looks (at most)."""
        found = []
        now = time.monotonic()
        unseen = now - self._last_look - every - _LOOK_SLACK_S
        if unseen > 0:  # not seen stopped meanwhile: the launcher may have been stopped too
            for rank in self._frozen_since:
                self._frozen_since[rank] += unseen
        self._last_look = now
        for spec, proc in zip(self.specs, self._procs):
            rank = spec.local_rank
            if proc.returncode is not None or not guardian.stopped(proc.pid):
                self._frozen_since.pop(rank, None)
                self._frozen_told.discard(rank)
                continue
            since = self._frozen_since.setdefault(rank, now)
            if now - since >= at_least and rank not in self._frozen_told:
                self._frozen_told.add(rank)
                found.append((spec, proc.pid, now - since))
        return found

    def stalled(self) -> List[Tuple[WorkerSpec, int, float]]:
        """The running workers stopped by a signal (as :meth:`newly_frozen` last saw them, and
        still now) as (spec, pid, seconds stopped), longest first; ``[]`` when the group is paused
        whole (every worker stopped, none ended: a job paused on purpose with ``kill -STOP``
        waits for ``SIGCONT``)."""
        now = time.monotonic()
        running = [(s, p) for s, p in zip(self.specs, self._procs) if s.local_rank not in self.ended]
        stopped = [
            (s, p.pid, now - self._frozen_since[s.local_rank])
            for s, p in running
            if s.local_rank in self._frozen_since and guardian.stopped(p.pid)  # not continued since
        ]
        if not self.ended and len(stopped) == len(self.specs):
            return []
        return sorted(stopped, key=lambda found: -found[2])

    def dump_stacks(self, wait: float = 0.5) -> None:
        """Ask every running worker to print its Python stacks (SIGUSR1, which launcher.bootstrap
        hands to faulthandler), then give the output ``wait`` seconds to arrive."""
        running = [p for p in self._procs if p.returncode is None]
        for proc in running:
            try:
                os.kill(proc.pid, signal.SIGUSR1)  # the worker only: its children may not handle SIGUSR1
            except ProcessLookupError:
                pass
        if running:
            time.sleep(wait)

    def stop(self, grace: float, hurry: Optional[threading.Event] = None) -> None:
        """Stop every worker and everything it started: SIGTERM to each process group, up to
        ``grace`` seconds for them to end (cut short when ``hurry`` is set), then SIGKILL; once
        every worker is reaped, SIGKILL to what they started that left their groups (adopted by
        this subreaper: a daemon in a session of its own holding a worker's output open).
        Returns when every worker is reaped and its output is drained (at most 5 s more)."""
        self._stopping_since = time.time()
        self._signal_groups(signal.SIGTERM)
        deadline = time.monotonic() + grace
        leaders = {p.pid for p in self._procs}
        while time.monotonic() < deadline and not (hurry is not None and hurry.is_set()):
            reaper.reap_exited(keep=self._foreign | leaders)  # adopted descendants must not linger as zombies
            if not any(self._group_alive(p.pid) for p in self._procs):
                break
            time.sleep(0.02)
        self._signal_groups(signal.SIGKILL)
        deadline = time.monotonic() + _DRAIN_S
        for thread in self._waiters:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.all_reaped():
            reaper.reap_leftovers(keep=self._foreign)
        for thread in self._pumps:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def all_reaped(self) -> bool:
        """Has every worker been waited for (so no waiter thread still needs its exit status)?"""
        return len(self.ended) == len(self._procs)

    def _signal_groups(self, sig: int) -> None:
        for proc in self._procs:
            try:
                os.killpg(proc.pid, sig)  # the worker leads its own group (its own session)
                if sig == signal.SIGTERM:
                    os.killpg(proc.pid, signal.SIGCONT)  # a frozen (SIGSTOPped) worker must see it too
            except (ProcessLookupError, PermissionError):
                pass  # the whole group is gone already

    def _group_alive(self, pgid: int) -> bool:
        if any(p.pid == pgid and p.returncode is None for p in self._procs):
            return True
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
