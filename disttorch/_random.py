"""Random numbers: ``Generator``, the default generator and ``manual_seed``, and sampling
functions (``rand``, ``randn``, ``randint``, ``randperm``, ...).

The streams are PyTorch's CPU streams: a ``Generator`` is PyTorch's mt19937 engine (seeded
like PyTorch, same 5056-byte ``get_state()``), and each sampler draws from it in PyTorch's
order and transforms the draws with PyTorch's arithmetic (``disttorch/kernels/
torch_random.py``). So ``manual_seed(s)`` gives PyTorch's numbers: bit for bit for
``rand``/``uniform_``, ``randint``/``random_``, ``randperm``, float32/16 ``randn``/``normal_``,
``bernoulli`` (dropout masks), ``multinomial``, ``poisson``, and the float32 results of
``exponential_``, ``cauchy_``, ``geometric_``, ``log_normal_``; float64 normals and
``log``/``tan``-based float64 samples to the last bit of NumPy's versus the C library's
elementary functions (equal draws, values within an ulp or two). PyTorch's sequential
rejection samplers are followed step by step too: gamma and Dirichlet
(``kernels/torch_gamma.py``: ``Gamma``, ``Beta``, ``Chi2``, ``StudentT``, ...), binomial
(``kernels/torch_binomial.py``) and ``poisson``.
"""

from __future__ import annotations

import secrets
from typing import Any, Callable

import numpy as np

from . import _dtype, _memory_format
from ._creation import _size, _sizes, check_layout
from ._tensor import _CPU, Tensor, _as_meta, _check_device, _tensor_arg, _wants_meta
from .kernels import torch_binomial as _kb
from .kernels import torch_random as _k
from .kernels.mt19937 import STATE_SIZE, MT19937Engine

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


_DEFAULT_SEED = 67280421310721  # PyTorch's default seed


class Generator:
    """A random number generator (PyTorch's CPU mt19937 stream); pass it as ``generator=``
    to sampling functions. A new one is seeded with ``67280421310721`` like PyTorch's; the
    default generator (``torch.manual_seed``) starts from a random seed in every process,
    like PyTorch's."""

    def __init__(self, device: Any = "cpu") -> None:
        _check_device(device)
        self._engine = MT19937Engine(_DEFAULT_SEED)

    @property
    def device(self) -> Any:
        return _CPU

    def manual_seed(self, seed: int) -> "Generator":
        """Reset the generator to the stream of ``seed`` (an integer in ``[-2**63, 2**64)``;
        negative seeds are taken modulo ``2**64``)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._engine.manual_seed(seed)
        return self

    def seed(self) -> int:
        """Seed from the OS (64 random bits) and return the seed used."""
        s = secrets.randbits(64)
        self._engine.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the stream started from (as an unsigned 64-bit integer)."""
        return self._engine.seed

    def get_state(self) -> Tensor:
        """The generator's state: a uint8 tensor of 5056 bytes in PyTorch's layout, so
        ``torch.Generator.set_state`` accepts it and this accepts PyTorch's."""
        raw = np.frombuffer(self._engine.get_state(), dtype=np.uint8).copy()
        return Tensor._make(raw)

    def set_state(self, new_state: Tensor) -> "Generator":
        """Restore a state from ``get_state`` (this library's or PyTorch's), mid-stream
        position and cached normal sample included."""
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            got = f"a {new_state.dtype} tensor" if isinstance(new_state, Tensor) else type(new_state).__name__
            raise TypeError(f"RNG state must be a torch.ByteTensor (uint8), got {got}")
        raw = new_state._data.tobytes()
        if raw.startswith(b"PCG64"):
            raise RuntimeError(
                "this RNG state was saved by an earlier disttorch (a NumPy PCG64 stream); the "
                "generator is now PyTorch's mt19937 and cannot continue that stream: reseed "
                "with manual_seed instead"
            )
        if len(raw) != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input "
                f"RNG state size to be {len(raw)}"
            )
        self._engine.set_state(raw)
        return self

    def __reduce__(self) -> tuple:
        return (Generator, ("cpu",), self._engine.get_state())

    def __setstate__(self, state: bytes) -> None:
        self._engine.set_state(state)


