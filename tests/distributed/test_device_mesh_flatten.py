"""``DeviceMesh._flatten``: a sub-mesh's ranks as one named dimension with its own process
group (``mesh["dp_replicate", "dp_shard"]._flatten("dp")``), as PyTorch's, on real ranks."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks


def flattened(rank: int, ws: int) -> tuple:
    import disttorch
    import disttorch.distributed as dist
    from disttorch.distributed.device_mesh import init_device_mesh

    dist.init_process_group()
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("a", "b"))
    whole = mesh["a", "b"]._flatten()
    rows = mesh["b"]._flatten("b_flat")
    t = disttorch.tensor([1.0 + rank])
    dist.all_reduce(t, group=whole.get_group())
    r = disttorch.tensor([1.0 + rank])
    dist.all_reduce(r, group=rows.get_group())
    out = (
        whole.mesh.tolist(),
        whole.mesh_dim_names,
        whole.get_local_rank(),
        t.item(),
        rows.mesh.tolist(),
        r.item(),
        mesh["a_b"] is whole,
        repr(whole),
    )
    dist.destroy_process_group()
    return out


@pytest.mark.timeout(90)
def test_flatten_makes_one_dimension_with_its_group():
    for rank, got in enumerate(run_ranks(flattened, 4, timeout=75)):
        row = [0, 1] if rank < 2 else [2, 3]
        assert got == (
            [0, 1, 2, 3],
            ("a_b",),
            rank,
            10.0,
            row,
            float(sum(row) + 2),
            True,
            "DeviceMesh((a_b=4), 'cpu', stride=(1,))",
        ), rank
