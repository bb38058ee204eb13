"""Float ``exp``, ``log``, ``tanh``, ... with PyTorch's CPU build's bits where possible.

PyTorch's x86 builds evaluate float32 and float64 ``exp``, ``log``, ``log2``, ``log10``, ``sin``,
``cos``, ``tan``, ``tanh``, ``asin``, ``acos``, ``atan``, ``erf``, ``erfc``, ``erfinv`` and
``sqrt`` with MKL's vector math functions (VML) in their high-accuracy mode, denormals kept.
Where MKL's runtime is installed (the ``mkl`` wheel: ``pip install disttorch[mkl]``), the
functions here call those same functions: PyTorch's bits. Without it a float32 input is
computed in float64 and rounded once: the correctly rounded value, which VML's high-accuracy
mode returns for some 99% of the inputs, where NumPy's own float32 loops differ from it in
10-50% of the elements by one or two units in the last place. That costs 2-8x NumPy's
float32 loop, so the functions of training's hot paths (``sqrt``, ``erf``) keep NumPy's
float32 loop without MKL (``widen=False``): within three units in the last place of
PyTorch's, and faster than PyTorch's. ``exp`` is widened: on an AVX-512 machine that took
2.2x NumPy's float32 loop, as long as PyTorch's own one-thread ``exp``, and programs print
its values (NumPy's loop was off in 39% of the elements). ``log``, ``tanh``, ``sin`` and
``cos`` are rounded once by compiled loops (``float32_loop``,
:mod:`disttorch.kernels.rounded_loops`: 1.6-3.5x NumPy's float32 loop) where numba is
installed, else they keep NumPy's float32 loop. (On an AMD machine MKL's float32 ``log``,
``sin`` and ``cos`` are themselves off the correctly rounded value in some 1-8% of the
elements: those stay a unit apart.)
"""

from __future__ import annotations

import ctypes
import functools
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from .jit import compiled

__all__ = [
    "c_log",
    "c_log1p",
    "mkl_runtime",
    "rounded_cos",
    "rounded_log",
    "rounded_sin",
    "rounded_tanh",
    "sleef_log1p",
    "sqrt",
    "unary",
    "LOADED",
]

_MODE = 0x2 | 0x140000 | 0x100  # VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE
_CHUNK = 2**31 - 1  # MKL_INT is 32-bit (LP64)
_SEQUENTIAL = 1  # MKL_THREADING_SEQUENTIAL: disttorch's threads split the work
#: the path of the MKL runtime loaded here (not a BLAS for NumPy's products: see threads.hold_blas)
LOADED: list[str] = []


@functools.cache
def mkl_runtime() -> ctypes.CDLL | None:
    """MKL's single dynamic library (``libmkl_rt``) from this environment, or ``None``."""
    for directory in dict.fromkeys((Path(sys.prefix) / "lib", Path(sys.base_prefix) / "lib")):
        for name in ("libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"):
            path = directory / name
            if path.exists():
                try:
                    lib = ctypes.CDLL(str(path))
                    lib.MKL_Set_Threading_Layer(ctypes.c_int(_SEQUENTIAL))
                    LOADED.append(str(path.resolve()))
                    return lib
                except (OSError, AttributeError):
                    continue
    return None


@functools.cache
def _vml_function(name: str) -> Callable:
    """MKL's ``name`` (``vmsExp``...) with its argument types: ``(n, x, out, mode)``."""
    fn = getattr(mkl_runtime(), name)
    fn.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong)
    fn.restype = None
    return fn


def _dense_map(x: np.ndarray, fill: Callable[[np.ndarray, np.ndarray], None]) -> np.ndarray:
    """``fill(src, dst)`` over the elements of ``x`` as two 1-D arrays in memory order, the
    result laid out as NumPy's element-wise functions lay it out (a dense ``x``'s layout
    kept: channels-last stays so)."""
    out = np.empty_like(x)
    order = np.argsort([-abs(s) for s in x.strides], kind="stable")  # memory order of the dims
    src, dst = x.transpose(order), out.transpose(order)
    if not (src.flags.c_contiguous and dst.flags.c_contiguous):  # not dense: a C-ordered copy
        src, out = np.ascontiguousarray(x).reshape(x.shape), np.empty(x.shape, x.dtype)
        dst = out
    fill(src.reshape(-1), dst.reshape(-1))
    return out


