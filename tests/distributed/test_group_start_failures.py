"""A peer that fails or ends while a group starts is named at once: the ranks still starting
the group do not wait for it until the timeout (30 minutes by default). A rank whose start
fails says why in the store; a peer of this host whose process ended (before it connected,
or before it fetched the shared-memory segment) is seen to have ended; one of another host
whose published address fails every connect is named within seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from disttorch.distributed.base.errors import DistNetworkError, DistStoreError
from disttorch.distributed.store import HashStore
from disttorch.distributed.wire import shm, transport

from dist_helpers import run_ranks


def _an_ended_process() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.timeout(30)
def test_a_peer_that_ended_before_it_connected_is_named_at_once():
    store, dead = HashStore(), _an_ended_process()
    endpoint = {  # what rank 0 published before it ended: an address nobody listens on now
        "host": transport._host_key(),
        "pid": dead,
        "pidns": transport._pid_namespace(),
        "tcp": "tcp://127.0.0.1:9",
    }
    store.set("g/ep/0", json.dumps(endpoint))
    started = time.monotonic()
    with pytest.raises(
        DistNetworkError,
        match=rf"rank 0 \(process {dead} of this host\) ended before rank 1 could connect to it",
    ):
        transport.Transport(store, "g/", rank=1, size=2, group_id=7, timeout=600.0)
    assert time.monotonic() - started < 10


@pytest.mark.timeout(30)
@pytest.mark.skipif(not shm.enabled(), reason="needs memfd on x86-64 Linux")
def test_the_leader_stops_handing_out_the_segment_to_a_rank_that_ended():
    fd, mapping = shm.new_segment(3, slot_bytes=4096)
    server, _ = shm.listen(2)
    dead = _an_ended_process()
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match=rf"rank 2 \(process {dead}\) ended before it fetched"):
            shm.hand_out(server, fd, {1: os.getppid(), 2: dead}, started + 600, lambda r: f"rank {r}")
    finally:
        server.close()
        os.close(fd)
        mapping.close()
    assert time.monotonic() - started < 10


@pytest.mark.timeout(30)
def test_a_rank_whose_start_fails_says_why_and_the_ranks_waiting_for_it_raise_that():
    store = HashStore()
    with pytest.raises(DistStoreError, match="rank 1 did not publish its address"):
        transport.Transport(store, "g/", rank=0, size=2, group_id=7, timeout=0.3)  # rank 1 never comes
    assert store.add("g/failures", 0) == 1
    assert store.get("g/failed/0").startswith(b"DistStoreError: rank 1 did not publish its address")
    started = time.monotonic()
    # rank 1 comes late: rank 0's address is published, its process alive (this one), its sockets closed
    with pytest.raises(DistNetworkError, match="rank 0 failed to start the group, so rank 1 cannot connect"):
        transport.Transport(store, "g/", rank=1, size=2, group_id=7, timeout=600.0)
    assert time.monotonic() - started < 10


@pytest.mark.timeout(30)
def test_a_rank_that_failed_before_publishing_its_address_is_not_waited_for():
    store = HashStore()
    store.set("g/failed/0", "OSError: no free port")
    store.add("g/failures", 1)
    started = time.monotonic()
    with pytest.raises(DistNetworkError, match="rank 0 failed to start the group.*: OSError: no free port"):
        transport.Transport(store, "g/", rank=1, size=2, group_id=7, timeout=600.0)
    assert time.monotonic() - started < 10


@pytest.mark.timeout(30)
def test_a_remote_peer_that_ended_before_it_connected_is_named_within_seconds(monkeypatch):
    monkeypatch.setattr(transport, "UNREACHABLE_GIVE_UP_S", 1.0)
    store = HashStore()
    endpoint = {  # what rank 0 of another host published before it ended: its port is shut now
        "host": "another-host/boot/netns",
        "pid": 1,
        "pidns": "pid:[1]",
        "tcp": "tcp://127.0.0.1:9",
    }
    store.set("g/ep/0", json.dumps(endpoint))
    started = time.monotonic()
    with pytest.raises(
        DistNetworkError,
        match=r"rank 0 published its address tcp://127.0.0.1:9, but every connect to it failed for "
        r"\d+ s \(\d+ tries\): its process ended before rank 1 could connect to it",
    ):
        transport.Transport(store, "g/", rank=1, size=2, group_id=7, timeout=600.0)
    assert time.monotonic() - started < transport.UNREACHABLE_GIVE_UP_S + 10


def _start_with_a_rank_killed_while_it_waits(rank, world_size, marker):
    """Rank 2 checks in and is killed while it waits for rank 1, which starts only then: it
    never publishes its address."""
    import signal
    import threading
    from datetime import timedelta

    import disttorch.distributed as dist

    def kill_once_checked_in():  # (its own client: the rank's waits on the one it shares)
        store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
        while not store.check(["disttorch/1/checkin/2"]):
            time.sleep(0.05)
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)

    if rank == 2:
        threading.Thread(target=kill_once_checked_in, daemon=True).start()
    while rank == 1 and not os.path.exists(marker):
        time.sleep(0.05)
    started = time.monotonic()
    try:
        dist.init_process_group("gloo", timeout=timedelta(seconds=120))
    except dist.PeerDiedError as error:
        return str(error), error.rank, time.monotonic() - started
    return "joined", None, time.monotonic() - started


@pytest.mark.timeout(60)
def test_a_rank_killed_before_it_published_its_address_is_named_not_waited_for(tmp_path):
    # plain processes, no launcher: the store saw rank 2's connection drop, and the ranks
    # waiting for its address name it within seconds instead of waiting out the timeout
    marker = str(tmp_path / "rank2-killed")
    results = run_ranks(_start_with_a_rank_killed_while_it_waits, 3, (marker,), timeout=50, check=False)
    assert results[2].returncode == -9
    for r in results[:2]:
        assert r.error is None, r.traceback
        message, blamed, waited = r.value
        assert blamed == 2, message
        assert message.startswith(f"rank 2 left the job before rank {r.rank} could connect to it"), message
        assert "its connection to the store dropped" in message
        assert waited < 100  # (the group's timeout is 120 s)
