"""Warnings PyTorch raises from its C++ core (``TORCH_WARN``, ``TORCH_WARN_ONCE``).

Python sees such a warning at the line of Python code that called into the library, not at a
line inside it: :func:`warn` gives ``warnings.warn`` the stack level of the first frame outside
disttorch, so the default filter shows it once per line of the program, as PyTorch's. With
``once=True`` it is raised at most once per process (``TORCH_WARN_ONCE``) whatever the filters.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["quiet_numpy_float_errors", "warn", "warned"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: PyTorch's once-per-process warning on making a nested tensor of the strided layout (also
#: inside ``TransformerEncoder``'s fast path)
NESTED_PROTOTYPE = (
    "The PyTorch API of nested tensors is in prototype stage and will change in the near future. We "
    "recommend specifying layout=torch.jagged when constructing a nested tensor, as this layout receives "
    "active development, has better operator coverage, and works with torch.compile. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/NestedTensorImpl.cpp:177.)"
)
_warned_once: set[str] = set()


def warn(message: str, category: type[Warning] = UserWarning, *, once: bool = False) -> None:
    """Warn ``message`` at the program's line that called disttorch (see the module doc)."""
    if once:
        if message in _warned_once:
            return
        _warned_once.add(message)
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def warned(message: str) -> bool:
    """Whether ``message`` was already raised with ``once=True`` (a caller can skip its check)."""
    return message in _warned_once


def quiet_numpy_float_errors() -> None:
    """Ignore the ``RuntimeWarning``s NumPy raises for floating-point overflow, division by
    zero and invalid values inside disttorch's own code: PyTorch's kernels give inf/nan
    silently. Warnings of the program's own NumPy calls stay; no per-op cost (a filter is
    consulted only when a warning is raised)."""
    warnings.filterwarnings(
        "ignore",
        message=r"(overflow|underflow|divide by zero|invalid value) encountered in ",
        category=RuntimeWarning,
        module=r"disttorch\.",
    )
