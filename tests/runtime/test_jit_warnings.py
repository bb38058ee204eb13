"""numba compiling a kernel in the middle of a program does not make Python show the
program's warnings again (PyTorch shows a warning once per line under the default filter)."""

import warnings

import pytest

from disttorch.kernels.jit import njit


def _program_line() -> None:
    warnings.warn("shown once per line", UserWarning, stacklevel=1)


def test_a_kernel_compiled_mid_program_does_not_show_warnings_again():
    numba = pytest.importorskip("numba")
    njit()  # the kernels' decorator: it guards numba's compiler lock
    mutated = warnings._filters_mutated
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        _program_line()
        assert numba.njit(lambda x: x + 1)(1) == 2  # compiles: numba's catch_warnings blocks
        _program_line()
    assert [str(w.message) for w in seen] == ["shown once per line"]
    assert warnings._filters_mutated is mutated  # restored once numba let go of its lock


def test_a_ufunc_built_mid_program_does_not_show_warnings_again():
    """numba's ufunc builder leaves its ``catch_warnings`` block outside the compiler lock:
    :func:`vectorize` keeps the shown warnings across it too (the fused multiply-add ufunc,
    built at the first optimizer step, made vtrace programs print NumPy's warnings twice)."""
    pytest.importorskip("numba")
    from disttorch.kernels.jit import vectorize

    mutated = warnings._filters_mutated
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        _program_line()
        twice = vectorize(["float64(float64)"], nopython=True)(lambda x: 2.0 * x)
        _program_line()
    assert twice(1.5) == 3.0
    assert [str(w.message) for w in seen] == ["shown once per line"]
    assert warnings._filters_mutated is mutated
