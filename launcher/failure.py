"""What happened to each rank, and the summary box printed when a job fails.

A :class:`RankExit` is one worker's end: exit code or signal, when, and what it recorded in
its error file. :func:`blame` finds the root cause: the first rank to fail, or the peer it
reported, and a rank that raised on its own before a peer reported it. :func:`format_summary`
turns the root cause (its error, the line of the user's code, its traceback) and the other
ranks' ends (one line each) into the box the launcher prints, with a hint on what to do next.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

from disttorch._error_file import LAUNCH_FAILURES_ENV, LOST_SAVE

from .devices import format_ranges

_CRASH_SIGNALS = {"SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL"}


def signal_name(number: int) -> str:
    """``9`` -> ``"SIGKILL"`` (``"signal 42"`` for numbers without a name)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass
class RankExit:
    """How one worker ended. ``returncode`` is negative for a signal, as in :mod:`subprocess`."""

    rank: int
    local_rank: int
    node_rank: int
    host: str
    pid: int
    returncode: int
    time: float  # wall-clock seconds when the launcher saw the exit
    stopped: bool = False  # ended after the launcher began stopping the group
    exiting: bool = False  # not counted as stopped: it had recorded its failure before the stop
    frozen: bool = False  # was stopped by a signal (SIGSTOP, SIGTSTP) when last looked at
    record: Optional[dict] = field(default=None)  # the rank's error file, if it wrote one
    stalled: str = ""  # why the launcher ended it: stopped by a signal too long (--stopped-timeout)

    @property
    def failed(self) -> bool:
        """Did this rank fail on its own (non-zero exit or signal, not stopped by us), or stay
        stopped by a signal until the launcher ended it (``stalled``)?"""
        return bool(self.stalled) or (self.returncode != 0 and not self.stopped)

    @property
    def failed_on_its_own(self) -> bool:
        """Did this rank fail of its own exception or fault, not by reporting a peer's failure?"""
        record = self.record or {}
        return self.failed and record.get("kind") in ("exception", "fault") and "blamed_rank" not in record

    @property
    def lost_save(self) -> str:
        """The failed ``async_save`` (s) it recorded, whose futures nobody asked (``""``: none)."""
        record = self.record or {}
        if record.get("kind") == LOST_SAVE:
            return str(record.get("error", ""))
        return str(record.get(LOST_SAVE, ""))  # (after the exception it recorded first)

    def error(self, width: int = 160) -> str:
        """The one-line error it recorded (``""`` without one), cut to ``width`` characters."""
        if (self.record or {}).get("kind") == LOST_SAVE:
            return ""  # not why it failed
        text = self.stalled or str((self.record or {}).get("error", "")).strip().split("\n")[0]
        return text if len(text) <= width else text[: width - 3] + "..."

    def how(self) -> str:
        """``"exit code 3"`` or ``"signal SIGKILL (9)"`` (``", stopped by the launcher as it
        exited"`` added for a rank that had recorded its failure before the stop)."""
        how = f"exit code {self.returncode}"
        if self.returncode < 0:
            how = f"signal {signal_name(-self.returncode)} ({-self.returncode})"
        return how + (", stopped by the launcher as it exited" if self.exiting else "")

    def status(self, cause: Optional["RankExit"] = None) -> str:
        """One word or phrase for the table of ranks; ``cause``: the rank whose failure made
        the launcher stop the others (named in the status of a rank it stopped)."""
        if self.stalled:
            return f"{self.stalled} ({self.how()})"
        if self.returncode == 0:
            return "exited 0"
        if self.stopped:
            frozen = ", which found it frozen by SIGSTOP or SIGTSTP" if self.frozen else ""
            after = f" after rank {cause.rank} failed" if cause is not None and cause is not self else ""
            return f"stopped by the launcher{after} ({self.how()}){frozen}"
        error = self.error()
        return f"failed, {self.how()}" + (f": {error}" if error else "")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "RankExit":
        return cls(**data)


