"""Tensor parallelism (published as ``torch.distributed.tensor.parallel``): cut a model's
layers over a mesh dimension and compute on the pieces with DTensors.

``parallelize_module(model, mesh, {"w1": ColwiseParallel(), "w2": RowwiseParallel()})``
replaces the named modules' parameters by DTensor shards and hooks their inputs and
outputs (``style.py``); the ops inside run by sharding propagation
(``distributed/tensor/_dispatch.py``), so a column-parallel layer followed by a
row-parallel one costs one all-reduce (Megatron-LM's MLP). ``loss_parallel()`` computes
cross-entropy on class-sharded logits. It lives here, where ``nn`` and ``distributed``
meet (the styles know ``nn.Linear`` and ``nn.Embedding``).
"""

from .api import parallelize_module
from .loss import loss_parallel
from .style import (
    ColwiseParallel,
    ParallelStyle,
    PrepareModuleInput,
    PrepareModuleInputOutput,
    PrepareModuleOutput,
    RowwiseParallel,
    SequenceParallel,
)

__all__ = [
    "ColwiseParallel",
    "ParallelStyle",
    "PrepareModuleInput",
    "PrepareModuleInputOutput",
    "PrepareModuleOutput",
    "RowwiseParallel",
    "SequenceParallel",
    "loss_parallel",
    "parallelize_module",
]