def _mkl_call(name: str, x: np.ndarray) -> np.ndarray:
    """MKL's VML function ``name`` over the elements of ``x`` (see :func:`_dense_map`)."""
    fn = _vml_function(name)

    def fill(src: np.ndarray, dst: np.ndarray) -> None:
        start_src, start_dst, item = src.ctypes.data, dst.ctypes.data, x.itemsize
        for start in range(0, x.size, _CHUNK):
            fn(min(_CHUNK, x.size - start), start_src + start * item, start_dst + start * item, _MODE)

    return _dense_map(x, fill)


def _load_rounded_loops():
    from . import rounded_loops

    return rounded_loops


def _load_vec_log_loops():
    from . import vec_log_loops

    return vec_log_loops


def sleef_log1p(x: np.ndarray) -> np.ndarray | None:
    """Float32 ``log1p(x)`` with SLEEF's ``log1pf`` on every element, as PyTorch's kernel (a
    vectorised map: a short tail too), or ``None`` without numba."""
    loops = compiled(_load_vec_log_loops)
    return None if loops is None else _dense_map(x, loops.log1p)


def c_log(x: np.ndarray) -> np.ndarray | None:
    """Float32 ``log(x)`` by the C library's ``logf`` (PyTorch's scalar loops': not always the
    correctly rounded value), or ``None`` without numba."""
    loops = compiled(_load_vec_log_loops)
    return None if loops is None else _dense_map(x, loops.c_log)


def c_log1p(x: np.ndarray) -> np.ndarray | None:
    """Float32 ``log1p(x)`` by the C library's ``log1pf`` (as :func:`c_log`), or ``None``."""
    loops = compiled(_load_vec_log_loops)
    return None if loops is None else _dense_map(x, loops.c_log1p)


def rounded_log(x: np.ndarray) -> np.ndarray | None:
    """Float32 ``log(x)`` in float64 rounded once by a compiled loop, or ``None`` without numba."""
    loops = compiled(_load_rounded_loops)
    if loops is None:
        return None
    return _dense_map(x, lambda src, dst: loops.log(src.view(np.int32), src, dst))


def rounded_sin(x: np.ndarray) -> np.ndarray | None:
    """Float32 ``sin(x)`` in float64 rounded once by a compiled loop, or ``None`` without numba."""
    loops = compiled(_load_rounded_loops)
    return None if loops is None else _dense_map(x, loops.sin)


def rounded_cos(x: np.ndarray) -> np.ndarray | None:
    """Float32 ``cos(x)`` in float64 rounded once by a compiled loop, or ``None`` without numba."""
    loops = compiled(_load_rounded_loops)
    return None if loops is None else _dense_map(x, loops.cos)


def rounded_tanh(x: np.ndarray) -> np.ndarray | None:
    """Float32 ``tanh(x)`` in float64 rounded once by a compiled loop, or ``None`` without numba."""
    loops = compiled(_load_rounded_loops)
    return None if loops is None else _dense_map(x, loops.tanh)


def unary(
    ufunc: Callable,
    vml_name: str | None,
    widen: bool = True,
    float32_loop: Callable[[np.ndarray], np.ndarray | None] | None = None,
) -> Callable[[np.ndarray], np.ndarray]:
    """``x -> ufunc(x)`` computed as PyTorch's CPU build does where that is known: MKL's VML
    function ``vml_name`` (``"Exp"``, ``"Ln"``...) for float32/float64 when MKL is installed;
    else float32 by ``float32_loop`` (a compiled loop: ``None`` without numba), or with
    ``widen`` in float64 rounded once; other dtypes by ``ufunc``."""

    def f(x: np.ndarray) -> np.ndarray:
        if x.dtype == np.float32 or (x.dtype == np.float64 and vml_name):
            lib = mkl_runtime() if vml_name else None
            if lib is not None:
                return _mkl_call(("vms" if x.dtype == np.float32 else "vmd") + vml_name, x)
            if x.dtype == np.float32 and float32_loop is not None:
                out = float32_loop(x)
                if out is not None:
                    return out
            if widen and x.dtype == np.float32:
                return np.asarray(ufunc(x, dtype=np.float64)).astype(np.float32)
        return ufunc(x)

    f.__name__ = f.__qualname__ = getattr(ufunc, "__name__", "unary")
    return f


#: float32/float64 ``sqrt`` as PyTorch's CPU build computes it (``torch.sqrt``, and the
#: optimizers' steps): MKL's where installed, else NumPy's correctly rounded loop
sqrt = unary(np.sqrt, "Sqrt", widen=False)

#: float32/float64 ``tanh`` as PyTorch's CPU build computes it (``torch.tanh``, and the Elman
#: RNN's steps)
tanh = unary(np.tanh, "Tanh", widen=False, float32_loop=rounded_tanh)
