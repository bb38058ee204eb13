"""``assert_close``: are two tensors (or numbers, or nested sequences/mappings of them) close?

Follows ``torch.testing.assert_close``: default tolerances by dtype (the looser of the two
inputs'), attribute checks (shape, dtype), NaN handling and the same failure messages, so a
test written against PyTorch reads the same here.
"""

from __future__ import annotations

import collections.abc
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._creation import tensor
from .._tensor import Tensor

__all__ = ["assert_allclose", "assert_close"]

# (rtol, atol) by NumPy dtype name; integers and bool compare exactly
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_NUMBER = (bool, int, float, complex, np.number, np.bool_)


class _Fail(AssertionError):
    """A mismatch, with the path of the item it occurred at."""

    def __init__(self, message: str, path: tuple = ()) -> None:
        super().__init__(message)
        self.message, self.path = message, path


#: the older ``assert_allclose``'s defaults
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def _tolerances(*dtypes: np.dtype, table: dict = _TOLERANCES) -> tuple[float, float]:
    pairs = [table.get(d.name, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _dtype_name(a: Any) -> str:
    return str(a.dtype) if isinstance(a, Tensor) else f"torch.{np.asarray(a).dtype.name}"


def _compare_leaf(
    actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool, check_dtype: bool
) -> None:
    scalars = isinstance(actual, _NUMBER) and isinstance(expected, _NUMBER)
    for v in (actual, expected):
        if not isinstance(v, (Tensor, np.ndarray, *_NUMBER)):
            raise TypeError(
                f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
            )
    if isinstance(actual, Tensor) != isinstance(expected, Tensor) and not scalars:
        raise _Fail(f"The values for attribute 'type' do not match: {type(actual)} != {type(expected)}.")
    a = actual._data if isinstance(actual, Tensor) else np.asarray(actual)
    e = expected._data if isinstance(expected, Tensor) else np.asarray(expected)
    if scalars:  # Python numbers: float -> float64, int -> int64, as PyTorch compares them
        a, e = (
            np.asarray(actual, dtype=np.result_type(actual)),
            np.asarray(expected, dtype=np.result_type(expected)),
        )
    if a.shape != e.shape:
        raise _Fail(
            f"The values for attribute 'shape' do not match: torch.Size({list(a.shape)}) != "
            f"torch.Size({list(e.shape)})."
        )
    if check_dtype and a.dtype != e.dtype:
        if scalars:
            raise _Fail(f"The values for attribute 'type' do not match: {type(actual)} != {type(expected)}.")
        raise _Fail(
            f"The values for attribute 'dtype' do not match: {_dtype_name(actual)} != "
            f"{_dtype_name(expected)}."
        )
    if rtol is None:
        rtol, atol = _tolerances(a.dtype, e.dtype)
    common = np.result_type(a.dtype, e.dtype)
    if common == np.bool_:
        common = np.dtype(np.int64)
    a, e = a.astype(common, copy=False), e.astype(common, copy=False)
    exact = rtol == 0 and atol == 0
    if common.kind in "fc":
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
            close |= a == e  # equal infinities
    else:
        close = a == e if exact else np.abs(a - e) <= atol + rtol * np.abs(e)
    if bool(close.all()):
        return
    raise _Fail(_mismatch_message(a, e, close, rtol, atol, exact, scalars or a.size == 1))


def _mismatch_message(
    a: np.ndarray, e: np.ndarray, close: np.ndarray, rtol: float, atol: float, exact: bool, scalar: bool
) -> str:
    diff_type = a.dtype if a.dtype.kind in "fc" else np.dtype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a.astype(diff_type) - e.astype(diff_type))
        rel_type = abs_diff.dtype if a.dtype.kind in "fc" else np.dtype(np.float32)  # complex: real
        rel_diff = abs_diff.astype(rel_type) / np.abs(e).astype(rel_type)
    word = "equal" if exact else "close"
    allowed_a = "" if exact else f" (up to {atol} allowed)"
    allowed_r = "" if exact else f" (up to {rtol} allowed)"
    if scalar:
        return (
            f"Scalars are not {word}!\n\nExpected {e.reshape(()).item()} but got {a.reshape(()).item()}.\n"
            f"Absolute difference: {abs_diff.reshape(()).item()}{allowed_a}\n"
            f"Relative difference: {rel_diff.reshape(()).item()}{allowed_r}"
        )
    bad = ~close
    n_bad, n = int(bad.sum()), close.size
    masked_abs = np.where(bad, np.nan_to_num(abs_diff, nan=np.inf), -np.inf if diff_type.kind == "f" else -1)
    masked_rel = np.where(bad, np.nan_to_num(rel_diff, nan=np.inf), -np.inf)
    ia = np.unravel_index(int(np.argmax(masked_abs)), a.shape)
    ir = np.unravel_index(int(np.argmax(masked_rel)), a.shape)
    return (
        f"Tensor-likes are not {word}!\n\nMismatched elements: {n_bad} / {n} ({100 * n_bad / n:.1f}%)\n"
        f"Greatest absolute difference: {abs_diff[ia].item()} at index {tuple(int(i) for i in ia)}{allowed_a}\n"
        f"Greatest relative difference: {rel_diff[ir].item()} at index {tuple(int(i) for i in ir)}{allowed_r}"
    )


def _compare(actual: Any, expected: Any, path: tuple, **kw: Any) -> None:
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        ka, ke = set(actual), set(expected)
        if ka != ke:
            raise _Fail(
                "The keys of the mappings do not match:\n"
                + (f"Missing keys in the actual mapping: {sorted(ke - ka, key=repr)}\n" if ke - ka else "")
                + (
                    f"Additional keys in the actual mapping: {sorted(ka - ke, key=repr)}" if ka - ke else ""
                ).rstrip("\n"),
                path,
            )
        for k in expected:
            _compare(actual[k], expected[k], (*path, k), **kw)
        return
    seq = collections.abc.Sequence
    if (
        isinstance(actual, seq)
        and isinstance(expected, seq)
        and not isinstance(actual, str)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _Fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, (*path, i), **kw)
        return
    try:
        _compare_leaf(actual, expected, **kw)
    except _Fail as f:
        raise _Fail(f.message, path) from None


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Assert that ``actual`` and ``expected`` are close: ``|actual - expected| <= atol +
    rtol * |expected|`` elementwise, after checking shape and (``check_dtype``) dtype.

    Tensors, NumPy arrays, Python numbers, and sequences/mappings of them (compared item by
    item) are accepted. Without ``rtol``/``atol`` the defaults follow the dtype (float32:
    1.3e-6 and 1e-5; float64: 1e-7 and 1e-7; float16: 1e-3 and 1e-5; integers: exact).
    ``msg`` replaces the message (a callable receives the generated one). Raises
    AssertionError on a mismatch, TypeError for inputs that cannot be compared.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    try:
        _compare(actual, expected, (), rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype)
    except _Fail as f:
        text = f.message
        if f.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in f.path)
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise AssertionError(text) from None


def assert_allclose(
    actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None, equal_nan: bool = True,
    msg: str = "",
) -> None:  # fmt: skip
    """Deprecated since PyTorch 1.12 (a ``FutureWarning``, as PyTorch's): :func:`assert_close`
    without the dtype check, NaNs equal, numbers made tensors of ``actual``'s dtype, and the
    older defaults (float32: ``rtol=1e-4``, ``atol=1e-5``; float64: ``1e-5``, ``1e-8``)."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
        "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
        "https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    actual = actual if isinstance(actual, Tensor) else tensor(actual)
    expected = expected if isinstance(expected, Tensor) else tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual._data.dtype, expected._data.dtype, table=_ALLCLOSE_TOLERANCES)
    assert_close(
        actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None
    )
