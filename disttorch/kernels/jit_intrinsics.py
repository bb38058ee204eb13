"""Processor operations the compiled loops need and numba does not offer, as LLVM intrinsics
(numba, the ``fast`` extra): a float32 fused multiply-add and the reinterpretation of a
float32's bits as an int32 and back. Each compiles to one instruction and vectorises.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["bits_to_float32", "float32_bits", "fma32"]


@intrinsic
def fma32(typingctx, a, b, c):  # pragma: no cover - compiled
    """float32 ``a * b + c`` rounded once: the processor's fused multiply-add (``llvm.fma.f32``)."""
    if not all(t == types.float32 for t in (a, b, c)):
        return None

    def codegen(context, builder, signature, args):
        f = ir.FloatType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f, [f, f, f]), "llvm.fma.f32")
        return builder.call(fn, args)

    return types.float32(types.float32, types.float32, types.float32), codegen


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
