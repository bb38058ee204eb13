"""RPC when things go wrong: a killed or frozen worker is reported (never a hang), and a
connection that has not proved the job secret never gets a message unpickled."""

from __future__ import annotations

import os
import signal
import time

from dist_helpers import run_ranks


def _peer_dies(rank: int, world: int, how: str) -> dict:
    import rpc_helpers as h

    from disttorch.distributed import rpc

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    out: dict = {}
    if rank == 0:
        pid = rpc.rpc_sync("worker1", os.getpid)
        in_flight = rpc.rpc_async("worker1", h.sleep_then, args=(30, None), timeout=0)  # no deadline
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        start = time.monotonic()
        try:
            in_flight.wait()  # only the peer's death can end it
        except RuntimeError as e:
            out["error"] = str(e)
        out["seconds"] = time.monotonic() - start
        try:
            rpc.rpc_sync("worker1", h.add, args=(1, 2), timeout=0)
        except RuntimeError as e:
            out["next"] = str(e)
        try:
            rpc.shutdown()
        except RuntimeError as e:
            out["shutdown"] = str(e)
        if how == "stop":
            os.kill(pid, signal.SIGKILL)
    else:
        time.sleep(120)  # killed or stopped by worker 0's call before this ends
    return out


def _check_dead_peer_report(how: str) -> None:
    results = run_ranks(_peer_dies, 2, args=(how,), timeout=60, check=False)
    out = results[0].value
    assert results[0].ok, results[0].describe()
    assert "error" in out, (out, results[1].describe())
    assert "the connection to RPC worker 'worker1' (id 1) was lost" in out["error"]
    assert out["seconds"] < 15
    assert "worker1" in out["next"]
    assert "RPC shutdown cannot wait for the other workers" in out["shutdown"]


def test_a_killed_worker_is_reported_not_waited_for():
    _check_dead_peer_report("kill")


def test_a_frozen_worker_is_reported_not_waited_for():
    _check_dead_peer_report("stop")


def _outsider(rank: int, world: int) -> dict:
    import json

    import zmq

    from disttorch.distributed.base import auth
    from disttorch.distributed.rpc import agent, api, rpc_sync, serialization, shutdown

    rpc = __import__("disttorch.distributed.rpc", fromlist=["init_rpc"])
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    out: dict = {}
    if rank == 0:
        state = api.require_state()
        endpoint = json.loads(state.store.get("worker/1"))["endpoint"]
        marker = os.environ["MARKER"]

        def request_touching(path: str) -> list:
            payload = serialization.dumps(("call", os.mkdir, (path,), {}, None), serialization.Session(1))
            return agent._to_wire(agent.REQUEST, 1, [(-1).to_bytes(8, "big", signed=True), *payload])

        ctx = zmq.Context()
        for secret, suffix in ((bytes(range(32)), "-wrong-secret"), (None, "-no-secret")):
            sock = ctx.socket(zmq.DEALER)
            sock.linger = 0
            sock.setsockopt(zmq.ROUTING_ID, (1).to_bytes(4, "big"))  # pretends to be worker 1
            auth.configure_client(sock, secret)
            sock.connect(endpoint)
            sock.send_multipart(request_touching(marker + suffix))
            out[suffix] = sock.poll(1500)  # no answer, ever
            sock.close()
        ctx.term()
        # the same message from a member of the job does run: the outsiders' would have
        time.sleep(0.5)
        rpc_sync("worker1", os.mkdir, args=(marker + "-member",))
        out["created"] = sorted(os.listdir(os.path.dirname(marker)))
    shutdown()
    return out


def test_a_connection_without_the_job_secret_gets_nothing_unpickled(tmp_path):
    marker = str(tmp_path / "made")
    out = run_ranks(_outsider, 2, timeout=60, env={"MARKER": marker})[0]
    assert out["-wrong-secret"] == 0 and out["-no-secret"] == 0
    assert out["created"] == ["made-member"]


def _outsider_at_the_store(rank: int, world: int) -> dict:
    import zmq

    from disttorch.distributed import rpc
    from disttorch.distributed.base import auth

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)  # no process group
    out: dict = {}
    if rank == 0:
        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        auth.configure_client(sock, bytes(range(32)))  # another secret: its handshake fails
        sock.connect(f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}")
        sock.send(b"hello")
        time.sleep(0.3)
        cpu, wall = time.process_time(), time.monotonic()
        rpc.shutdown()  # waits for worker 1 past the store's grace after a refused handshake (2 s)
        out["cpu"], out["wall"] = time.process_time() - cpu, time.monotonic() - wall
        out["answered"] = sock.poll(0)
        sock.close()
        ctx.term()
    else:
        time.sleep(2.8)
        rpc.shutdown()
    return out


def test_an_outsider_at_the_store_neither_ends_nor_spins_the_shutdown_of_an_rpc_only_job():
    out = run_ranks(_outsider_at_the_store, 2, timeout=60)[0]
    assert out["wall"] > 2 and out["cpu"] < 0.1 * out["wall"], out  # it waited, and without spinning
    assert out["answered"] == 0, "the outsider got an answer"
