"""Driver: REPS times, fork WORLD ranks that run one operation and end with ``os._exit``
right after it returns; print how many repetitions lost data or failed.

    python exit_right_after.py KIND REPS      KIND: barrier | broadcast | broadcast_shm | send | send_big | isend
"""

import os
import socket
import sys
import traceback

import numpy as np

import disttorch.distributed as dist

dist.init_process_group  # (its floors load here, once, not in every forked rank)

WORLD = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(kind: str, rank: int, port: int) -> int:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    x = np.ones(4, np.float32)
    dist.all_reduce(x)
    if kind == "barrier":
        dist.barrier()
        return 0
    if kind.startswith("broadcast"):
        n = 8 if kind == "broadcast" else 32768  # 128 KiB goes through shared memory
        y = np.full(n, 5.0 if rank == 0 else 0.0, np.float32)
        dist.broadcast(y, src=0)
        return 0 if y.min() == 5.0 else 3
    n = 8 if kind in ("send", "isend") else 1 << 20  # 4 MiB: a zero-copy frame
    if rank == 0:
        y = np.full(n, 7.0, np.float32)
        if kind == "isend":
            dist.isend(y, dst=1).wait()
        else:
            dist.send(y, dst=1)
    elif rank == 1:
        z = np.zeros(n, np.float32)
        dist.recv(z, src=0)
        return 0 if z.min() == 7.0 else 3
    return 0


def main() -> None:
    kind, reps = sys.argv[1], int(sys.argv[2])
    failures = []
    for rep in range(reps):
        port = free_port()
        pids = []
        for rank in range(WORLD):
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = rank_main(kind, rank, port)
                except BaseException:  # noqa: BLE001 - reported through the exit code
                    traceback.print_exc()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)  # right after the operation returned
            pids.append(pid)
        codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
        if any(codes):
            failures.append((rep, codes))
    print(f"FAILURES {len(failures)} {failures}", flush=True)


if __name__ == "__main__":
    main()
