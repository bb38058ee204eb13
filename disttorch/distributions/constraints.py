"""Constraints: the sets a distribution's parameters and samples live in, as
``torch.distributions.constraints``. ``constraint.check(value)`` returns a bool tensor of
the batch shape (event dims reduced), used by ``validate_args`` and by the
``biject_to``/``transform_to`` registries."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor

__all__ = [
    "Constraint",
    "MixtureSameFamilyConstraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


def _t(a: np.ndarray) -> Tensor:
    return Tensor._make(np.asarray(a))


def _reduce_event(ok: np.ndarray, event_dim: int) -> np.ndarray:
    return ok.reshape(ok.shape[: ok.ndim - event_dim] + (-1,)).all(-1) if event_dim else ok


class Constraint:
    """Base class: ``is_discrete``, ``event_dim`` and ``check(value)``."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A bool tensor: whether each (event of) ``value`` satisfies the constraint."""
        return _t(_reduce_event(self._ok(np.asarray(value._data)), self.event_dim))

    def _ok(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder whose support depends on other variables (cannot be checked)."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> _Dependent:
        return _Dependent(
            is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
            event_dim=self._event_dim if event_dim is NotImplemented else event_dim,
        )

    def check(self, x: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a ``dependent`` placeholder."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint (for ``support`` depending on params)."""

    def __init__(
        self, fn: Any = None, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Any) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more event dims."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(
                f"reinterpreted_batch_ndims must be a non-negative int, got {reinterpreted_batch_ndims}"
            )
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        ok = np.asarray(self.base_constraint.check(value)._data)
        return _t(_reduce_event(ok, self.reinterpreted_batch_ndims))

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(Constraint):
    """The component constraint of a ``MixtureSameFamily``, checked with the component dim
    added back and then reduced."""

    def __init__(self, base_constraint: Constraint) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        ok = np.asarray(self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))._data)
        keep = value.dim() - self.event_dim
        return _t(ok.reshape(ok.shape[:keep] + (-1,)).all(-1))

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def _ok(self, x):
        return (x == 0) | (x == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        x = np.asarray(value._data)
        return _t((((x == 0) | (x == 1)).all(-1)) & (x.sum(-1) == 1))


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _ok(self, x):
        return (x % 1 == 0) & (_arr(self.lower_bound) <= x) & (x <= _arr(self.upper_bound))

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def _ok(self, x):
        return (x % 1 == 0) & (x >= _arr(self.lower_bound))

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


def _arr(v: Any) -> Any:
    return v._data if isinstance(v, Tensor) else v


class _Real(Constraint):
    def _ok(self, x):
        return ~np.isnan(x)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def _ok(self, x):
        return _arr(self.lower_bound) < x

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def _ok(self, x):
        return _arr(self.lower_bound) <= x

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def _ok(self, x):
        return x < _arr(self.upper_bound)

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _ok(self, x):
        return (_arr(self.lower_bound) <= x) & (x <= _arr(self.upper_bound))

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def _ok(self, x):
        return (_arr(self.lower_bound) <= x) & (x < _arr(self.upper_bound))

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        x = np.asarray(value._data)
        return _t((x >= 0).all(-1) & (np.abs(x.sum(-1) - 1) < 1e-6))


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: int) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        x = np.asarray(value._data)
        return _t((x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound))


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        x = np.asarray(value._data)
        return _t((np.tril(x) == x).reshape(x.shape[:-2] + (-1,)).all(-1))


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        x = np.asarray(value._data)
        lower = (np.tril(x) == x).reshape(x.shape[:-2] + (-1,)).all(-1)
        return _t(lower & (np.diagonal(x, axis1=-2, axis2=-1) > 0).all(-1))


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        x = np.asarray(value._data)
        tol = np.finfo(x.dtype).eps * x.shape[-1] * 10
        unit = np.abs(np.linalg.norm(x, axis=-1) - 1) <= tol
        return _t(_LowerCholesky().check(value)._data & unit.all(-1))


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        x = np.asarray(value._data)
        return _t(np.full(x.shape[:-2], x.shape[-2] == x.shape[-1], dtype=bool))


class _Symmetric(_Square):
    def check(self, value):
        x = np.asarray(value._data)
        if x.shape[-2] != x.shape[-1]:
            return _t(np.zeros(x.shape[:-2], bool))
        return _t(np.isclose(x, np.swapaxes(x, -1, -2), atol=1e-6).all((-2, -1)))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)._data
        if not sym.all():
            return _t(sym)
        return _t(np.linalg.eigvalsh(np.asarray(value._data)).min(-1) >= 0)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)._data
        if not sym.all():
            return _t(sym)
        return _t(np.linalg.eigvalsh(np.asarray(value._data)).min(-1) > 0)


class _Cat(Constraint):
    """``cseq[i]`` on the ``lengths[i]`` slice of dimension ``dim``."""

    def __init__(self, cseq: list, dim: int = 0, lengths: list | None = None) -> None:
        self.cseq, self.dim = list(cseq), dim
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        parts, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            parts.append(np.asarray(c.check(value.narrow(self.dim, start, n))._data))
            start += n
        return _t(np.concatenate(parts, axis=self.dim))


class _Stack(Constraint):
    """``cseq[i]`` on index ``i`` of dimension ``dim``."""

    def __init__(self, cseq: list, dim: int = 0) -> None:
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        parts = [np.asarray(c.check(value.select(self.dim, i))._data) for i, c in enumerate(self.cseq)]
        return _t(np.stack(parts, axis=self.dim))


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
