"""Payloads whose frames reach the transport's largest frame (``MAX_FRAME``) cross an
encrypted tcp connection intact: CURVE's few bytes per frame do not trip the receiver's
``ZMQ_MAXMSGSIZE`` (which dropped the connection and lost the message)."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks


def _broadcast(rank: int, world: int, nbytes: int) -> bool:
    import numpy as np

    import disttorch.distributed as dist

    dist.init_process_group("gloo")
    x = np.full(nbytes, rank + 1, np.uint8)
    dist.broadcast(x, src=0)  # two ranks: the tree sends the buffer as one message
    ok = bool((x == 1).all())
    dist.destroy_process_group()
    return ok


@pytest.mark.timeout(120)
def test_frames_of_the_largest_size_cross_an_encrypted_connection():
    from disttorch.distributed.wire.transport import MAX_FRAME

    env = {
        "DISTTORCH_SAME_HOST_TRANSPORT": "tcp",
        "DISTTORCH_ENCRYPT": "1",
        "DISTTORCH_SHM": "0",
        "DISTTORCH_TIMEOUT": "30",
    }
    for nbytes in (MAX_FRAME, 2 * MAX_FRAME + 1):
        assert run_ranks(_broadcast, 2, args=(nbytes,), timeout=100, env=env) == [True, True], nbytes
