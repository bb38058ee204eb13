"""Helpers for the launcher tests: run ``python -m disttorch.launcher`` for real and inspect what it left."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

import psutil

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent


def launcher_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment for a launcher under test: the checkout on PYTHONPATH, no inherited job variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DISTTORCH_", "TORCHELASTIC_", "OMP_", "OPENBLAS_", "MKL_"))
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra or {})
    return env


def command(*args: str) -> List[str]:
    return [sys.executable, "-m", "disttorch.launcher", *map(str, args)]


def launch(
    *args: str, timeout: float = 60, env: Optional[Dict[str, str]] = None, cwd: Optional[Path] = None
) -> subprocess.CompletedProcess:
    """Run the launcher to its end; returns the completed process (text stdout/stderr)."""
    return subprocess.run(
        command(*args),
        cwd=cwd or ROOT,
        env=launcher_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start(*args: str, env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
    """Start the launcher in the background (text pipes)."""
    return subprocess.Popen(
        command(*args),
        cwd=ROOT,
        env=launcher_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


class StderrClock(threading.Thread):
    """Reads a process's stderr, remembering when (time.time()) each line arrived."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []

    def run(self) -> None:
        for line in self.stream:
            self.lines.append((time.time(), line))

    def first(self, text: str) -> float:
        return next(t for t, line in self.lines if text in line)

    def text(self) -> str:
        return "".join(line for _, line in self.lines)


def wait_for_files(directory: Path, pattern: str, count: int, timeout: float = 30) -> List[Path]:
    """Wait until ``count`` files match ``pattern`` in ``directory``; return them."""
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(directory.glob(pattern))
        if len(found) >= count:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"only {len(found)} of {count} files {pattern} appeared in {directory}")
        time.sleep(0.05)


def recorded_pids(directory: Path) -> List[int]:
    return [int(p.read_text()) for p in directory.glob("*.pid")]


def alive(pids: List[int]) -> List[int]:
    """The pids among ``pids`` that still run (zombies count as alive: nobody reaped them)."""
    living = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            if proc.is_running():
                living.append(pid)
        except psutil.NoSuchProcess:
            pass
    return living


def assert_all_gone(pids: List[int], within: float = 3.0) -> None:
    """Every pid must be gone (not even a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = alive(pids)
    assert not left, f"processes left behind: {[(p, psutil.Process(p).status()) for p in left]}"
