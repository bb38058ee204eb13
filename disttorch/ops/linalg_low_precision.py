"""PyTorch's errors for a float16 or bfloat16 input of a LAPACK-backed linear-algebra
function: its CPU build has no 16-bit loop there, and which error a program sees depends on
the function (``torch.linalg.det`` reaches the LU kernel, ``"lu_cpu" not implemented for
'Half'``; ``torch.linalg.inv`` checks first, ``linalg.inv: Low precision dtypes not
supported. Got Half``). The checks of ``linalg_functions`` and its kin call
``refuse_low_precision`` with the name they report under."""

from __future__ import annotations

import numpy as np

from .._dtype import scalar_type_name
from .opmath import is_low

__all__ = ["refuse_low_precision"]

_LOW = "{name}: Low precision dtypes not supported. Got {T}"
_ONLY_REAL = "This function doesn't handle types other than float and double"

#: a check's name -> the kernel PyTorch names in its NotImplementedError, or (for a
#: RuntimeError) the message, with ``{name}``, ``{T}`` (the scalar type) and ``{shape}``
_ERRORS: dict[str, str | tuple[str]] = {
    "linalg.inv": (_LOW,),
    "linalg.inv_ex": (_LOW.replace("{name}", "linalg.inv"),),
    "linalg.slogdet": (_LOW,),
    "logdet": (_LOW,),
    "linalg.matrix_norm": (_LOW,),
    "linalg.pinv": (
        "linalg.pinv({T}{shape}): expected a tensor with 2 or more dimensions of float, double, cfloat "
        "or cdouble types",
    ),
    "linalg.matrix_rank": (_ONLY_REAL,),
    "linalg.lstsq": (_ONLY_REAL,),
    "linalg.det": "lu_cpu",
    "linalg.solve": "lu_cpu",
    "linalg.lu_factor": "lu_cpu",
    "linalg.lu_solve": "linalg.lu_solve_cpu",
    "linalg.cholesky": "cholesky_cpu",
    "linalg.cholesky_ex": "cholesky_cpu",
    "cholesky_inverse": "cholesky_inverse_out_cpu",
    "cholesky_solve": "cholesky_solve_cpu",
    "linalg.qr": "geqrf_cpu",
    "geqrf": "geqrf_cpu",
    "linalg.eigh": "linalg_eigh_cpu",
    "linalg.eig": "linalg_eig_out_cpu",
    "linalg.eigvals": "linalg_eig_out_cpu",
    "linalg.svd": "linalg_svd_cpu",
    "linalg.cond": "linalg_svd_cpu",
    "linalg.solve_triangular": "triangular_solve_cpu",
    "linalg.ldl_factor": "ldl_factor_kernel_cpu",
    "linalg.ldl_solve": "ldl_solve_kernel_cpu",
    "torch.linalg.householder_product": "orgqr_cpu",
    "orgqr": "orgqr_cpu",
    "torch.ormqr": "ormqr_cpu",
}


def refuse_low_precision(name: str, dtype: np.dtype, shape: tuple = ()) -> None:
    """PyTorch's error when ``dtype`` is float16 or bfloat16 and the function checked as
    ``name`` has no such loop (a name it lacks: the generic "Expected a floating point"
    error of the caller follows)."""
    if not is_low(dtype) or name not in _ERRORS:
        return
    error = _ERRORS[name]
    scalar = scalar_type_name(dtype)
    if isinstance(error, str):
        raise NotImplementedError(f"\"{error}\" not implemented for '{scalar}'")
    dims = "[" + ", ".join(map(str, shape)) + "]"
    raise RuntimeError(error[0].format(name=name, T=scalar, shape="{" + dims + "}"))
