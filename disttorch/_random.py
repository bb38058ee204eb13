"""Random numbers: ``Generator``, the default generator and ``manual_seed``, and sampling
functions (``rand``, ``randn``, ``randint``, ``randperm``, ...). Same seed, same numbers,
every run (NumPy's PCG64 underneath; the streams differ from PyTorch's)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype
from ._creation import _size
from ._tensor import Tensor

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "rand", "randn", "randint", "randperm",
           "rand_like", "randn_like", "randint_like"]


class Generator:
    """A random number generator; pass it as ``generator=`` to sampling functions."""

    def __init__(self, device: Any = "cpu") -> None:
        self._seed = 67280421310721  # PyTorch's default seed
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> "Generator":
        """Reset the generator to the stream of ``seed``."""
        self._seed = int(seed)
        self._rng = np.random.Generator(np.random.PCG64(self._seed & 0xFFFFFFFFFFFFFFFF))
        return self

    def seed(self) -> int:
        """Seed from the OS and return the seed used."""
        s = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor (for checkpoints)."""
        import pickle
        raw = pickle.dumps((self._seed, self._rng.bit_generator.state))
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, state: Tensor) -> "Generator":
        """Restore a state returned by ``get_state``."""
        import pickle
        data = state._data if isinstance(state, Tensor) else np.asarray(state)
        self._seed, st = pickle.loads(data.astype(np.uint8).tobytes())
        self._rng = np.random.Generator(np.random.PCG64())
        self._rng.bit_generator.state = st
        return self


default_generator = Generator()


def _gen(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator)._rng


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and return it)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def _float_dt(dtype: Any) -> np.dtype:
    return _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy


def _out(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    return t.requires_grad_(True) if requires_grad else t


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1)."""
    dt = _float_dt(dtype)
    return _out(_gen(generator).random(_size(size), dtype=np.float64).astype(dt), requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    dt = _float_dt(dtype)
    return _out(_gen(generator).standard_normal(_size(size), dtype=np.float64).astype(dt), requires_grad)


def randint(low: int, high: int | None = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high); ``randint(high, size)`` also works."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = _dtype.to_numpy(dtype) if dtype is not None else np.int64
    return Tensor._make(_gen(generator).integers(low, high, _size((size,)), dtype=np.int64).astype(dt))


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None) -> Tensor:
    """A random permutation of 0..n-1."""
    dt = _dtype.to_numpy(dtype) if dtype is not None else np.int64
    return Tensor._make(_gen(generator).permutation(int(n)).astype(dt))


def rand_like(input: Tensor, *, dtype: Any = None, generator: Generator | None = None) -> Tensor:
    return rand(input._data.shape, generator=generator, dtype=dtype or input.dtype)


def randn_like(input: Tensor, *, dtype: Any = None, generator: Generator | None = None) -> Tensor:
    return randn(input._data.shape, generator=generator, dtype=dtype or input.dtype)


def randint_like(input: Tensor, low: int, high: int | None = None, *, dtype: Any = None) -> Tensor:
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype)
