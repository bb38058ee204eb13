"""The node agent: runs the worker group attempt after attempt, watches it, reports failures.

One attempt: meet the other nodes (rendezvous), start this node's workers, wait until they
all exit 0, one fails, another node announces a failure, a rank stays stopped by a signal for
``--stopped-timeout`` seconds (unless the node is paused whole: every rank stopped, none ended;
the launcher ends it, a failure that restarts as any other), or the launcher gets SIGINT, SIGTERM or
SIGHUP; after a failure, give the other ranks ``--stop-delay`` seconds to end on
their own (what they report joins the summary); then stop the group (SIGTERM, ``--stop-grace``,
SIGKILL) and gather every rank's exit. A failure prints the
summary box (root cause = the rank that failed first) and, while ``--max-restarts`` allows,
starts the next attempt with ``DISTTORCH_RESTART_COUNT`` one higher.

Exit status: 0 on success, 1 on failure, 128 + signal number when interrupted.
"""

from __future__ import annotations

import contextlib
import os
import queue
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from typing import Callable, Dict, Iterator, List, Optional, Tuple, TypeVar

from . import output, reaper
from .cli import LaunchConfig
from .devices import blas_note, format_plan, format_ranges, plan_cores, plan_threads
from .failure import (
    RankExit,
    format_gave_up,
    format_lost_save,
    format_summary,
    root_cause,
    signal_name,
    write_failures,
)
from .guardian import Guardian
from .output import say
from .rendezvous import LocalRendezvous, Rendezvous, RendezvousError, StoreRendezvous
from .worker_env import SIGNALS_TO_HANDLE, WorldInfo, worker_env
from .workers import WorkerGroup, WorkerSpec

_HANDLED_SIGNALS = tuple(getattr(signal, name) for name in SIGNALS_TO_HANDLE.split(","))
#: A rank that exited 0 this long before the others is named (they may be waiting for it).
EARLY_EXIT_NOTE_S = 5.0
#: A rank stopped by a signal (SIGSTOP, SIGTSTP) this long is named (the others wait for it).
FROZEN_NOTE_S = 2.0
T = TypeVar("T")


class _Interrupted(BaseException):
    """Raised while no workers run, when a signal came (see :meth:`Agent._interruptible_wait`).
    A BaseException, like KeyboardInterrupt, so no ``except Exception`` swallows it."""


