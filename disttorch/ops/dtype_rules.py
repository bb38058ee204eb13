"""PyTorch's dtype rules for ops that do not simply promote: which refuse mixed dtypes, and
with which words, and which kernels refuse a dtype altogether.

Most binary ops promote their operands (``result_type``). These do not, and each message is
PyTorch's own, so a program that catches or prints it sees the same thing:

- ``cross``, ``einsum``: every operand must have the first one's dtype.
- ``lerp``: ``end`` and a tensor ``weight`` must have ``input``'s dtype; floating and complex
  inputs only.
- ``index_add``, ``index_copy``, ``index_put``, ``put``, ``masked_scatter``: the source must
  have the destination's dtype.
- ``addcdiv``: no integer division; ``addcmul``: no bool result.
- subtraction: no bool operand (tensor or Python bool).

Many binary kernels promote their operands but have no loop for some of the dtypes they
promote to (``fmod`` of two bools, ``gcd`` of floats, ``nextafter`` of integers): ``KERNELS``
lists them, and ``check_kernel`` raises PyTorch's ``"fmod_cpu" not implemented for 'Bool'``.
PyTorch checks that an in-place form can hold the promoted dtype *before* it picks a kernel,
so the error carries that dtype (``promoted_dtype``) for the in-place machinery to check first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import c_type_name, result_type, scalar_type_name
from .._tensor import Tensor
from ._helpers import arr

__all__ = [
    "KERNELS",
    "check_cast",
    "check_kernel",
    "kernel_error",
    "refuse_kernel",
    "require_same_scalar_type",
    "require_lerp_dtypes",
    "require_source_dtype",
    "refuse_integer_addcdiv",
    "refuse_bool_subtraction",
]

INTEGRAL = "biu"  # NumPy kinds of bool and integer dtypes

_SOURCE_MESSAGES = {
    "index_add": "index_add_(): self ({self}) and source ({source}) must have the same scalar type",
    "index_copy": (
        "index_copy_(): self and source expected to have the same dtype, but got (self) {self} and (source) {source}"
    ),
    "index_put": (
        "Index put requires the source and destination dtypes match, got {self} for the destination "
        "and {source} for the source."
    ),
    "put": (
        "put_(): self and source expected to have the same dtype, but got self.dtype = {self} and "
        "source.dtype = {source}"
    ),
    "masked_scatter": "masked_scatter: expected self and source to have same dtypes but got{self} and {source}",
}


# op -> (PyTorch's CPU kernel, the NumPy kinds of promoted dtypes it has no loop for:
# b bool, i/u integers, f/V floating (V is bfloat16), c complex), as PyTorch 2.13 answers
_NOT_FLOAT = "biuc"
KERNELS = {
    "atan2": ("atan2_cpu", "c"),
    "fmod": ("fmod_cpu", "bc"),
    "remainder": ("remainder_cpu", "bc"),
    "floor_divide": ("div_floor_cpu", "bc"),
    "bitwise_and": ("bitwise_and_cpu", "fVc"),
    "bitwise_or": ("bitwise_or_cpu", "fVc"),
    "bitwise_xor": ("bitwise_xor_cpu", "fVc"),
    "bitwise_left_shift": ("lshift_cpu", "bfVc"),
    "bitwise_right_shift": ("rshift_cpu", "bfVc"),
    "gcd": ("gcd_cpu", "bfVc"),
    "lcm": ("lcm_cpu", "bfVc"),
    "hypot": ("hypot_cpu", _NOT_FLOAT),
    "logaddexp": ("logaddexp_cpu", "biu"),
    "logaddexp2": ("logaddexp2_cpu", _NOT_FLOAT),
    "nextafter": ("nextafter_cpu", _NOT_FLOAT),
    "igamma": ("igamma_cpu", _NOT_FLOAT),
    "igammac": ("igammac_cpu", _NOT_FLOAT),
    "copysign": ("copysign_cpu", "c"),
    "xlogy": ("xlogy_cpu", "c"),
    "xlog1py": ("xlog1py_cpu", "c"),
    "pow": ("pow", "b"),
    "mse_loss": ("mse_cpu", "biuc"),
    "huber_loss": ("huber_cpu", "biuc"),
    "smooth_l1_loss": ("smooth_l1_cpu", "biuc"),
}


def _operand_array(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def check_cast(src: np.dtype, dst: np.dtype) -> None:
    """PyTorch's rule for writing a result of dtype ``src`` into a tensor of dtype ``dst``
    (in-place, ``out=``): no float into integer, nothing but bool into bool."""
    if (
        (src.kind in "fVc" and dst.kind in "iub")
        or (dst.kind == "b" and src.kind != "b")
        or (src.kind == "c" and dst.kind != "c")
    ):
        raise RuntimeError(
            f"result type {scalar_type_name(src)} can't be cast to "
            f"the desired output type {scalar_type_name(dst)}"
        )


def kernel_error(kernel: str, dtype: np.dtype) -> NotImplementedError:
    """PyTorch's ``"kernel" not implemented for 'Bool'`` for the promoted ``dtype``, which the
    error carries as ``promoted_dtype``."""
    error = NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")
    error.promoted_dtype = dtype
    return error


def check_kernel(op: str, input: Any, other: Any) -> np.dtype:
    """The dtype ``input`` and ``other`` (tensors or Python numbers) promote to; PyTorch's
    ``NotImplementedError`` when ``op``'s kernel has no loop for it (with the dtype as its
    ``promoted_dtype``)."""
    dtype = result_type(_operand_array(input), _operand_array(other))
    kernel, kinds = KERNELS[op]
    if dtype.kind in kinds:
        raise kernel_error(kernel, dtype)
    return dtype


def refuse_kernel(kernel: str, x: Tensor, kinds: str) -> None:
    """PyTorch's ``"kernel" not implemented for 'Bool'`` when ``x``'s dtype kind is in ``kinds``."""
    if x._data.dtype.kind in kinds:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(x._data.dtype)}'")


def require_same_scalar_type(first: Tensor, *others: Tensor) -> None:
    """Every tensor in ``others`` has ``first``'s dtype (``expected scalar type Float but found
    Long`` otherwise)."""
    want = first._data.dtype
    for t in others:
        if t._data.dtype != want:
            raise RuntimeError(
                f"expected scalar type {scalar_type_name(want)} but found {scalar_type_name(t._data.dtype)}"
            )


def require_lerp_dtypes(input: Tensor, end: Tensor, weight: Any) -> None:
    """``lerp``: ``end`` (and a tensor ``weight``) of ``input``'s dtype, which is floating or complex."""
    want = input._data.dtype
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t._data.dtype != want:
            raise RuntimeError(
                f"expected dtype {c_type_name(want)} for `{name}` but got dtype {c_type_name(t._data.dtype)}"
            )
    refuse_kernel(
        "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar", input, INTEGRAL
    )


def require_source_dtype(op: str, input: Tensor, source: Any) -> None:
    """The ``source`` of a scatter-like ``op`` has the destination's dtype."""
    if isinstance(source, Tensor) and source._data.dtype != input._data.dtype:
        raise RuntimeError(
            _SOURCE_MESSAGES[op].format(
                self=scalar_type_name(input._data.dtype), source=scalar_type_name(source._data.dtype)
            )
        )


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or (
        isinstance(x, (Tensor, np.ndarray)) and np.asarray(arr(x)).dtype.kind == "b"
    )


def refuse_bool_subtraction(a: Any, b: Any) -> None:
    """``a - b`` with a bool operand: PyTorch's two messages (two bools, or one)."""
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if a_bool or b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def refuse_integer_addcdiv(tensor1: Tensor, tensor2: Tensor) -> None:
    """``addcdiv`` of two integer (or bool) tensors: PyTorch removed the integer division."""
    if tensor1._data.dtype.kind in INTEGRAL and tensor2._data.dtype.kind in INTEGRAL:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
            "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
            "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
            "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
            "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes."
        )
