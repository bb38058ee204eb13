"""Batch normalisation layers: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d`` and their lazy forms.

``_NormBase`` holds the state (affine parameters, ``running_mean``, ``running_var``,
``num_batches_tracked``); ``_BatchNorm.forward`` decides, from the mode and
``track_running_stats``, whether to normalise with batch or running statistics
(``_use_batch_stats``) and which momentum to use (``_momentum_factor``, where
``momentum=None`` means a cumulative average), then calls ``F.batch_norm``. A synchronised
batch norm subclasses ``_BatchNorm`` and replaces only the final call.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from ..._creation import empty, ones, tensor, zeros
from ..._dtype import int64
from ..._tensor import Tensor
from ...autograd.function import note_use
from ...utils import trace
from .. import init
from ..functional.normalization import batch_norm
from ..parameter import Parameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
]


class _NormBase(Module):
    """Parameters and running statistics shared by the batch-norm layers."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        has_bias = affine and bias
        self.register_parameter(
            "weight", Parameter(empty(num_features, device=device, dtype=dtype)) if affine else None
        )
        self.register_parameter(
            "bias",
            Parameter(empty(num_features, device=device, dtype=dtype)) if has_bias else None,
        )
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, ``num_batches_tracked`` 0."""
        if self.track_running_stats:
            for buf, value in ((self.running_mean, 0), (self.running_var, 1), (self.num_batches_tracked, 0)):
                buf._data[...] = value
                buf._bump_version()

    def reset_parameters(self) -> None:
        """Reset the running statistics; weight to ones and bias to zeros."""
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self,
        state_dict: Mapping,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list,
        unexpected_keys: list,
        error_msgs: list,
    ) -> None:
        # Checkpoints from before num_batches_tracked existed load with a count of 0.
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict:
            state_dict = dict(state_dict)
            state_dict[key] = tensor(0, dtype=int64)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    """``forward`` of the batch-norm layers (input-dimension check in subclasses)."""

    def _use_batch_stats(self) -> bool:
        """Batch statistics in training mode, or whenever no running statistics are kept."""
        return self.training or (self.running_mean is None and self.running_var is None)

    def _momentum_factor(self) -> float:
        """Count this batch (training with running stats) and return the update factor:
        ``momentum``, or ``1 / num_batches_tracked`` (cumulative average) when it is None."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            if trace.profiling():  # PyTorch's ``num_batches_tracked.add_(1)``, as its profiler lists it
                with trace.span("aten::add_", "cpu_op"):
                    self.num_batches_tracked._data += 1
            else:
                self.num_batches_tracked._data += 1
            self.num_batches_tracked._bump_version()
            note_use(self.num_batches_tracked)  # (an op that a compiled graph takes it into)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked._data)
        return factor

    def _stats_to_update(self) -> tuple:
        """The running statistics forward uses or updates (None when it must not)."""
        if not self.training or self.track_running_stats:
            return self.running_mean, self.running_var
        return None, None

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = self._momentum_factor()
        running_mean, running_var = self._stats_to_update()
        return batch_norm(
            input,
            running_mean,
            running_var,
            self.weight,
            self.bias,
            self._use_batch_stats(),
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    r"""Batch normalisation over a ``(N, C)`` or ``(N, C, L)`` input.

    Args:
        num_features: ``C``.
        eps: added to the variance. Default: 1e-5.
        momentum: running-statistics factor, or None for a cumulative average. Default: 0.1.
        affine: learn a per-channel weight (ones) and bias (zeros). Default: True.
        track_running_stats: keep ``running_mean``/``running_var``/``num_batches_tracked``
            and use them in eval mode; otherwise always use batch statistics. Default: True.
        bias: with ``affine``, also learn the bias. Default: True.
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch normalisation over a ``(N, C, H, W)`` input; arguments as :class:`BatchNorm1d`."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch normalisation over a ``(N, C, D, H, W)`` input; arguments as :class:`BatchNorm1d`."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNorm(LazyModuleMixin):
    """Lazy batch/instance norm: ``num_features`` is the channel dim of the first input."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self._lazy_params("weight", "bias")
        self._lazy_buffers("running_mean", "running_var")

    def _feature_dim(self, input: Tensor) -> int:
        return input.shape[1]

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        self.num_features = self._feature_dim(input)
        c = (self.num_features,)
        self._materialize_all({"weight": c, "bias": c, "running_mean": c, "running_var": c})


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """:class:`BatchNorm1d` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """:class:`BatchNorm2d` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """:class:`BatchNorm3d` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm3d


def __getattr__(name: str):
    """``nn.modules.batchnorm.SyncBatchNorm`` (PyTorch's path) on first use (PEP 562)."""
    if name == "SyncBatchNorm":
        return importlib.import_module(".sync_batchnorm", __package__).SyncBatchNorm
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
