"""A link that goes silent past one side's heartbeat timeout and comes back while the other side
still holds the old connection (a network partition healed after ~2.7 s): the sender's new
connection must carry the job on. It waited unread behind the dead one on the receiver's
ROUTER, and two live ranks stalled in their next barrier until the timeout."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks


def _silent_link_then_barrier(rank, world_size):
    import json
    import socket
    import threading
    import time

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
    dist.destroy_process_group()
    return waited


@pytest.mark.timeout(60)
def test_a_link_that_came_back_carries_the_next_collective():
    env = {"DISTTORCH_SAME_HOST_TRANSPORT": "tcp", "DISTTORCH_SHM": "0", "DISTTORCH_TIMEOUT": "8"}
    waited = run_ranks(_silent_link_then_barrier, 2, env=env, timeout=45)
    assert max(waited) < 3, waited
