"""A link that goes silent past one side's heartbeat timeout and comes back while the other side
still holds the old connection (a network partition healed after ~2.7 s): the sender's new
connection must carry the job on. It waited unread behind the dead one on the receiver's
ROUTER, and two live ranks stalled in their next barrier until the timeout. A message lost
with the dropped connection fails both ranks saying so (it read as a bare gap in the numbers)."""

from __future__ import annotations

import re

import pytest

from dist_helpers import run_ranks


def _silent_link_then_barrier(rank, world_size):
    import json
    import socket
    import threading
    import time

    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.store import tcp_store
    from disttorch.distributed.wire import transport

    # rank 0's DEALER gives up on a silent link after 1 s; rank 1's ROUTER keeps it for a minute
    transport.HEARTBEAT_TIMEOUT_MS = 1000 if rank == 0 else 60_000
    silent = threading.Event()

    def forward(src, dst):
        try:
            while data := src.recv(65536):
                if not silent.is_set():
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            src.close()  # the upstream side stays open: rank 1's ROUTER sees no drop

    def proxy(listener, port):
        while True:
            client, _ = listener.accept()
            upstream = socket.create_connection(("127.0.0.1", port))
            threading.Thread(target=forward, args=(client, upstream), daemon=True).start()
            threading.Thread(target=forward, args=(upstream, client), daemon=True).start()

    real_set = tcp_store.TCPStore.set

    def set_via_proxy(self, key, value):  # rank 1 publishes a proxy in front of its ROUTER
        if rank == 1 and str(key).endswith("pg/0/ep/1"):
            info = json.loads(value)
            listener = socket.create_server(("127.0.0.1", 0))
            threading.Thread(
                target=proxy, args=(listener, int(info["tcp"].rsplit(":", 1)[1])), daemon=True
            ).start()
            info["tcp"] = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
            value = json.dumps(info)
        return real_set(self, key, value)

    tcp_store.TCPStore.set = set_via_proxy
    dist.init_process_group("gloo")
    dist.barrier()
    if rank == 1:
        silent.set()
        time.sleep(1.6)  # rank 0's heartbeat times out and it reconnects through the proxy
        silent.clear()
    else:
        time.sleep(1.6)
    started = time.monotonic()
    dist.barrier()
    waited = time.monotonic() - started
    # now a message sent while the link is silent: lost with the connection that is dropped
    token = torch.zeros(1)
    try:
        if rank == 1:
            silent.set()
            dist.send(token, dst=0)  # over rank 1's own connection, which is not silenced
            time.sleep(1.6)
            silent.clear()
            dist.recv(token, src=0)
        else:
            dist.recv(token, src=1)
            dist.send(token, dst=1)
            time.sleep(1.6)
            dist.recv(token, src=1)  # pumps: the reconnection is announced to rank 1
        lost = "nothing lost"
    except dist.DistError as e:
        lost = f"{type(e).__name__}: {e}"
    return waited, lost


@pytest.mark.timeout(60)
def test_a_link_that_came_back_carries_the_next_collective_and_names_what_it_lost():
    env = {"DISTTORCH_SAME_HOST_TRANSPORT": "tcp", "DISTTORCH_SHM": "0", "DISTTORCH_TIMEOUT": "8"}
    results = run_ranks(_silent_link_then_barrier, 2, env=env, timeout=45)
    assert max(waited for waited, _ in results) < 3, results
    lost = results[1][1]
    assert "stream from rank 0 to rank 1 is damaged" in lost, lost
    assert re.search(
        r"the connection dropped and came back, and \d message\(s\) sent over it were lost", lost
    ), lost
    assert "rank 1" in results[0][1], results[0][1]  # rank 0 hears of it too
