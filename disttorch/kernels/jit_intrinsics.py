"""Processor operations the compiled loops need and numba does not offer, as LLVM intrinsics
(numba, the ``fast`` extra): float32 and float64 fused multiply-adds and the reinterpretation of a
float32's bits as an int32 and back. Each compiles to one instruction and vectorises.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["bits_to_float32", "float32_bits", "fma32", "fma64"]


def _fma_of(numba_type: types.Float, llvm_type: ir.Type, name: str) -> Any:
    """The processor's fused multiply-add ``a * b + c`` (``llvm.fma``) on ``numba_type``."""

    def typer(typingctx, a, b, c):  # pragma: no cover - compiled
        if not all(t == numba_type for t in (a, b, c)):
            return None

        def codegen(context, builder, signature, args):
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(llvm_type, [llvm_type] * 3), f"llvm.fma.{name}"
            )
            return builder.call(fn, args)

        return numba_type(numba_type, numba_type, numba_type), codegen

    typer.__name__ = f"fma{name[1:]}"
    return intrinsic(typer)


#: float32 ``a * b + c`` rounded once: the processor's fused multiply-add (``llvm.fma.f32``).
fma32 = _fma_of(types.float32, ir.FloatType(), "f32")
#: float64 ``a * b + c`` rounded once (``llvm.fma.f64``).
fma64 = _fma_of(types.float64, ir.DoubleType(), "f64")


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