default_generator = Generator()
default_generator.seed()  # as PyTorch: the default generator starts from 64 bits of OS entropy


#: checks every draw runs first (``vmap``'s ``randomness="error"`` registers one on first use)
DRAW_GUARDS: list = []


def _gen(generator: Generator | None) -> MT19937Engine:
    """The engine of ``generator`` (the default generator for ``None``)."""
    if DRAW_GUARDS:
        DRAW_GUARDS[0]()
    if generator is None:
        return default_generator._engine
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return generator._engine


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and return it)."""
    return default_generator.manual_seed(int(seed) if isinstance(seed, float) else seed)


def seed() -> int:
    """Seed the default generator from the OS and return the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (PyTorch's 5056-byte layout)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state."""
    default_generator.set_state(new_state)


def _float_dt(dtype: Any, op: str = "check_uniform_bounds", complex_ok: bool = False) -> np.dtype:
    dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy
    if dt.kind not in ("fVc" if complex_ok else "fV"):
        raise NotImplementedError(f"\"{op}\" not implemented for '{_dtype.scalar_type_name(dt)}'")
    return dt


def _complex_draw(draw: Any, shape: tuple, dt: np.dtype, scale: float) -> np.ndarray:
    """Complex samples: real and imaginary parts drawn independently (interleaved, as
    PyTorch fills a complex tensor's real view), each scaled by ``scale``."""
    pairs = draw(tuple(shape) + (2,)) * scale
    return pairs.astype(_real_dt(dt)).view(dt)[..., 0]


def _real_dt(dt: np.dtype) -> np.dtype:
    """The real dtype of complex ``dt``'s parts."""
    return np.dtype(np.float32 if dt == np.complex64 else np.float64)


def _out(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    return t.requires_grad_(True) if requires_grad else t


#: ``vmap``'s per-sample draws (set on the first ``vmap``): ``hook(make)`` calls ``make(lead)``
#: with the batch sizes of the running levels whose ``randomness`` is ``"different"`` (``()``
#: for none) and returns the tensor batched at them
BATCHED_DRAWS: list = []


def _sampled(draw: Callable[[tuple], np.ndarray], shape: tuple, requires_grad: bool) -> Tensor:
    """``draw(shape)`` as a tensor; inside ``vmap(randomness="different")`` one draw of shape
    ``(*batch, *shape)`` as a batched tensor, a sample per entry (as PyTorch)."""
    if not BATCHED_DRAWS:
        return _out(draw(shape), requires_grad)
    return BATCHED_DRAWS[0](lambda lead: _out(draw(lead + shape), requires_grad))


def _meta_out(shape: tuple, dt: np.dtype, requires_grad: bool) -> Tensor:
    """A meta tensor for a sampling function: nothing is drawn (the generator does not move)."""
    return _out(_as_meta(np.zeros(shape, dt)), requires_grad)


def _memory_order(shape: tuple, strides: tuple, draw: Any) -> np.ndarray:
    """``draw(n)``'s values laid out in memory order of an array with ``strides``, as
    PyTorch's TensorIterator visits a non-contiguous output (outermost stride first)."""
    n = int(np.prod(shape, dtype=np.int64))
    order = sorted(range(len(shape)), key=lambda d: -abs(strides[d]))
    vals = draw(n).reshape([shape[d] for d in order])
    return vals.transpose(np.argsort(order))


def _uniform_array(
    engine: MT19937Engine, shape: tuple, dt: np.dtype, low: float, high: float, strides: tuple | None = None
) -> np.ndarray:
    """``uniform_(low, high)`` values for an array of ``shape``."""
    if strides is None or not shape:
        return _k.uniform(engine, int(np.prod(shape, dtype=np.int64)), dt, low, high).reshape(shape)
    return _memory_order(shape, strides, lambda n: _k.uniform(engine, n, dt, low, high))


def _normal_array(
    engine: MT19937Engine, shape: tuple, dt: np.dtype, mean: float, std: float, contiguous: bool = True,
    strides: tuple | None = None,
) -> np.ndarray:  # fmt: skip
    """``normal_(mean, std)`` values for an array of ``shape``: PyTorch's 16-wide Box-Muller
    for 16+ contiguous elements, the scalar path otherwise."""
    n = int(np.prod(shape, dtype=np.int64))
    if contiguous or strides is None:
        return _k.normal(engine, n, dt, mean, std, contiguous=contiguous).reshape(shape)
    return _memory_order(shape, strides, lambda m: _k.normal(engine, m, dt, mean, std, contiguous=False))


def _dtype_label(dt: np.dtype) -> str:
    return f"torch.{_dtype.scalar_type_name(dt).lower()}" if dt.kind != "V" else "torch.bfloat16"


def _update_from(dt: np.dtype, low: int) -> int:
    """PyTorch's ``update_from``: the smallest ``from`` whose cast to float dtype ``dt`` does not
    round below it."""
    plus1 = int(np.array(low + 1, dtype=np.float64).astype(dt).astype(np.float64))
    if plus1 < low:
        n = abs(low + 1).bit_length() - 1
        low = plus1 + (1 << (n - _k.digits(dt) + 1))
    return low


def _update_to(dt: np.dtype, high: int) -> int:
    """PyTorch's ``update_to``: the mirror of :func:`_update_from` for the exclusive end."""
    minus1 = int(np.array(high - 1, dtype=np.float64).astype(dt).astype(np.float64))
    if minus1 >= high:
        n = abs(high - 1).bit_length() - 1
        high = minus1 - (1 << (n - _k.digits(dt) + 1))
    return high


def _check_in_range(dt: np.dtype, low: int, high_inc: int) -> None:
    if dt.kind in "fV":
        big = float(np.finfo(np.float32).max) if dt.kind == "V" else float(np.finfo(dt).max)
        lo, hi = -big, big
    elif dt.kind == "b":
        lo, hi = 0, 1
    else:
        lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    for value, name in ((low, "from"), (high_inc, "to - 1")):
        if not lo <= value <= hi:
            raise RuntimeError(f"{name} is out of bounds for {_dtype_label(dt)} (valid: [{lo}, {hi}])")


def _random_array(engine: MT19937Engine, shape: tuple, dt: np.dtype, low: Any, high: Any) -> np.ndarray:
    """``random_``'s values: ``low=None`` is ``random_()`` (``[0, max]`` of an integer dtype,
    ``[0, 2**digits]`` of a float one); ``high=None`` means up to the dtype's maximum
    (``low=-2**63`` then draws full 64-bit integers); else ``[low, high)``."""
    n = int(np.prod(shape, dtype=np.int64))
    if low is None:
        return _k.random_default(engine, n, dt).reshape(shape)
    low = int(low)
    floating = dt.kind in "fV"
    if high is None:
        if low == -(2**63):
            if dt not in (np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64)) and dt.kind != "V":
                raise RuntimeError(
                    "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16"
                )
            return _k.random_full_64(engine, n, dt).reshape(shape)
        if floating:
            high_inc = 1 << _k.digits(dt)
            low = _update_from(dt, low)
            if low >= high_inc:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                    f"to dtype, but got from={low} > to_inc={high_inc}"
                )
        else:
            high_inc = 1 if dt.kind == "b" else int(np.iinfo(dt).max)
        _check_in_range(dt, low, high_inc)
        range_ = high_inc - low + 1
    else:
        high = int(high)
        if low >= high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        if floating:
            low, high = _update_from(dt, low), _update_to(dt, high)
            if low >= high:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
                    f"got from={low} >= to={high}"
                )
        _check_in_range(dt, low, high - 1)
        range_ = high - low
    if n == 0:
        return np.empty(shape, dtype=dt)
    return _k.random_from_to(engine, n, dt, range_, low).reshape(shape)


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
    meta = _wants_meta(device)
    dt = _float_dt(dtype, complex_ok=True)
    if meta:
        return _meta_out(shape, dt, requires_grad)
    if dt.kind == "c":
        engine, real = _gen(generator), _real_dt(dt)
        draw = lambda sh: _uniform_array(engine, sh, real, 0.0, 1.0)  # noqa: E731
        return _sampled(lambda sh: _complex_draw(draw, sh, dt, 1.0), shape, requires_grad)
    return _sampled(lambda sh: _uniform_array(_gen(generator), sh, dt, 0.0, 1.0), shape, requires_grad)


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
    meta = _wants_meta(device)
    dt = _float_dt(dtype, "normal_kernel_cpu", complex_ok=True)
    if meta:
        return _meta_out(shape, dt, requires_grad)
    if dt.kind == "c":
        engine, real = _gen(generator), _real_dt(dt)
        draw = lambda sh: _normal_array(engine, sh, real, 0.0, 0.5**0.5)  # noqa: E731
        return _sampled(lambda sh: _complex_draw(draw, sh, dt, 1.0), shape, requires_grad)
    return _sampled(lambda sh: _normal_array(_gen(generator), sh, dt, 0.0, 1.0), shape, requires_grad)


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
    dt = _dtype.to_numpy(dtype) if dtype is not None else np.dtype(np.int64)
    if _wants_meta(device):
        return _meta_out(_size((size,)), dt, requires_grad)
    draw = lambda sh: _random_array(_gen(generator), sh, dt, int(low), int(high))  # noqa: E731
    return _sampled(draw, _size((size,)), requires_grad)


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
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dtype.to_numpy(dtype) if dtype is not None else np.int64

    def draw(shape: tuple) -> np.ndarray:
        rows = [_k.randperm(_gen(generator), int(n)).astype(dt) for _ in range(int(np.prod(shape[:-1])))]
        return np.stack(rows).reshape(shape)

    return _sampled(draw, (int(n),), requires_grad)


