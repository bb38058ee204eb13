"""Random numbers: ``Generator``, the default generator and ``manual_seed``, and sampling
functions (``rand``, ``randn``, ``randint``, ``randperm``, ...). Same seed, same numbers,
every run (NumPy's PCG64 underneath; the streams differ from PyTorch's)."""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

from . import _dtype
from ._creation import _size, _sizes, check_layout
from ._tensor import _CPU, Tensor, _check_device

__all__ = [
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "normal",
    "bernoulli",
    "multinomial",
    "poisson",
    "binomial",
]


class Generator:
    """A random number generator; pass it as ``generator=`` to sampling functions."""

    def __init__(self, device: Any = "cpu") -> None:
        _check_device(device)
        self._seed = 67280421310721  # PyTorch's default seed
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    @property
    def device(self) -> Any:
        return _CPU

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
        """The generator's state as a uint8 tensor of plain bytes (for checkpoints): a tag,
        the seed, PCG64's 128-bit state and increment and its buffered 32-bit output."""
        st = self._rng.bit_generator.state
        raw = (
            _STATE_TAG
            + self._seed.to_bytes(16, "little", signed=True)
            + st["state"]["state"].to_bytes(16, "little")
            + st["state"]["inc"].to_bytes(16, "little")
            + bytes([st["has_uint32"]])
            + st["uinteger"].to_bytes(4, "little")
        )
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, state: Tensor) -> "Generator":
        """Restore a state returned by ``get_state``."""
        data = state._data if isinstance(state, Tensor) else np.asarray(state)
        raw = data.astype(np.uint8).tobytes()
        if raw[: len(_STATE_TAG)] == _STATE_TAG and len(raw) == _STATE_LEN:
            at = len(_STATE_TAG)
            seed = int.from_bytes(raw[at : at + 16], "little", signed=True)
            st = {
                "bit_generator": "PCG64",
                "state": {
                    "state": int.from_bytes(raw[at + 16 : at + 32], "little"),
                    "inc": int.from_bytes(raw[at + 32 : at + 48], "little"),
                },
                "has_uint32": raw[at + 48],
                "uinteger": int.from_bytes(raw[at + 49 :], "little"),
            }
        elif raw[:1] == b"\x80":  # the pickled form of earlier versions, read without running code
            seed, st = _PlainUnpickler(io.BytesIO(raw)).load()
        else:
            raise ValueError(
                f"not a generator state: expected the {_STATE_LEN}-byte uint8 tensor "
                f"get_state() returns, got {len(raw)} bytes"
            )
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64())
        self._rng.bit_generator.state = st
        return self


