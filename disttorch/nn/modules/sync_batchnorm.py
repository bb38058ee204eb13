"""``SyncBatchNorm``: batch normalisation whose statistics cover every rank's batch.

With data-parallel training each rank sees only its shard of the batch; plain BatchNorm
would normalise each shard by its own statistics. SyncBatchNorm uses the statistics of
the whole global batch, so N ranks with batch b behave like one process with batch N·b.

Forward (training), on each rank:

1. per channel, the local sum and sum of squares of the input, and the element count;
2. one all-reduce of ``[sum, sum of squares, count]``: global mean and biased variance;
3. normalise with them (the same kernels as BatchNorm) and update the running statistics
   with the global values.

Backward: one all-reduce of the per-channel ``[sum(dy), sum(dy * x̂)]`` gives the input
gradient; the weight and bias gradients stay local, since DDP averages them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function
from ..functional.normalization import (
    batch_norm_backward_elemt,
    batch_norm_backward_reduce,
    batch_norm_elemt,
    batch_norm_stats,
    channel_shape,
    update_running_stats,
)
from .batchnorm import _BatchNorm
from .module import Module

__all__ = ["SyncBatchNorm"]


def _all_reduce_sum(arr: np.ndarray, group: Any) -> np.ndarray:
    from ... import distributed as dist

    t = Tensor._make(arr)
    dist.all_reduce(t, group=group)
    return t._data


class SyncBatchNormFunction(Function):
    _raw = True

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, momentum, eps, group):
        x = input._data
        c = x.shape[1]
        local_count = x.size // c
        mean, var, _ = batch_norm_stats(x)
        stats = np.concatenate([mean * local_count, (var + mean * mean) * local_count, [local_count]]).astype(
            np.float64
        )
        stats = _all_reduce_sum(stats, group)
        count = stats[-1]
        g_mean = stats[:c] / count
        g_var = np.maximum(stats[c : 2 * c] / count - g_mean * g_mean, 0.0)
        invstd = (1.0 / np.sqrt(g_var + eps)).astype(x.dtype)
        update_running_stats(running_mean, running_var, g_mean, g_var, int(count), momentum)
        xc = x - g_mean.astype(x.dtype).reshape(channel_shape(x))
        ctx.xc, ctx.invstd, ctx.count, ctx.group = xc, invstd, count, group
        ctx.save_for_backward(weight)
        return batch_norm_elemt(xc, invstd, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        (weight,) = ctx._checked_saved()
        g = grad._data
        sum_g, sum_gxc = batch_norm_backward_reduce(g, ctx.xc)
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        gx = None
        if need_x:
            c = sum_g.size
            both = _all_reduce_sum(np.concatenate([sum_g, sum_gxc]), ctx.group)
            gx = Tensor._make(
                batch_norm_backward_elemt(g, ctx.xc, ctx.invstd, weight, both[:c], both[c:], ctx.count)
            )
        gw = Tensor._make((sum_gxc * ctx.invstd).astype(g.dtype)) if need_w else None
        gb = Tensor._make(sum_g.astype(g.dtype)) if need_b else None
        return gx, gw, gb, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over ``(N, C, *)`` with statistics synchronised across the ranks
    of ``process_group`` in training mode (in eval mode it is plain BatchNorm).

    Args: as :class:`BatchNorm1d`, plus ``process_group`` (default: the world).
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        from ... import distributed as dist

        if (
            not self._use_batch_stats()
            or not dist.is_initialized()
            or dist.get_world_size(self.process_group) == 1
        ):
            return super().forward(input)
        factor = self._momentum_factor()
        running_mean, running_var = self._stats_to_update()
        return SyncBatchNormFunction.apply(
            input, self.weight, self.bias, running_mean, running_var, factor, self.eps, self.process_group
        )

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Replace every ``BatchNorm*d`` inside ``module`` by a SyncBatchNorm with the same
        parameters and running statistics (returns the converted module)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
