"""PyTorch-style printing of tensors: ``tensor([[1., 2.]], requires_grad=True)``.

The layout follows PyTorch's rules: one formatter per tensor decides between integer
mode (``1.``), fixed point with 4 decimals and scientific notation from the range of the
non-zero finite values, and pads every element to a common width; tensors of more than
1000 elements are summarised with ``...`` (3 items at each edge); lines wrap at 80
columns; ``dtype=`` is shown unless it is the default float, int64 or bool; then
``grad_fn=<...>`` or ``requires_grad=True``. ``set_printoptions`` changes these numbers.
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtype
from ._meta_array import MetaArray
from ._public_name import is_disttorch_class, package_name

__all__ = ["tensor_repr", "set_printoptions"]

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
_PROFILES = {
    "default": _DEFAULTS,
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": float("inf"), "edgeitems": 3, "linewidth": 80},
}
_opts = dict(_DEFAULTS)


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, as ``torch.set_printoptions``: digits after the point,
    element count above which prints are summarised, items kept at each edge, line width,
    a ``profile`` ('default', 'short', 'full') and ``sci_mode`` (None: automatic)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        _opts.update(_PROFILES[profile])
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            _opts[name] = value
    _opts["sci_mode"] = sci_mode


class _Formatter:
    """Formats every element of one tensor to the same width."""

    def __init__(self, arr: np.ndarray) -> None:
        self.precision = _opts["precision"]
        self.floating = arr.dtype.kind in "fV"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = arr.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if vals.size == 0:
            return
        mag = np.abs(vals)
        lo, hi = mag.min(), mag.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        if _opts["sci_mode"] is not None:  # forced before the widths, as PyTorch's
            self.sci_mode = _opts["sci_mode"]
        self.max_width = max(len(self._text(v)) for v in vals.tolist())

    def _text(self, v: float) -> str:
        p = self.precision
        if self.sci_mode:
            return f"{v:.{p}e}"
        if self.int_mode:
            return f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        return f"{v:.{p}f}"

    def format(self, v) -> str:
        if self.floating:
            s = self._text(v)
        else:
            s = str(v)
        return s.rjust(self.max_width)


class _ComplexFormatter:
    """Formats complex elements as PyTorch does: the real parts padded by one formatter, the
    imaginary parts by another, joined with their sign and a ``j`` (``1.0000+2.j``)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.real, self.imag = _Formatter(arr.real), _Formatter(arr.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, v: complex) -> str:
        re_s = self.real.format(v.real)
        im_s = (self.imag.format(v.imag) + "j").lstrip()
        return re_s + (im_s if im_s[0] in "+-" else "+" + im_s)


def _formatter(arr: np.ndarray) -> "_Formatter | _ComplexFormatter":
    return _ComplexFormatter(arr) if arr.dtype.kind == "c" else _Formatter(arr)


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The edges of ``arr`` that a summarised print shows (for sizing the formatter)."""
    if arr.ndim == 0:
        return arr
    edge = _opts["edgeitems"]
    if arr.shape[0] > 2 * edge:
        arr = np.concatenate([arr[:edge], arr[-edge:]])
    if arr.ndim == 1:
        return arr
    return np.stack([_summarized(row) for row in arr])


def _vector(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, (_opts["linewidth"] - indent) // (fmt.max_width + 2))
    edge = _opts["edgeitems"]
    if summarize and arr.shape[0] > 2 * edge:
        items = (
            [fmt.format(v) for v in arr[:edge].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in arr[-edge:].tolist()]
        )
    else:
        items = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _body(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item()).lstrip()
    if arr.ndim == 1:
        return _vector(arr, indent, summarize, fmt)
    n, edge = arr.shape[0], _opts["edgeitems"]
    if summarize and n > 2 * edge:
        rows = (
            [_body(arr[i], indent + 1, summarize, fmt) for i in range(edge)]
            + ["..."]
            + [_body(arr[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
        )
    else:
        rows = [_body(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _with_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last_line + len(s) + 2 > _opts["linewidth"]:
            parts.append(",\n" + " " * indent + s)
            last_line = indent + len(s)
        else:
            parts.append(", " + s)
            last_line += len(s) + 2
    return "".join(parts) + ")"


def array_body(arr: np.ndarray, indent: int) -> str:
    """The bracketed elements of ``arr`` as ``tensor_repr`` prints them, continuation lines
    starting at column ``indent`` (for reprs that nest tensors, e.g. sparse ones)."""
    if arr.size == 0:
        return "[]"
    summarize = arr.size > _opts["threshold"]
    return _body(arr, indent, summarize, _Formatter(_summarized(arr) if summarize else arr))


def with_suffixes(text: str, suffixes: list, indent: int) -> str:
    """``text`` followed by ``, suffix`` items, wrapped at the print width, and ``)``."""
    return _with_suffixes(text, suffixes, indent)


def tensor_repr(t, contents: str | None = None) -> str:
    """The ``repr`` of a tensor in PyTorch's form; ``contents``, when given, stands in for its
    bracketed elements (a tensor subclass's own, e.g. PyG's ``HashTensor`` by key)."""
    arr = t._data
    kind = type(t)
    own = is_disttorch_class(kind)
    prefix = "tensor(" if own else f"{kind.__name__}("  # a user's subclass shows its name
    indent = len(prefix)
    suffixes = []
    body = contents
    if type(arr) is MetaArray:  # no data to show
        body = "..."
        suffixes += ["device='meta'", f"size={tuple(arr.shape)}"]
    elif arr.size == 0:  # no elements to tell an integer dtype by: any but the default is named
        body = "[]"
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
    elif contents is None:
        summarize = arr.size > _opts["threshold"]
        fmt = _formatter(_summarized(arr) if summarize else arr)
        body = _body(arr, indent, summarize, fmt)
    name = arr.dtype.name
    implied = (_dtype.get_default_dtype().name,)  # a meta tensor's repr names every other dtype
    if type(arr) is not MetaArray and arr.size:
        implied += (_dtype.default_complex().name, "int64", "bool")
    if name not in implied:
        suffixes.append(f"dtype={package_name()}.{name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    text = _with_suffixes(prefix + (body if contents is None else contents), suffixes, indent)
    if not own and getattr(t, "__dict__", {}).get("_is_param"):  # a subclass made a Parameter
        return f"Parameter({text})"
    return text
