"""Processor operations the compiled loops need and numba does not offer, as LLVM intrinsics
(numba, the ``fast`` extra): float32 and float64 fused multiply-adds and the reinterpretation of a
float32's bits as an int32 and back. Each compiles to one instruction and vectorises.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["bits_to_float32", "float32_bits", "fma", "fma32"]


_LLVM_FLOATS = {types.float32: (ir.FloatType(), "f32"), types.float64: (ir.DoubleType(), "f64")}


@intrinsic
def fma(typingctx, a, b, c):  # pragma: no cover - compiled
    """``a * b + c`` rounded once, three float32 or three float64 numbers: the processor's
    fused multiply-add (``llvm.fma``)."""
    if a not in _LLVM_FLOATS or b != a or c != a:
        return None
    llvm_type, name = _LLVM_FLOATS[a]

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(llvm_type, [llvm_type] * 3), f"llvm.fma.{name}"
        )
        return builder.call(fn, args)

    return a(a, a, a), codegen


#: The float32 loops' name for :func:`fma`.
fma32 = fma


@intrinsic
def float32_bits(typingctx, x):  # pragma: no cover - compiled
    """The bits of float32 ``x`` as an int32."""
    if x != types.float32:
        return None
    return types.int32(types.float32), lambda context, builder, sig, args: builder.bitcast(
        args[0], ir.IntType(32)
    )


@intrinsic
def bits_to_float32(typingctx, b):  # pragma: no cover - compiled
    """The float32 whose bits are int32 ``b``."""
    if b != types.int32:
        return None
    return types.float32(types.int32), lambda context, builder, sig, args: builder.bitcast(
        args[0], ir.FloatType()
    )
