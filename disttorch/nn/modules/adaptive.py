"""``AdaptiveLogSoftmaxWithLoss``: the efficient softmax approximation of Grave et al.
(2016) for large vocabularies: frequent classes in a head, rare ones in clusters whose
projections shrink by ``div_value``."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...ops import shape as _shape
from ..functional.activation import log_softmax
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax; ``forward(input, target)`` returns ``(output, loss)``: the
    log-probability of each target and their negative mean.

    Args:
        in_features: size of each input vector.
        n_classes: number of classes.
        cutoffs: increasing class indices that split the classes into the head (below the
            first cutoff) and the tail clusters.
        div_value: each cluster's projection is ``div_value`` times smaller. Default: 4.0.
        head_bias: give the head a bias. Default: False.
    """

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > (n_classes - 1)
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                    Linear(hsz, osz, bias=False, device=device, dtype=dtype),
                )
            )

    def reset_parameters(self) -> None:
        """Re-initialise the head and every cluster projection."""
        self.head.reset_parameters()
        for seq in self.tail:
            for lin in seq:
                lin.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:
        unbatched = input.ndim == 1
        if unbatched:
            if target.ndim != 0:
                raise RuntimeError(
                    "1D target tensor expects 0D input tensors, but found inputs with size",
                    tuple(target.shape),
                )
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        elif input.ndim != 2:
            raise RuntimeError(
                "1D target tensor expects 1D or 2D input tensors, but found inputs with size",
                tuple(input.shape),
            )
        if input.shape[0] != target.shape[0]:
            raise RuntimeError("Input and target should have the same size in the batch dimension.")
        t = np.asarray(target._data).astype(np.int64)
        if t.size and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{int(t.min())}, {int(t.max())}] were found. "
            )
        n = t.shape[0]
        gather = np.where(t < self.shortlist_size, t, 0)
        output = Tensor._make(np.zeros(n, dtype=input._data.dtype))
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            rows = np.nonzero((t >= low) & (t < high))[0]
            if rows.size == 0:
                continue
            gather[rows] = self.shortlist_size + i
            cluster = log_softmax(self.tail[i](input[Tensor._make(rows)]), 1)
            local = cluster.gather(1, Tensor._make((t[rows] - low)[:, None])).squeeze(1)
            output = output.index_add(0, Tensor._make(rows), local)
        head = log_softmax(self.head(input), 1)
        output = output + head.gather(1, Tensor._make(gather[:, None])).squeeze(1)
        loss = (-output).mean()
        if unbatched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head = log_softmax(head_output, 1)
        parts = [head[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = log_softmax(self.tail[i](input), 1)
            parts.append(cluster + head[:, self.shortlist_size + i : self.shortlist_size + i + 1])
        return _shape.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class, ``(N, n_classes)`` (or ``(n_classes,)``)."""
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        out = self._full_log_prob(x, self.head(x))
        return out.squeeze(0) if unbatched else out

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each input, ``(N,)`` (or a scalar)."""
        return self.log_prob(input).argmax(-1)
