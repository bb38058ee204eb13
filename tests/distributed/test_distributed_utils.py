"""``torch.distributed.utils``'s module-state helpers (Lightning's DDP strategy syncs a module
with ``_sync_module_states`` before ``validate``/``test``/``predict``) and the submodules
``torch.distributed`` exposes as attributes, as PyTorch does after a bare ``import torch``."""

import pytest

import disttorch

from dist_helpers import run_ranks


def _sync(rank: int, world: int) -> list:
    import disttorch.distributed as dist

    dist.init_process_group("gloo")
    group = dist.distributed_c10d._get_default_group()  # an attribute: no import statement
    layer = disttorch.nn.BatchNorm1d(3)
    with disttorch.no_grad():
        layer.weight.fill_(rank + 1.0)
        layer.bias.fill_(rank + 1.0)
        layer.running_mean.fill_(rank + 1.0)
    disttorch.distributed.utils._sync_module_states(
        layer, group, 250 * 1024 * 1024, src=0, params_and_buffers_to_ignore={"bias"}
    )
    store = dist.distributed_c10d._get_default_store()  # PyTorch's private helper, as libraries call it
    store.set(f"rank{rank}", str(rank * 10))
    other = store.get(f"rank{1 - rank}").decode()
    dist.destroy_process_group()
    return [layer.weight.tolist(), layer.bias.tolist(), layer.running_mean.tolist(), other]


def test_sync_module_states_gives_every_rank_the_sources_but_the_ignored():
    ranks = run_ranks(_sync, 2, timeout=90)
    assert ranks[0] == [[1.0] * 3, [1.0] * 3, [1.0] * 3, "10"]
    assert ranks[1] == [[1.0] * 3, [2.0] * 3, [1.0] * 3, "0"]  # its own bias: ignored


def test_the_default_store_needs_the_default_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        disttorch.distributed.distributed_c10d._get_default_store()


def test_submodules_are_attributes_as_in_pytorch():
    dist = disttorch.distributed
    for name in ("autograd", "constants", "device_mesh", "distributed_c10d", "rpc", "utils"):
        assert getattr(dist, name).__name__ == f"disttorch.distributed.{name}"
    assert not hasattr(dist, "no_such_module")