class _PlainUnpickler(pickle.Unpickler):
    """Reads the plain numbers, strings and dicts of an earlier version's pickled state and
    refuses every global, so no byte of a state can name code to run."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a generator state holds plain values only, not {module}.{name}")


_STATE_TAG = b"PCG64\x01"
_STATE_LEN = len(_STATE_TAG) + 16 * 3 + 1 + 4


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


def _float_dt(dtype: Any, op: str = "check_uniform_bounds", complex_ok: bool = False) -> np.dtype:
    dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy
    if dt.kind not in ("fVc" if complex_ok else "fV"):
        raise NotImplementedError(f"\"{op}\" not implemented for '{_dtype.scalar_type_name(dt)}'")
    return dt


def _complex_draw(draw: Any, shape: tuple, dt: np.dtype, scale: float) -> np.ndarray:
    """Complex samples: real and imaginary parts drawn independently (interleaved, as
    PyTorch fills a complex tensor's real view), each scaled by ``scale``."""
    pairs = draw(tuple(shape) + (2,)) * scale
    return pairs.astype(np.float32 if dt == np.complex64 else np.float64).view(dt)[..., 0]


def _out(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    return t.requires_grad_(True) if requires_grad else t


def rand(
    *sizes: Any,
    size: Any = None,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Uniform samples on [0, 1) (``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``);
    for a complex dtype the real and imaginary parts are each uniform on [0, 1)."""
    check_layout("rand", layout, pin_memory)
    shape = _sizes("rand", sizes, size)
    if device is not None:
        _check_device(device)
    dt = _float_dt(dtype, complex_ok=True)
    if dt.kind == "c":
        rng = _gen(generator)
        return _out(_complex_draw(lambda sh: rng.random(sh, dtype=np.float64), shape, dt, 1.0), requires_grad)
    return _out(_gen(generator).random(shape, dtype=np.float64).astype(dt), requires_grad)


def randn(
    *sizes: Any,
    size: Any = None,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Standard normal samples (``randn(2, 3)``, ``randn((2, 3))`` or ``randn(size=(2, 3))``);
    for a complex dtype, standard complex normal: real and imaginary parts each N(0, 1/2)."""
    check_layout("randn", layout, pin_memory)
    shape = _sizes("randn", sizes, size)
    if device is not None:
        _check_device(device)
    dt = _float_dt(dtype, "normal_kernel_cpu", complex_ok=True)
    if dt.kind == "c":
        rng = _gen(generator)
        draw = lambda sh: rng.standard_normal(sh, dtype=np.float64)  # noqa: E731
        return _out(_complex_draw(draw, shape, dt, 0.5**0.5), requires_grad)
    return _out(_gen(generator).standard_normal(shape, dtype=np.float64).astype(dt), requires_grad)


def randint(
    low: int,
    high: int | None = None,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Integers uniform on [low, high); ``randint(high, size)`` also works."""
    check_layout("randint", layout, pin_memory)
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = _dtype.to_numpy(dtype) if dtype is not None else np.int64
    out = _gen(generator).integers(low, high, _size((size,)), dtype=np.int64).astype(dt)
    return _out(out, requires_grad)


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """A random permutation of 0..n-1 (int64 unless ``dtype`` is given)."""
    check_layout("randperm", layout, pin_memory)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = _dtype.to_numpy(dtype) if dtype is not None else np.int64
    return _out(_gen(generator).permutation(int(n)).astype(dt), requires_grad)


def rand_like(
    input: Tensor,
    *,
    dtype: Any = None,
    generator: Generator | None = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """``rand`` with ``input``'s shape (and dtype unless given)."""
    check_layout("rand_like", layout, pin_memory)
    return rand(
        input._data.shape, generator=generator, dtype=dtype or input.dtype, requires_grad=requires_grad
    )


def randn_like(
    input: Tensor,
    *,
    dtype: Any = None,
    generator: Generator | None = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """``randn`` with ``input``'s shape (and dtype unless given)."""
    check_layout("randn_like", layout, pin_memory)
    return randn(
        input._data.shape, generator=generator, dtype=dtype or input.dtype, requires_grad=requires_grad
    )


def randint_like(
    input: Tensor,
    low: int,
    high: int | None = None,
    *,
    dtype: Any = None,
    generator: Generator | None = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """``randint`` with ``input``'s shape (and dtype unless given); ``randint_like(x, high)``
    samples from ``[0, high)``."""
    check_layout("randint_like", layout, pin_memory)
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        input._data.shape,
        generator=generator,
        dtype=dtype or input.dtype,
        requires_grad=requires_grad,
    )


def _value(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Samples from ``N(mean, std**2)``.

    ``mean`` and ``std`` may be tensors (broadcast together; the result has their shape
    and floating dtype) or numbers (then ``size`` gives the shape). Unlike PyTorch, the
    result never carries a graph back to tensor ``mean``/``std`` (PyTorch's gradient there
    is zero anyway).
    """
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    if tensors:
        dt = np.result_type(*[t._data.dtype for t in tensors])
        if dt.kind not in "fV":
            raise NotImplementedError(
                f"\"normal_kernel_cpu\" not implemented for '{_dtype.scalar_type_name(dt)}'"
            )
        shape = np.broadcast_shapes(*[t._data.shape for t in tensors])
        if size is not None and tuple(_size((size,))) != shape:
            raise RuntimeError(
                f"normal: size {list(_size((size,)))} does not match the shape {list(shape)} of mean and std"
            )
    else:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments: with float "
                "mean and std, 'size' is required"
            )
        dt, shape = _float_dt(dtype, "normal_kernel_cpu"), _size((size,))
    s = np.asarray(_value(std))
    if np.any(s < 0):
        raise RuntimeError(
            f"normal expects std >= 0.0, but found std {std}"
            if not isinstance(std, Tensor)
            else "normal expects all elements of std >= 0.0"
        )
    z = _gen(generator).standard_normal(shape)
    return _out((z * s + _value(mean)).astype(dt, copy=False), requires_grad)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (elementwise; or the number ``p``), else 0; the result
    has ``input``'s shape and dtype."""
    prob = input._data if p is None else p
    if np.any((np.asarray(prob) < 0) | (np.asarray(prob) > 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = _gen(generator).random(input._data.shape)
    return Tensor._make((u < prob).astype(input._data.dtype))


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None
) -> Tensor:
    """Indices sampled from the categorical distribution(s) with weights ``input`` (1-D, or
    2-D with one distribution per row); without ``replacement`` each index at most once.
    Returns int64 of shape ``(num_samples,)`` or ``(rows, num_samples)``."""
    w = input._data
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {w.ndim}")
    if w.dtype.kind not in "fV":
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {input.dtype.name.capitalize()}"
        )
    rows = w.reshape(-1, w.shape[-1]).astype(np.float64)
    n_cat = rows.shape[1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _gen(generator)
    if replacement:
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], num_samples))
        out = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
        out = np.minimum(out, n_cat - 1)
    else:
        # Exponential race: the k smallest E_i / w_i are a weighted sample without replacement.
        with np.errstate(divide="ignore"):
            keys = rng.exponential(size=rows.shape) / rows
        if num_samples > int((rows > 0).sum(1).min()):
            raise RuntimeError(
                "invalid multinomial distribution (with replacement=False, not "
                "enough non-negative category to sample)"
            )
        out = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    out = out.astype(np.int64)
    return Tensor._make(out.reshape(num_samples) if w.ndim == 1 else out)


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from Poisson distributions with rates ``input`` (same shape and dtype)."""
    return Tensor._make(_gen(generator).poisson(input._data).astype(input._data.dtype))


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from binomial distributions with ``count`` trials (their integer part) and
    success probability ``prob`` (broadcast together; floating, one dtype, which the result
    has). NaN in either gives NaN. The result carries no graph (PyTorch has no derivative
    for it either)."""
    for name, t in (("count", count), ("prob", prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not {type(t).__name__}")
    n, p = count._data, prob._data
    if n.dtype.kind not in "fV":
        raise ValueError(
            f"binomial only supports floating-point dtypes for count, got: {_dtype.scalar_type_name(n.dtype)}"
        )
    if p.dtype != n.dtype:
        raise RuntimeError(
            f"Found dtype {_dtype.scalar_type_name(p.dtype)} but expected {_dtype.scalar_type_name(n.dtype)}"
        )
    if n.dtype not in (np.float32, np.float64):
        raise NotImplementedError(
            f"\"binomial_cpu\" not implemented for '{_dtype.scalar_type_name(n.dtype)}'"
        )
    try:
        n, p = np.broadcast_arrays(n, p)
    except ValueError:
        raise RuntimeError(
            f"binomial: count {list(n.shape)} and prob {list(p.shape)} do not broadcast"
        ) from None
    nan = np.isnan(n) | np.isnan(p)
    bad = ~nan & ((n < 0) | ~np.isfinite(n) | (p < 0) | (p > 1))
    if bad.any():
        raise ValueError(
            "binomial expects finite count >= 0 and 0 <= prob <= 1, got count "
            f"{n[bad].flat[0]} and prob {p[bad].flat[0]}"
        )
    draws = _gen(generator).binomial(np.where(nan, 0, n).astype(np.int64), np.where(nan, 0, p))
    return Tensor._make(np.where(nan, np.nan, draws).astype(n.dtype))