def write_failures(failures: List[RankExit], exits: List[RankExit], notes: List[str]) -> None:
    """Leave the job's final failures, the root cause (see :func:`blame`) first, where
    ``LAUNCH_FAILURES_ENV`` says, if it names a file (``torch.distributed.run.run`` reads
    them back)."""
    path = os.environ.get(LAUNCH_FAILURES_ENV)
    if not path:
        return
    if failures:
        root, _ = root_cause(failures, exits)
        failures = [root, *(e for e in failures if e is not root)]
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"failures": [e.to_json() for e in failures], "notes": notes}, f)


def recorded_before(record: Optional[dict], when: float) -> bool:
    """Whether ``record`` (a rank's error file) is a failure of its own (an exception or an
    injected fault, not a lost checkpoint) that it recorded before ``when`` (``time.time()``)."""
    record = record or {}
    stamp = record.get("time")
    return record.get("kind") in ("exception", "fault") and isinstance(stamp, (int, float)) and stamp < when


def _hint(root: RankExit, reported_by: Optional[RankExit]) -> List[str]:
    record = root.record or {}
    if root.stalled:
        return [
            "no traceback: it ran nothing since a signal from outside the job stopped it; the launcher",
            f"ended it ({root.how()}). Continue a stopped rank with kill -CONT <pid> before --stopped-timeout.",
        ]
    if root.stopped:
        by = f" after rank {reported_by.rank} reported it" if reported_by is not None else ""
        if root.frozen:
            return [
                f"no traceback: the launcher stopped this rank ({root.how()}){by}: it was frozen by",
                "a signal from outside the job (SIGSTOP, or SIGTSTP: Ctrl-Z) and ran nothing since.",
            ]
        return [
            f"no traceback: the launcher stopped this rank ({root.how()}){by}: it was frozen, stuck",
            "or too slow to answer. --dump-stacks prints where each rank was before it is stopped.",
        ]
    if record.get("kind") == "fault":
        return [
            f"this was an injected fault ({record.get('fault')}); remove --inject-fault / "
            f"DISTTORCH_FAULT to run without it"
        ]
    if record.get("kind") == "exception":
        return []
    if root.returncode < 0:
        name = signal_name(-root.returncode)
        if name == "SIGKILL":
            return [
                "no traceback: killed by signal SIGKILL, which cannot be caught. Often the kernel's",
                "out-of-memory killer (check `dmesg`) or a `kill -9` from outside the job.",
            ]
        if name in _CRASH_SIGNALS:
            return [
                f"no Python exception: the process crashed in native code ({name}). Its Python",
                f"stack (faulthandler) is in the [rank{root.rank}] stderr lines above.",
            ]
        return [f"no traceback: killed by signal {name} from outside the launcher."]
    return [
        f"no traceback: the process exited with code {root.returncode} without an uncaught",
        "exception (sys.exit or os._exit in the script, or a crash in native code), or it",
        "could not record one (a full disk?): its stderr lines above show any traceback.",
    ]


def root_cause(failures: List[RankExit], exits: List[RankExit]) -> "tuple[RankExit, Optional[RankExit]]":
    """The root cause of an attempt's ``failures`` (not empty) among all its ``exits``: what
    :func:`blame` makes of the earliest failed exit. Returns (root, reporter or None)."""
    return blame(min(failures, key=lambda e: e.time), exits)


def blame(first: RankExit, ranks: List[RankExit]) -> "tuple[RankExit, Optional[RankExit]]":
    """The root cause of a failure whose first report (the earliest failed exit) is ``first``:
    the rank itself, or the peer it reported dead, silent or gone (``blamed_rank`` in its
    error file): that peer did not fail on its own earlier, so it was frozen, cut off,
    killed by the launcher, or ended too early. Returns (root, reporter or None)."""
    blamed = (first.record or {}).get("blamed_rank")
    peer = next((r for r in ranks if r.rank == blamed), None) if isinstance(blamed, int) else None
    if peer is None or peer is first:
        return first, None
    if peer.failed_on_its_own:  # it raised or met a fault, and exited after the peer that noticed
        return peer, None
    return peer, first


