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
