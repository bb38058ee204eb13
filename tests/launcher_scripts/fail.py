"""Test worker: every rank records its pid, then one rank fails in the way argv asks.

usage: fail.py PID_DIR MODE FAILING_RANK
MODE: raise (uncaught ValueError), exit3 (os._exit(3)), kill9 (SIGKILL itself),
segv (a crash in native code), sleep (nobody fails), lone (nobody fails, no grandchildren),
stubborn (like raise, but the other ranks ignore SIGTERM), cascade (like kill9, and the other
ranks raise as soon as they see the failing rank gone, as ranks that lose a peer do).
Every other rank starts a grandchild process (its pid recorded too, except with lone) and
sleeps up to 60 s, so the launcher must stop them and everything they started.
"""

import os
import signal
import subprocess
import sys
import time

pid_dir, mode, failing = sys.argv[1], sys.argv[2], int(sys.argv[3])
rank = int(os.environ["RANK"])


def record(name, pid):
    with open(os.path.join(pid_dir, f"{name}.pid.tmp"), "w") as f:
        f.write(str(pid))
    os.replace(os.path.join(pid_dir, f"{name}.pid.tmp"), os.path.join(pid_dir, f"{name}.pid"))


def alive(pid):
    """Whether ``pid`` runs (not a zombie); a process reaped between two reads is gone too."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" not in f.read()
    except OSError:  # FileNotFoundError, or ProcessLookupError mid-read
        return False


def deep_failure():
    raise ValueError(f"rank {rank} cannot go on")


if rank == failing and mode not in ("sleep", "lone"):
    record(f"rank{rank}", os.getpid())
    deadline = time.monotonic() + 30
    world = int(os.environ["WORLD_SIZE"])
    while len([n for n in os.listdir(pid_dir) if n.startswith("rank") and n.endswith(".pid")]) < world:
        assert time.monotonic() < deadline, "the other ranks did not start within 30 s"
        time.sleep(0.05)  # fail only once every rank runs (and has started its grandchild)
    if mode in ("raise", "stubborn"):
        deep_failure()
    elif mode == "exit3":
        os._exit(3)
    elif mode in ("kill9", "cascade"):
        os.kill(os.getpid(), 9)
    elif mode == "segv":
        import ctypes

        ctypes.string_at(0)
else:
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode != "lone":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        record(f"child{rank}", child.pid)
    record(f"rank{rank}", os.getpid())
    print(f"rank {rank} waiting", flush=True)
    if mode == "cascade":
        peer = os.path.join(pid_dir, f"rank{failing}.pid")
        while not os.path.exists(peer):
            time.sleep(0.01)
        while alive(int(open(peer).read())):
            time.sleep(0.01)
        raise ConnectionError(f"rank {rank} lost its peer rank {failing}")
    time.sleep(60)