class Agent:
    """Runs one node's part of a job described by ``config``; :meth:`run` returns the exit status."""

    def __init__(self, config: LaunchConfig) -> None:
        self.config = config
        self.plan = plan_cores(config.nproc, config.cores_per_rank, config.bind_cores)
        self.threads = plan_threads(self.plan, os.environ)
        self.secret = config.job_secret or secrets.token_hex(32)  # single node: a fresh one per job
        self.signal: Optional[int] = None
        self.hurry = threading.Event()  # a second signal: skip the grace period
        self._interruptible = False  # a signal raises _Interrupted (waiting for the other nodes)
        self._store_failed = False  # said once: every later store operation fails the same way
        self._run_dir: Optional[str] = None
        self.guardian: Optional[Guardian] = None
        self._log_root = config.log_dir
        wants_logs = any(config.redirects.values()) or any(config.tee.values())
        if self._log_root is None and wants_logs:
            self._log_root = tempfile.mkdtemp(prefix="disttorch-logs-")

    def run(self) -> int:
        """Run the job to its end; return 0 (success), 1 (failure) or 128 + signal (interrupted).

        A signal (Ctrl-C's SIGINT, SIGTERM, SIGHUP) at any moment ends the job: the workers
        are stopped and reaped, the run directory removed, and the status is 128 + signal."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in _HANDLED_SIGNALS}
        rdzv: Optional[Rendezvous] = None
        try:
            self._run_dir = reaper.make_run_dir()
            reaper.become_subreaper()
            self.guardian = Guardian()  # ends the workers' process trees even if this process is killed
            self.guardian.remove_at_end(self._run_dir)
            self._own_children = reaper.children()  # not ours to reap at teardown
            self._causes: List[Tuple[str, float]] = []  # each failed attempt: root cause, seconds it ran
            with self._interruptible_wait():
                rdzv = (
                    StoreRendezvous(self.config, say)
                    if self.config.nnodes > 1
                    else LocalRendezvous(self.config)
                )
            for attempt in range(self.config.max_restarts + 1):
                status = self._attempt(rdzv, attempt)
                if status is not None:
                    return status
            return 1
        except _Interrupted:
            name = signal_name(self.signal or signal.SIGINT)
            say(f"received {name} while no workers were running; exiting")
            if rdzv is not None:
                self._try(lambda: rdzv.abort(f"node {self.config.node_rank} was interrupted by {name}"))
            return 128 + (self.signal or signal.SIGINT)
        except RendezvousError as exc:
            say(f"the nodes could not meet: {exc}")
            return 1
        finally:  # (a second signal meanwhile only hurries: the handlers are restored last)
            if rdzv is not None:
                rdzv.close()
            if self.guardian is not None:
                self.guardian.close()
            if self._run_dir is not None:
                shutil.rmtree(self._run_dir, ignore_errors=True)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.signal is not None:
            self.hurry.set()
            return
        self.signal = signum
        if self._interruptible:
            raise _Interrupted()

    @contextlib.contextmanager
    def _interruptible_wait(self) -> Iterator[None]:
        """A wait for the other nodes, which a signal ends at once (:class:`_Interrupted`).
        Elsewhere a signal is only recorded, and acted on where the agent checks it: before
        the workers start (:meth:`_check_signal`), and while they run (:meth:`_watch`)."""
        self._check_signal()
        self._interruptible = True
        try:
            yield
        finally:
            self._interruptible = False

    def _check_signal(self) -> None:
        """Raise :class:`_Interrupted` if a signal came while no workers ran."""
        if self.signal is not None:
            raise _Interrupted()

    # ------------------------------------------------------------------ one attempt

    def _attempt(self, rdzv: Rendezvous, attempt: int) -> Optional[int]:
        """Run attempt ``attempt``; return the exit status, or ``None`` to restart."""
        c = self.config
        with self._interruptible_wait():
            world = rdzv.next_round(attempt)
        if attempt == 0:
            self._print_start(world)
        else:
            say(
                f"restarting the worker group: restart {attempt} of {c.max_restarts} "
                f"(DISTTORCH_RESTART_COUNT={attempt}, MASTER_PORT={world.master_port})"
            )
        if c.trace_dir is not None:
            from .trace_merge import prepare_trace_dir

            prepare_trace_dir(c.trace_dir)
        stalled: Dict[int, str] = {}
        group = WorkerGroup(
            [self._spec(world, lr) for lr in range(c.nproc)], self._own_children, on_start=self.guardian.watch
        )
        started = time.monotonic()
        self._check_signal()
        try:
            group.start(lambda: self.signal is not None)
            outcome, note, stalled = self._watch(group, rdzv, attempt)
            if outcome not in ("succeeded", "remote") and c.nnodes > 1:
                self._try(lambda: rdzv.announce_failure(attempt))
            if outcome in ("failed", "remote"):
                self._let_others_end(group)
                if c.dump_stacks and not group.all_reaped() and self.signal is None:
                    say("ranks still running after the failure print their Python stacks (--dump-stacks):")
                    group.dump_stacks()
        finally:  # also when starting failed half-way: nothing may outlive the attempt
            group.stop(c.stop_grace, self.hurry)
        for lr, why in stalled.items():  # ended by the launcher, a failure of their own
            if lr in group.ended:
                group.ended[lr].stalled = why
        local = [group.ended[lr] for lr in sorted(group.ended)]
        if self.signal is not None and c.nnodes > 1:  # the other nodes do not restart without this one
            self._try(lambda: rdzv.abort(note or f"node {c.node_rank} was interrupted"))
        gathered = self._try(lambda: rdzv.gather(attempt, local, note))
        exits, notes = (
            gathered if gathered is not None else (local, [note or "lost contact with the other nodes"])
        )
        self._merge_traces()
        if self.signal is not None:
            say(f"received {signal_name(self.signal)}: stopped all workers")
            return 128 + self.signal
        for lost in (e for e in exits if e.lost_save):
            say(format_lost_save(lost))
        failures = [e for e in exits if e.failed]
        if not failures and not notes:
            who = f"all {len(exits)} ranks" if len(exits) > 1 else "the rank"
            say(f"{who} exited 0 ({time.monotonic() - started:.2f} s)")
            return 0
        cause = self._print_failure(failures, exits, notes, attempt)
        self._causes.append((cause, time.monotonic() - started))
        if attempt < c.max_restarts:  # (a node cut off restarts too: the next round waits for it)
            return None
        if attempt > 0:
            say(format_gave_up([c for c, _ in self._causes], max(s for _, s in self._causes)))
        write_failures(failures, exits, notes)
        return 1

    def _watch(
        self, group: WorkerGroup, rdzv: Rendezvous, attempt: int
    ) -> Tuple[str, Optional[str], Dict[int, str]]:
        """Wait for the group's end: ``("succeeded"|"failed"|"remote"|"lost"|"signal"|"stalled", note,
        stalled)``; ``stalled``: local rank -> why the launcher ends it (``"stalled"`` only)."""
        c = self.config
        remaining = c.nproc
        next_poll = time.monotonic() + c.monitor_interval
        done: List[RankExit] = []  # ranks that exited 0 while others still run
        while True:
            if self.signal is not None:
                return "signal", f"node {c.node_rank} was interrupted by {signal_name(self.signal)}", {}
            try:
                ended: Optional[RankExit] = group.exits.get(timeout=c.monitor_interval)
            except queue.Empty:
                ended = None
            restarted = self.guardian.ensure_running()
            if restarted is not None:
                self._own_children.add(restarted)  # the launcher's, not a worker's leftover
            if ended is not None:
                if ended.returncode != 0:
                    return "failed", None, {}
                remaining -= 1
                if remaining == 0:
                    return "succeeded", None, {}
                done.append(ended)
            for spec, pid, seconds in group.newly_frozen(FROZEN_NOTE_S, c.monitor_interval):
                say(
                    f"rank {spec.rank} (pid {pid}) has been stopped by a signal (SIGSTOP, or SIGTSTP: "
                    f"Ctrl-Z) for {seconds:.0f} s: it runs nothing until it gets SIGCONT (kill -CONT {pid}), "
                    "and ranks waiting for it (init_process_group, a collective) wait until their timeout"
                    + (
                        f"; unless every rank of this node is stopped (paused), the launcher ends it after "
                        f"{c.stopped_timeout:g} s (--stopped-timeout)"
                        if c.stopped_timeout
                        else ""
                    )
                )
            stalled = self._stalled(group)
            if stalled:
                return "stalled", None, stalled
            if done and time.time() - done[0].time >= EARLY_EXIT_NOTE_S:
                self._note_early_exits(group, done)
                done = []
            if c.nnodes > 1 and time.monotonic() >= next_poll:
                next_poll = time.monotonic() + c.monitor_interval
                failed = self._try(lambda: rdzv.remote_failure(attempt))
                if failed is None:
                    return "lost", f"node {c.node_rank} lost contact with the agents' store", {}
                if failed:
                    return "remote", None, {}
                silent = self._try(lambda: rdzv.silent_nodes(attempt))
                if silent:
                    nodes = ", ".join(map(str, silent))
                    return (
                        "lost",
                        f"node(s) {nodes} stopped answering in the agents' store for "
                        f"{c.node_timeout:g} s (--node-timeout): a launcher killed, or its host or the "
                        "network to it down",
                        {},
                    )

    def _stalled(self, group: WorkerGroup) -> Dict[int, str]:
        """Once a rank of this node has stayed stopped by a signal for ``--stopped-timeout``
        seconds (the node not paused whole): local rank -> why the launcher ends it, for every
        rank stopped now; ``{}`` while that is not so. No rank is left to continue it, or the ranks
        still running wait for it where nothing notices a frozen peer (init_process_group, a
        store's wait): a frozen peer in a collective is reported by the others within seconds."""
        timeout = self.config.stopped_timeout
        stopped = group.stalled()
        if not timeout or not stopped or stopped[0][2] < timeout:
            return {}
        frozen = {spec.local_rank for spec, _, _ in stopped}
        running = [
            s.rank for s in group.specs if s.local_rank not in group.ended and s.local_rank not in frozen
        ]
        if running:
            context = (
                f"while rank(s) {format_ranges(running)} still ran: they wait for it until their own timeout "
                "where nothing notices a frozen peer (init_process_group, a store's wait)"
            )
        else:
            ended = format_ranges(sorted(e.rank for e in group.ended.values()))
            context = f"while rank(s) {ended} had ended: nothing could continue it"
        return {
            spec.local_rank: (
                f"rank {spec.rank} (pid {pid}) stayed stopped by a signal (SIGSTOP, or SIGTSTP: Ctrl-Z) for "
                f"{seconds:.1f} s {context}, so the launcher ended it (--stopped-timeout {timeout:g}; raise it, "
                "or 0 to wait for ever)"
            )
            for spec, pid, seconds in stopped
        }

    def _note_early_exits(self, group: WorkerGroup, done: List[RankExit]) -> None:
        """Say which ranks exited 0 while others still run: a rank that never joined the group,
        or left it early, makes the others wait (in init_process_group or a collective) until
        their timeout, and the launcher is the one that knows it has gone."""
        running = sorted(s.rank for s in group.specs if s.local_rank not in group.ended)
        if not running:
            return
        gone = format_ranges(sorted(e.rank for e in done))
        frozen = [s for s in group.specs if s.local_rank in group.frozen_ranks()]
        if len(frozen) == len(running):  # nothing waits for the ranks that left: the rest are frozen
            say(
                f"rank(s) {gone} exited 0 and every rank still running ({format_ranges(running)}) is stopped "
                "by a signal (SIGSTOP, or SIGTSTP: Ctrl-Z): the job goes on when they get SIGCONT"
                + (
                    f", and fails if they stay stopped {self.config.stopped_timeout:g} s (--stopped-timeout)"
                    if self.config.stopped_timeout
                    else ""
                )
            )
            return
        say(
            f"rank(s) {gone} exited 0 at least {EARLY_EXIT_NOTE_S:g} s ago while rank(s) "
            f"{format_ranges(running)} still run: if those wait for {gone} (init_process_group, a "
            f"collective), they wait until their timeout. Did {gone} skip init_process_group or end early?"
        )

    def _let_others_end(self, group: WorkerGroup) -> None:
        """Give the other ranks ``--stop-delay`` seconds to notice the failure and exit on their own,
        so that what they report (e.g. which peer they lost) reaches the summary."""
        deadline = time.monotonic() + self.config.stop_delay
        while not group.all_reaped() and self.signal is None and time.monotonic() < deadline:
            time.sleep(0.02)

    def _try(self, fn: Callable[[], T]) -> Optional[T]:
        """Run a store operation; on error say so (the first time) and return ``None`` (the
        store may be gone)."""
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - any store failure means: the other nodes are unreachable
            if not self._store_failed:
                say(f"the agents' store at {self.config.master_addr}:{self.config.master_port} failed: {exc}")
            self._store_failed = True
            return None

    # ------------------------------------------------------------------ workers

    def _command(self) -> List[str]:
        c = self.config
        head = [sys.executable, "-u", "-m", "disttorch.launcher.bootstrap"]
        if c.no_python:
            return [*head, "--exec", c.script, *c.script_args]
        if c.module:
            return [*head, "-m", c.script, *c.script_args]
        return [*head, c.script, *c.script_args]

    def _spec(self, world: WorldInfo, local_rank: int) -> WorkerSpec:
        c = self.config
        rank = world.rank_offset + local_rank
        error_file = os.path.join(self._run_dir, f"attempt_{world.restart_count}", f"rank{rank}_error.json")
        elastic_error_file = os.path.join(os.path.dirname(error_file), str(rank), "error.json")
        os.makedirs(os.path.dirname(elastic_error_file), exist_ok=True)  # (torchrun's: made, not written)
        env = worker_env(
            os.environ,
            world,
            local_rank,
            c.nproc,
            role=c.role,
            max_restarts=c.max_restarts,
            secret=self.secret,
            error_file=error_file,
            trace_dir=c.trace_dir,
            faults=c.faults,
            cores=self.plan.cores[local_rank],
            threads=self.threads.env,
            as_torch=c.as_torch,
            guardian_pid=self.guardian.pid,
            elastic_error_file=elastic_error_file,
        )
        shown = c.local_ranks_filter is None or local_rank in c.local_ranks_filter
        redirected = c.redirects.get(local_rank, frozenset())
        logged = redirected | c.tee.get(local_rank, frozenset())

        def log_path(stream: str) -> Optional[str]:
            if self._log_root is None or (c.log_dir is None and stream not in logged):
                return None
            return os.path.join(
                self._log_root, world.run_id, f"attempt_{world.restart_count}", str(rank), f"{stream}.log"
            )

        return WorkerSpec(
            rank=rank,
            local_rank=local_rank,
            node_rank=world.node_rank,
            cmd=self._command() + ([f"--local-rank={local_rank}"] if c.local_rank_arg else []),
            env=env,
            error_file=error_file,
            stdout_console=output.stdout if shown and "stdout" not in redirected else None,
            stderr_console=output.stderr if shown and "stderr" not in redirected else None,
            stdout_log=log_path("stdout"),
            stderr_log=log_path("stderr"),
        )

    # ------------------------------------------------------------------ reporting

    def _print_start(self, world: WorldInfo) -> None:
        c = self.config
        ranks = list(range(world.rank_offset, world.rank_offset + c.nproc))
        nodes = f", node {c.node_rank} of {c.nnodes}" if c.nnodes > 1 else ""
        lines = [
            f"run {world.run_id}: {c.nproc} local rank{'s' if c.nproc > 1 else ''} "
            f"{ranks[0]}{f'..{ranks[-1]}' if c.nproc > 1 else ''} of world {world.world_size}"
            f"{nodes}; MASTER_ADDR={world.master_addr} MASTER_PORT={world.master_port}"
        ]
        lines += format_plan(self.plan, ranks, self.threads)
        blas = blas_note(os.environ)
        if blas is not None:
            lines.append(blas)
        if self._log_root is not None:
            lines.append(f"logs: {os.path.join(self._log_root, world.run_id)}")
        if c.faults:
            lines.append(f"fault injection: DISTTORCH_FAULT={c.faults}")
        say("\n".join(lines))

    def _print_failure(
        self, failures: List[RankExit], exits: List[RankExit], notes: List[str], attempt: int
    ) -> str:
        """Print the failure box; return its root cause in a few words, for the last line."""
        cause = "; ".join(notes)
        if failures:
            root, reporter = root_cause(failures, exits)
            text = format_summary(root, exits, attempt, self.config.max_restarts, reported_by=reporter)
            cause = root.error(width=120) or root.how()
        else:
            text = "\n".join(
                [
                    "=" * 72,
                    f"job stopped (attempt {attempt + 1} of {self.config.max_restarts + 1}), no rank failed:",
                ]
                + [f"  {n}" for n in notes]
                + ["=" * 72]
            )
        if failures and notes:
            text += "\n" + "\n".join(f"note: {n}" for n in notes)
        say(text)
        return cause

    def _merge_traces(self) -> None:
        if self.config.trace_dir is None:
            return
        from .trace_merge import merge_traces

        try:
            merged = merge_traces(self.config.trace_dir)
        except (OSError, ValueError) as exc:
            say(f"could not merge traces in {self.config.trace_dir}: {exc}")
            return
        if merged is not None:
            say(f"merged traces into {merged} (open it in https://ui.perfetto.dev or chrome://tracing)")
