"""Test worker: rank 0 listens on MASTER_ADDR:MASTER_PORT, the others connect and send their rank.

Proves that the launcher's MASTER_PORT is free and shared by the job's ranks (two jobs at once
must not clash). Rank 0 prints the ranks it heard from.
"""

import os
import socket
import time

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
run_id = os.environ["DISTTORCH_RUN_ID"]
if rank == 0:
    server = socket.create_server((addr, port))
    heard = []
    while len(heard) < world - 1:
        conn, _ = server.accept()
        with conn:
            message = conn.recv(100).decode()
            assert message.split()[1] == run_id, f"rank 0 of run {run_id} got {message!r} from another job"
            heard.append(int(message.split()[0]))
    print("heard", sorted(heard), "port", port, flush=True)
else:
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection((addr, port), timeout=1) as conn:
                conn.sendall(f"{rank} {run_id}".encode())
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
