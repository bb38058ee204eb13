"""A store client whose connection drops and comes back mid-request (a network outage past the
heartbeat timeout, as a partition healed after ~2.7 s makes): a request that only reads is sent
again and answered, one that changes the store raises naming the outage. The launcher's agents
poll their counters with ``add(key, 0)``: a healed blip that the ranks rode out stopped the job."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from tcp_proxy import TcpProxy

from disttorch.distributed.store import DistNetworkError, TCPStore

SECRET = "11ab" * 8


@pytest.fixture
def through_proxy():
    master = TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=10), secret=SECRET)
    proxy = TcpProxy(master.port)
    client = TCPStore("127.0.0.1", proxy.port, timeout=timedelta(seconds=10), secret=SECRET)
    yield master, proxy, client
    client.close()
    proxy.close()
    master.close()


def _during_an_outage(proxy: TcpProxy, request):
    """``request()``'s outcome when its connection drops while it waits, then comes back."""
    proxy.hold()
    threading.Timer(0.3, proxy.drop).start()
    started = time.monotonic()
    try:
        return request()
    finally:
        assert time.monotonic() - started < 5


@pytest.mark.timeout(30)
def test_a_counter_read_is_repeated_over_a_connection_that_came_back(through_proxy):
    master, proxy, client = through_proxy
    master.add("attempt0/failed", 2)
    assert _during_an_outage(proxy, lambda: client.add("attempt0/failed", 0)) == 2
    with pytest.raises(
        DistNetworkError, match=r"dropped during ADD and came back \(the network between them was down"
    ):
        _during_an_outage(proxy, lambda: client.add("attempt0/failed", 1))
    assert master.add("attempt0/failed", 0) == 2  # the outage swallowed it: not applied twice
