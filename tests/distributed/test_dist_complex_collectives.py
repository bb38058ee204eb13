"""Complex tensors through the collectives: all_reduce (sum, average), broadcast and
all_gather carry complex64/complex128 bytes unchanged, across real processes."""

import numpy as np
import pytest

from dist_helpers import run_ranks


def _collectives(rank, world_size):
    import disttorch as dt
    import disttorch.distributed as dist

    dist.init_process_group("gloo")
    try:
        z = dt.tensor([1 + 2j, -1j], dtype=dt.complex64) * (rank + 1)
        dist.all_reduce(z)
        avg = dt.tensor([2j * rank], dtype=dt.complex128)
        dist.all_reduce(avg, op=dist.ReduceOp.AVG)
        b = dt.tensor([rank + 0.5j], dtype=dt.complex128)
        dist.broadcast(b, src=1)
        parts = [dt.zeros(1, dtype=dt.complex64) for _ in range(world_size)]
        dist.all_gather(parts, dt.tensor([rank * 1j], dtype=dt.complex64))
        return z.tolist(), str(z.dtype), avg.tolist(), b.tolist(), [p.tolist() for p in parts]
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(120)
def test_complex_collectives():
    results = run_ranks(_collectives, 2, timeout=100)
    for z, dtype, avg, b, parts in results:
        np.testing.assert_allclose(z, [3 + 6j, -3j])
        assert dtype == "disttorch.complex64"
        np.testing.assert_allclose(avg, [1j])
        assert b == [1 + 0.5j]
        assert parts == [[0j], [1j]]
