"""``disttorch.nn.init``: fill tensors in place with PyTorch's initialisation schemes
(uniform, normal, truncated normal, constant, Xavier/Glorot, Kaiming/He, orthogonal, sparse,
...), and the deprecated names without the trailing underscore.

Every function writes into the tensor's memory without recording a graph and returns
the tensor. Random draws come from the default generator, or ``generator=`` when given.
"""

import math
import warnings
from typing import Any as _Any
from typing import Callable

import numpy as _np

from .. import _native_warnings
from .._random import Generator as _Generator
from .._random import _gen, _normal_array, _uniform_array
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad as _no_grad
from ..kernels import torch_random as _kr
from ..ops.inplace import no_draw_on_meta as _no_draw_on_meta

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def _fill(tensor: Tensor, values: _Any) -> Tensor:
    """Write ``values`` into ``tensor`` in place (no graph) and record the change."""
    _np.copyto(tensor._data, values, casting="unsafe")
    tensor._bump_version()
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (``'relu'`` -> sqrt(2), ``'tanh'`` -> 5/3,
    ``'leaky_relu'`` -> sqrt(2 / (1 + slope**2)), ``'selu'`` -> 3/4, linear and
    convolutions -> 1)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight: dim 1 and dim 0 times the receptive field size."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    shape = tensor._data.shape
    receptive = int(_np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _uniform(tensor: Tensor, a: float, b: float, generator: _Generator | None) -> _np.ndarray:
    """``tensor.uniform_(a, b)``'s values (PyTorch's stream, in the tensor's dtype)."""
    d = tensor._data
    strides = None if d.flags.c_contiguous else d.strides
    return _uniform_array(_gen(generator), d.shape, d.dtype, float(a), float(b), strides)


def _normal(tensor: Tensor, mean: float, std: float, generator: _Generator | None) -> _np.ndarray:
    """``tensor.normal_(mean, std)``'s values (PyTorch's stream, in the tensor's dtype)."""
    d = tensor._data
    contiguous = bool(d.flags.c_contiguous)
    strides = None if contiguous else d.strides
    return _normal_array(_gen(generator), d.shape, d.dtype, float(mean), float(std), contiguous, strides)


@_no_draw_on_meta
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: _Generator | None = None) -> Tensor:
    """Fill with values drawn from U(a, b) (complex: the real and imaginary parts each)."""
    if tensor._data.dtype.kind == "c":
        with _no_grad():
            return tensor.uniform_(a, b, generator=generator)
    return _fill(tensor, _uniform(tensor, a, b, generator))


@_no_draw_on_meta
def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: _Generator | None = None
) -> Tensor:
    """Fill with values drawn from N(mean, std**2) (complex, as PyTorch: the real and
    imaginary parts each N(mean, std**2 / 2))."""
    if tensor._data.dtype.kind == "c":
        with _no_grad():
            return tensor.normal_(mean, std, generator=generator)
    return _fill(tensor, _normal(tensor, mean, std, generator))


