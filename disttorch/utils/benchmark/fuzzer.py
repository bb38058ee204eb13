"""``Fuzzer``: random benchmark inputs, drawn as PyTorch's fuzzer draws them.

A :class:`Fuzzer` samples its :class:`FuzzedParameter` values from one NumPy
``RandomState(seed)`` (resampling until every constraint holds), then builds each
:class:`FuzzedTensor` from them: random values (the library's generator, seeded from that
state), made non-contiguous by a random permutation with probability
``1 - probability_contiguous`` and strided by ``steps``. The same seed gives PyTorch's
parameters and tensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ... import _random
from ..._dtype import dtype as _dtype
from ..._dtype import float32
from ..._tensor import Tensor

__all__ = ["FuzzedParameter", "FuzzedTensor", "Fuzzer", "ParameterAlias"]


class ParameterAlias:
    """A parameter value that takes the value of the parameter ``alias_to`` (chains are
    followed; a cycle raises)."""

    def __init__(self, alias_to: str) -> None:
        self.alias_to = alias_to

    def __repr__(self) -> str:
        return f"ParameterAlias[alias_to: {self.alias_to}]"


class FuzzedParameter:
    """A named value drawn for each case: ``"loguniform"`` or ``"uniform"`` between
    ``minval`` and ``maxval`` (integers when both bounds are), or a ``{value: probability}``
    dict (probabilities summing to one; PyTorch 2.13's check of that sum is inverted and
    refuses every dict). ``strict``: drawn once per case, kept while the others are redrawn."""

    def __init__(
        self,
        name: str,
        minval: float | None = None,
        maxval: float | None = None,
        distribution: str | dict[Any, float] | None = None,
        strict: bool = False,
    ) -> None:
        if isinstance(distribution, dict):
            if any(p < 0 for p in distribution.values()):
                raise AssertionError("Probabilities cannot be negative")
            if abs(sum(distribution.values()) - 1) > 1e-5:
                raise AssertionError("Distribution is not normalized")
            if minval is not None or maxval is not None:
                raise AssertionError("When passing a custom distribution, 'minval' and 'maxval' must be None")
        elif distribution not in ("loguniform", "uniform"):
            raise AssertionError(f"Unknown distribution: {distribution}")
        self._name, self._minval, self._maxval = name, minval, maxval
        self._distribution = distribution
        self.strict = strict

    @property
    def name(self) -> str:
        return self._name

    def sample(self, state: np.random.RandomState) -> Any:
        """One value, drawn from ``state``."""
        lo, hi, dist = self._minval, self._maxval, self._distribution
        if isinstance(dist, dict):
            return list(dist)[state.choice(np.arange(len(dist)), p=tuple(dist.values()))]
        if dist == "uniform":
            if isinstance(lo, int) and isinstance(hi, int):
                return int(state.randint(low=lo, high=hi + 1))
            return state.uniform(low=lo, high=hi)
        value = int(2 ** state.uniform(low=np.log2(lo), high=np.log2(hi)))
        return min(max(value, lo), hi)  # loguniform, rounded down, kept within the bounds


class FuzzedTensor:
    """A tensor named ``name`` of ``size`` (ints, or names of parameters), cut from one
    ``steps`` times larger when ``steps`` is given, laid out non-contiguously with
    probability ``1 - probability_contiguous``; ``min_elements``/``max_elements``/
    ``max_allocation_bytes`` reject parameter draws; ``dim_parameter`` names the parameter
    giving its number of dims; ``tensor_constructor(size=, dtype=, **params)`` replaces the
    default values (``rand``, or ``randint(1, 127)`` for integer dtypes)."""

    def __init__(
        self,
        name: str,
        size: tuple,
        steps: tuple | None = None,
        probability_contiguous: float = 0.5,
        min_elements: int | None = None,
        max_elements: int | None = None,
        max_allocation_bytes: int | None = None,
        dim_parameter: str | None = None,
        roll_parameter: str | None = None,
        dtype: _dtype = float32,
        cuda: bool = False,
        tensor_constructor: Callable | None = None,
    ) -> None:
        self._name, self._size, self._steps = name, size, steps
        self._probability_contiguous = probability_contiguous
        self._min_elements, self._max_elements = min_elements, max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter, self._dtype = dim_parameter, dtype
        self._cuda, self._tensor_constructor = cuda, tensor_constructor

    @property
    def name(self) -> str:
        return self._name

    @staticmethod
    def default_tensor_constructor(size: tuple, dtype: _dtype, **kwargs: Any) -> Tensor:
        if dtype.is_floating_point or dtype.is_complex:
            return _random.rand(*size, dtype=dtype)
        return _random.randint(1, 127, size, dtype=dtype)

    def _shape(self, params: dict) -> tuple[tuple, tuple, tuple]:
        """The size, the steps and the size allocated before slicing, for ``params``."""
        dim = params[self._dim_parameter] if self._dim_parameter is not None else len(self._size)

        def concrete(values: tuple) -> tuple:
            values = tuple(params.get(v, v) for v in values)[:dim]
            return values + (1,) * (dim - len(values))

        size, steps = concrete(self._size), concrete(self._steps or ())
        return size, steps, tuple(n * s for n, s in zip(size, steps))

    def satisfies_constraints(self, params: dict) -> bool:
        """Whether ``params`` give this tensor a size within its bounds."""
        size, _, allocated = self._shape(params)
        numel = math.prod(int(n) for n in size)
        nbytes = math.prod(int(n) for n in allocated) * self._dtype.itemsize
        too_few = self._min_elements is not None and numel < self._min_elements
        too_many = self._max_elements is not None and numel > self._max_elements
        too_large = self._max_allocation_bytes is not None and nbytes > self._max_allocation_bytes
        return not (too_few or too_many or too_large)

    def _make_tensor(self, params: dict, state: np.random.RandomState) -> tuple[Tensor, dict]:
        size, steps, allocated = self._shape(params)
        make = self._tensor_constructor or self.default_tensor_constructor
        raw = make(size=allocated, dtype=self._dtype, **params)
        dim = len(size)
        order = np.arange(dim)
        if state.rand() > self._probability_contiguous:
            while dim > 1 and np.all(order == np.arange(dim)):  # a permutation that moves something
                order = state.permutation(raw.dim())
            raw = raw.permute(tuple(order)).contiguous().permute(tuple(np.argsort(order)))
        tensor = raw[tuple(slice(0, n * s, s) for n, s in zip(size, steps))]
        properties = {
            "numel": int(tensor.numel()),
            "order": order,
            "steps": steps,
            "is_contiguous": tensor.is_contiguous(),
            "dtype": str(self._dtype),
        }
        return tensor, properties


def _flattened(values: list, cls: type) -> tuple:
    return tuple(v for item in values for v in ([item] if isinstance(item, cls) else item))


class Fuzzer:
    """Cases of ``tensors`` built from ``parameters`` drawn until every ``constraints``
    callable (given the dict of parameters, as PyTorch passes it) accepts them; ``seed`` fixes the parameters
    and, through the library's generator, the tensors' values."""

    def __init__(
        self,
        parameters: list,
        tensors: list,
        constraints: list[Callable] | None = None,
        seed: int | None = None,
    ) -> None:
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2**32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters = _flattened(parameters, FuzzedParameter)
        self._tensors = _flattened(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {overlap}")
        self._rejections = self._total_generated = 0

    def take(self, n: int) -> Iterator[tuple[dict, dict, dict]]:
        """``n`` cases, each ``(tensors, their properties, parameters)`` (dicts by name)."""
        state = np.random.RandomState(self._seed)
        _random.manual_seed(int(state.randint(low=0, high=2**63, dtype=np.int64)))
        for _ in range(n):
            params = self._generate(state)
            tensors, properties = {}, {}
            for t in self._tensors:
                tensors[t.name], properties[t.name] = t._make_tensor(params, state)
            yield tensors, properties, params

    @property
    def rejection_rate(self) -> float:
        """The share of parameter draws rejected so far."""
        return self._rejections / self._total_generated if self._total_generated else 0.0

    def _generate(self, state: np.random.RandomState) -> dict:
        strict: dict[str, Any] = {}
        for _ in range(1000):
            params = {}
            for p in self._parameters:
                if p.strict and p.name in strict:
                    params[p.name] = strict[p.name]
                else:
                    params[p.name] = p.sample(state)
                    if p.strict:
                        strict[p.name] = params[p.name]
            params = _resolved(params)
            self._total_generated += 1
            if all(f(params) for f in self._constraints) and all(
                t.satisfies_constraints(params) for t in self._tensors
            ):
                return params
            self._rejections += 1
        raise ValueError("Failed to generate a set of valid parameters.")


def _resolved(params: dict) -> dict:
    """``params`` with every :class:`ParameterAlias` replaced by the value it names."""
    params = dict(params)
    pending = sum(isinstance(v, ParameterAlias) for v in params.values())
    while pending:
        for k, v in params.items():
            if isinstance(v, ParameterAlias):
                params[k] = params[v.alias_to]
        left = sum(isinstance(v, ParameterAlias) for v in params.values())
        if left == pending:
            raise ValueError(f"ParameterAlias cycle detected\n{params}")
        pending = left
    return params
