"""The chi-squared distribution."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from . import constraints
from .gamma import Gamma

_SERIES_MAX_X = 2500.0

__all__ = ["Chi2"]


class Chi2(Gamma):
    """``Chi2(df)``: ``Gamma(df / 2, 1 / 2)``."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(
            0.5 * (df if isinstance(df, Tensor) else float(df)), 0.5, validate_args=validate_args
        )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
