"""The Gumbel distribution."""

from __future__ import annotations

import math
from typing import Any

from .._tensor import Tensor
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import _finfo, broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """``Gumbel(loc, scale)``: ``loc - scale log(-log U)`` for uniform ``U``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = _finfo(self.loc)
        base = Uniform(
            self.loc.new_full(tuple(self.loc.shape), float(fi.tiny)),
            self.loc.new_full(tuple(self.loc.shape), 1 - float(fi.eps)),
            validate_args=validate_args,
        )
        transforms = [
            ExpTransform().inv,
            AffineTransform(0, -1.0),
            ExpTransform().inv,
            AffineTransform(self.loc, -self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc, new.scale = self.loc.expand(*batch_shape), self.scale.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)
