"""An RPC worker whose connection to another goes silent past its heartbeat timeout and comes back
while the other still holds the old one (a network partition healed after ~2.7 s): its next call
is answered. The new connection waited unread behind the dead one on the callee's ROUTER, and the
call hung until its RPC timeout (60 s by default)."""

from __future__ import annotations

import time

import pytest
from tcp_proxy import TcpProxy

from disttorch.distributed.rpc import agent as rpc_agent

SECRET = b"\x5a" * 32


def _agent(rank: int) -> tuple[rpc_agent.Agent, str]:
    context, router, endpoint = rpc_agent.Agent.bind("127.0.0.1", SECRET)
    made: list[rpc_agent.Agent] = []
    agent = rpc_agent.Agent(
        rank, context, router, lambda peer, msg_id, parts: made[0].reply(peer, msg_id, parts)
    )
    made.append(agent)
    return agent, endpoint


def _call(caller: rpc_agent.Agent, payload: bytes) -> bytes:
    ok, parts = caller.request(0, [payload], timeout=10).wait()
    assert ok
    return bytes(parts[0])


@pytest.mark.timeout(30)
def test_a_call_over_a_link_that_came_back_is_answered(monkeypatch):
    limits = rpc_agent.wire_limits
    monkeypatch.setattr(limits, "HEARTBEAT_TIMEOUT_MS", 60_000)  # the callee keeps the old connection
    callee, callee_at = _agent(0)
    caller, caller_at = _agent(1)
    proxy = TcpProxy(int(callee_at.rsplit(":", 1)[1]))
    try:
        callee.connect({0: ("callee", callee_at), 1: ("caller", caller_at)}, SECRET)
        monkeypatch.setattr(limits, "HEARTBEAT_TIMEOUT_MS", 1000)  # the caller's gives up after 1 s
        caller.connect({0: ("callee", f"tcp://127.0.0.1:{proxy.port}"), 1: ("caller", caller_at)}, SECRET)
        assert _call(caller, b"before") == b"before"
        proxy.silent.set()
        time.sleep(1.6)  # the caller's heartbeat times out; it reconnects through the proxy
        proxy.silent.clear()
        time.sleep(0.3)
        started = time.monotonic()
        assert _call(caller, b"after") == b"after"
        assert time.monotonic() - started < 2
    finally:
        caller.stop()
        callee.stop()
        proxy.close()