def _layout(input: Tensor, memory_format: Any = None) -> tuple | None:
    """``input``'s strides when a ``*_like`` draw keeps its non-contiguous layout, else None:
    PyTorch's ``empty_like`` preserves the layout, and the fill then runs in memory order."""
    a = input._data
    keep = memory_format is None or memory_format is _memory_format.preserve_format
    return a.strides if keep and type(a) is np.ndarray and a.ndim > 1 and not a.flags.c_contiguous else None


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
    """``rand`` with ``input``'s shape (and dtype unless given), in its layout (see
    :func:`_layout`)."""
    check_layout("rand_like", layout, pin_memory)
    input = _tensor_arg("rand_like", input)
    strides, dt = _layout(input, memory_format), _float_dt(dtype or input.dtype, complex_ok=True)
    if strides is not None and dt.kind != "c":
        return _out(_uniform_array(_gen(generator), input._data.shape, dt, 0.0, 1.0, strides), requires_grad)
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
    """``randn`` with ``input``'s shape (and dtype unless given), in its layout (see
    :func:`_layout`; PyTorch's scalar normal path then, as for any non-contiguous tensor)."""
    check_layout("randn_like", layout, pin_memory)
    input = _tensor_arg("randn_like", input)
    strides, dt = _layout(input, memory_format), _float_dt(dtype or input.dtype, "normal_kernel_cpu", True)
    if strides is not None and dt.kind != "c":
        engine = _gen(generator)
        return _out(_normal_array(engine, input._data.shape, dt, 0.0, 1.0, False, strides), requires_grad)
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
    """``randint`` with ``input``'s shape (and dtype unless given), in its layout (see
    :func:`_layout`); ``randint_like(x, high)`` samples from ``[0, high)``."""
    check_layout("randint_like", layout, pin_memory)
    input = _tensor_arg("randint_like", input)
    if high is None:
        low, high = 0, low
    strides = _layout(input, memory_format)
    if strides is not None:
        engine, dt = _gen(generator), _dtype.to_numpy(dtype or input.dtype)
        draw = lambda n: _random_array(engine, (n,), dt, int(low), int(high))  # noqa: E731
        return _out(_memory_order(input._data.shape, strides, draw), requires_grad)
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
    and floating dtype) or numbers (then ``size`` gives the shape; with ``size``, 0-dim
    tensors count as numbers and others are refused, as PyTorch's overloads). Unlike PyTorch, the
    result never carries a graph back to tensor ``mean``/``std`` (PyTorch's gradient there
    is zero anyway).
    """
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    if tensors and size is not None:  # PyTorch's float overload: 0-dim tensors read as numbers
        shaped = [list(t.shape) for t in tensors if t.dim() != 0]
        if shaped:
            raise TypeError(
                "normal() received an invalid combination of arguments: 'size' goes with float "
                f"(or 0-dim tensor) mean and std, got a tensor of shape {shaped[0]}; leave "
                "'size' out to sample in the tensors' shape"
            )
        mean, std = (x.item() if isinstance(x, Tensor) else x for x in (mean, std))
        tensors = []
    if tensors:
        dt = np.result_type(*[t._data.dtype for t in tensors])
        if dt.kind not in "fV":
            raise NotImplementedError(
                f"\"normal_kernel_cpu\" not implemented for '{_dtype.scalar_type_name(dt)}'"
            )
        shape = np.broadcast_shapes(*[t._data.shape for t in tensors])
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

    def draw(shape: tuple) -> np.ndarray:
        engine = _gen(generator)
        if isinstance(std, Tensor):  # PyTorch: normal_(0, 1), then mul_(std) and add_(mean)
            z = _normal_array(engine, shape, dt, 0.0, 1.0)
            out = (z * s.astype(dt, copy=False)).astype(dt, copy=False) + np.asarray(_value(mean), dtype=dt)
        elif isinstance(mean, Tensor):  # PyTorch: normal_(0, std), then add_(mean)
            out = _normal_array(engine, shape, dt, 0.0, float(std)) + mean._data.astype(dt, copy=False)
        else:
            out = _normal_array(engine, shape, dt, float(mean), float(std))
        return np.asarray(out, dtype=dt)

    return _sampled(draw, shape, requires_grad)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (elementwise; or the number ``p``), else 0; the result
    has ``input``'s shape and dtype."""
    prob = input._data if p is None else p
    if np.any((np.asarray(prob) < 0) | (np.asarray(prob) > 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return Tensor._make(_bernoulli_array(_gen(generator), input._data.shape, prob).astype(input._data.dtype))


def _bernoulli_array(engine: MT19937Engine, shape: tuple, p: Any) -> np.ndarray:
    """``bernoulli_(p)`` outcomes (bool) for ``shape``: a number ``p`` takes one double uniform
    per element; a tensor ``p`` (broadcast to ``shape``) a double uniform when it is float64,
    else a float one."""
    if isinstance(p, np.ndarray) and p.ndim:
        return _k.bernoulli_tensor(engine, np.broadcast_to(p, shape))
    n = int(np.prod(shape, dtype=np.int64))
    return _k.bernoulli_scalar(engine, n, float(p)).reshape(shape)


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None
) -> Tensor:
    """Indices sampled from the categorical distribution(s) with weights ``input`` (1-D, or
    2-D with one distribution per row); without ``replacement`` each index at most once
    (as PyTorch's CPU build, zero-weight indices fill up when the nonzero ones run out).
    Returns int64 of shape ``(num_samples,)`` or ``(rows, num_samples)``."""
    w = input._data
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {w.ndim}")
    if w.dtype.kind not in "fV":
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {input.dtype.name.capitalize()}"
        )
    rows = w.reshape(-1, w.shape[-1])
    n_cat = rows.shape[1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    wide = rows.astype(np.float64)
    if not np.all(np.isfinite(wide)) or np.any(wide < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(wide.sum(1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    out = _k.multinomial(_gen(generator), rows, int(num_samples), bool(replacement)).astype(np.int64)
    return Tensor._make(out.reshape(num_samples) if w.ndim == 1 else out)


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Samples from Poisson distributions with rates ``input`` (same shape and dtype), by
    PyTorch's CPU algorithm (Hörmann's transformed rejection for rates >= 10, products of
    uniforms below)."""
    lam = input._data
    if lam.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"poisson_cpu\" not implemented for '{_dtype.scalar_type_name(lam.dtype)}'"
        )
    if np.any(lam < 0) or np.any(np.isnan(lam)):
        raise RuntimeError("poisson expects all rates to be non-negative and not NaN")
    flat = np.ascontiguousarray(lam, dtype=np.float64).reshape(-1)
    return Tensor._make(_k.poisson(_gen(generator), flat).reshape(lam.shape).astype(lam.dtype))


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
    draws = _kb.binomial(_gen(generator), np.where(nan, 0, n), np.where(nan, 0, p))
    return Tensor._make(np.where(nan, np.nan, draws).astype(n.dtype))