def format_lost_save(ended: RankExit) -> str:
    """The line naming a rank's failed ``async_save`` whose future nobody asked: the job may
    well have exited 0 (PyTorch's exit status), but that checkpoint was not written."""
    return (
        f"rank {ended.rank} lost a checkpoint: its {ended.lost_save} (nobody asked the future async_save "
        "returned, so the script went on; its exit status is its own, as with PyTorch)"
    )


def format_gave_up(causes: List[str], longest: float) -> str:
    """The line after the last allowed attempt failed: what each attempt failed of
    (``causes``, one per attempt: the root cause's error or exit, repeats counted) and how
    long the longest ran (one that fails as it starts is not mended by restarting)."""
    counts: Dict[str, int] = {}
    for cause in causes:
        counts[cause] = counts.get(cause, 0) + 1
    restarts = len(causes) - 1
    if len(counts) == 1:
        what = f"all {len(causes)} attempts failed the same way: {causes[0]}"
    else:
        what = "the attempts failed of: " + "; ".join(f"{cause} ({n}x)" for cause, n in counts.items())
    return (
        f"gave up after {restarts} restart{'s' if restarts != 1 else ''}; {what}; "
        f"every attempt ended within {longest:.1f} s of its start"
    )


def format_summary(
    root: RankExit,
    ranks: List[RankExit],
    attempt: int,
    max_restarts: int,
    reported_by: Optional[RankExit] = None,
) -> str:
    """The failure box: the root cause in full, then one line per other rank. ``reported_by``:
    the rank that reported ``root`` dead or unresponsive (``root`` did not fail on its own)."""
    stamp = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(root.time)) + f".{int(root.time % 1 * 1000):03d}"
    )
    bar = "=" * 72
    if root.stalled:
        headline = root.stalled
    elif reported_by is None:
        headline = f"rank {root.rank} was the first to fail" + (f": {root.error()}" if root.error() else "")
    elif root.returncode >= 0 and not root.stopped:  # it exited by itself (sys.exit, os._exit)
        ended = "ended" if root.returncode == 0 else f"exited with code {root.returncode}"
        headline = f"rank {root.rank} {ended} while rank {reported_by.rank} still needed it"
    else:
        headline = f"rank {root.rank} stopped responding or died (reported by rank {reported_by.rank})"
    lines = [
        bar,
        f"job failed (attempt {attempt + 1} of {max_restarts + 1}): {headline}",
        "root cause:",
        f"  rank       : {root.rank} (local rank {root.local_rank} on node {root.node_rank})",
        f"  host       : {root.host}",
        f"  pid        : {root.pid}",
        f"  exit       : {root.how()}",
        f"  time       : {stamp}",
    ]
    if reported_by is not None:
        lines.append(f"  reported   : by rank {reported_by.rank}: {reported_by.error()}")
    record = root.record or {}
    if record.get("error") and (reported_by is not None or len(root.error(width=1000)) > len(root.error())):
        lines.append(f"  error      : {root.error(width=1000)}")  # not already whole in the headline
    if record.get("where"):
        lines.append(f"  where      : {record['where']}")
    shown = record.get("user_traceback") or record.get("traceback")  # the full one is in the rank's log
    if shown:
        lines.append("  traceback  :")
        lines.extend("    " + line for line in shown.rstrip("\n").split("\n"))
    lines.extend("  " + line for line in _hint(root, reported_by))
    others = sorted((r for r in ranks if r.rank != root.rank), key=lambda r: r.rank)
    if others:
        lines.append("other ranks:")
        same = root.error() and root.returncode
        alike: Dict[str, List[int]] = {}  # ranks that ended the same way share a line
        for r in others:
            if r.failed and same and (r.error(), r.returncode) == (root.error(), root.returncode):
                alike.setdefault(f"failed the same way as rank {root.rank}", []).append(r.rank)
            elif r.failed:
                lines.append(f"  rank {r.rank:<4} (node {r.node_rank}, pid {r.pid}): {r.status()}")
            else:
                alike.setdefault(r.status(cause=root), []).append(r.rank)
        for status, numbers in alike.items():
            label = f"rank {numbers[0]:<4}" if len(numbers) == 1 else f"ranks {format_ranges(numbers)}"
            lines.append(f"  {label}: {status}")
    lines.append(bar)
    return "\n".join(lines)