@_no_draw_on_meta
def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: _Generator | None = None,
) -> Tensor:
    """Fill with N(mean, std**2) values truncated to [a, b], by PyTorch's two samplers: when
    [a, b] holds more than 30% of the mass, normals with the out-of-range ones redrawn (whole
    fresh fills, as PyTorch draws them); else uniform candidates on [a, b] accepted with
    probability ``pdf / pdf(mode)`` (``log u > log_pdf`` rejects)."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    dt = tensor._data.dtype
    if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
        lo, hi = dt.type(a), dt.type(b)
        out = _normal(tensor, mean, std, generator)
        bad = (out < lo) | (out > hi)
        while bad.any():
            out = _np.where(bad, _normal(tensor, mean, std, generator), out)
            bad = (out < lo) | (out > hi)
        return _fill(tensor, out)
    log_peak = dt.type(-0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2)

    def log_pdf(x: _np.ndarray) -> _np.ndarray:  # in the tensor's dtype, op by op like PyTorch
        z = (x - dt.type(mean)) / dt.type(std)
        return (z * z) * dt.type(-0.5) - log_peak

    out = _uniform(tensor, a, b, generator)
    pending = _np.log(_uniform(tensor, 0.0, 1.0, generator)) > log_pdf(out)
    while pending.any():
        cand = _uniform(tensor, a, b, generator)
        out = _np.where(pending, cand, out)
        pending = pending & (_np.log(_uniform(tensor, 0.0, 1.0, generator)) > log_pdf(cand))
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return _fill(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return _fill(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, _np.eye(*tensor._data.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-5-D convolution weight so the convolution is the identity (per group)."""
    ndim = tensor.dim()
    if ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tensor._data.shape
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = shape[0] // groups
    n = min(out_per_group, shape[1])
    values = _np.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        idx = _np.arange(n)
        values[(g * out_per_group + idx, idx) + centre] = 1
    return _fill(tensor, values)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: _Generator | None = None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std  # PyTorch's order of operations (the bound's rounding matters)
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: _Generator | None = None) -> Tensor:
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: _Generator | None = None,
) -> Tensor:
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan) and gain from
    ``calculate_gain(nonlinearity, a)``."""
    if 0 in tensor._data.shape:
        _native_warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std  # PyTorch's order of operations (the bound's rounding matters)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: _Generator | None = None,
) -> Tensor:
    """He normal: N(0, std**2) with std = gain / sqrt(fan)."""
    if 0 in tensor._data.shape:
        _native_warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


@_no_draw_on_meta
def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: _Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (flattened beyond dim 0), scaled by ``gain``."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor._data.size // rows
    dt = tensor._data.dtype  # PyTorch: new_empty((rows, cols)).normal_(0, 1), QR in that dtype
    flat = _normal_array(_gen(generator), (rows, cols), dt, 0.0, 1.0)
    if rows < cols:
        flat = flat.T
    q, r = _np.linalg.qr(flat)
    q *= _np.sign(_np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor._data.shape))


@_no_draw_on_meta
def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: _Generator | None = None
) -> Tensor:
    """Fill a 2-D tensor from N(0, std**2) with a fraction ``sparsity`` of each column
    (``ceil(sparsity * rows)`` entries at random rows) set to zero."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._data.shape
    zeros = int(math.ceil(sparsity * rows))
    values = _normal(tensor, 0.0, std, generator)
    for col in range(cols):  # as PyTorch: one randperm of the rows per column, default generator
        values[_kr.randperm(_gen(None), rows)[:zeros], col] = 0
    return _fill(tensor, values)


def _deprecated(new: Callable) -> Callable:
    """The old non-underscore name of an init function: warns, then calls ``new``."""
    old = new.__name__[:-1]

    def fn(*args: _Any, **kwargs: _Any) -> Tensor:
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = old
    fn.__doc__ = f"Deprecated: use :func:`{new.__name__}`."
    return fn


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)


# PyTorch's private no-grad fillers, which libraries call directly (PyG's GraphMask explainer);
# the public initialisers here never record a graph, so these are the same functions.
def _no_grad_uniform_(tensor: Tensor, a: float, b: float, generator: _Generator | None = None) -> Tensor:
    return uniform_(tensor, a, b, generator)


def _no_grad_normal_(tensor: Tensor, mean: float, std: float, generator: _Generator | None = None) -> Tensor:
    return normal_(tensor, mean, std, generator)


def _no_grad_trunc_normal_(
    tensor: Tensor, mean: float, std: float, a: float, b: float, generator: _Generator | None = None
) -> Tensor:
    return trunc_normal_(tensor, mean, std, a, b, generator)


def _no_grad_fill_(tensor: Tensor, val: float) -> Tensor:
    return constant_(tensor, val)


def _no_grad_zero_(tensor: Tensor) -> Tensor:
    return zeros_(tensor)
