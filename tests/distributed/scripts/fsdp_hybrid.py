"""Hybrid sharding over hosts: FullyShardedDataParallel(HYBRID_SHARD) shards inside each
host (LOCAL_WORLD_SIZE ranks) and replicates across hosts; after training every rank saves
its whole parameters to ``<out_dir>/rank<R>.npz``. Run by disttorch-launch on each host."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fsdp_models import BATCH, build, data, full_params, train  # noqa: E402

import disttorch.distributed as dist  # noqa: E402
from disttorch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy  # noqa: E402


def main(out_dir: str) -> None:
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    model = build("mlp")
    wrapped = FullyShardedDataParallel(model, sharding_strategy=ShardingStrategy.HYBRID_SHARD)
    groups = [dist.get_process_group_ranks(g) for g in model._fsdp_state.unit.mesh.get_all_groups()]
    x, y = data("mlp", world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)
    train(wrapped, "mlp", x[:, sl], y[:, sl])
    params = full_params(model)
    np.savez(os.path.join(out_dir, f"rank{rank}.npz"), groups=np.array(groups), **params)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
