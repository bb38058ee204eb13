"""Inference tensors: what ``torch.inference_mode()`` makes.

A tensor created while inference mode is on (a factory's result, an op's output; not a view
of a normal tensor, which stays normal) is an *inference tensor*: it has no version counter,
so autograd can never check it. PyTorch therefore refuses, outside inference mode, to
modify one in place, to let one require grad, and, anywhere, to save one for backward.

disttorch marks an inference tensor by its version counter: every inference tensor holds the
one shared :data:`INFERENCE` box instead of a counter of its own (views and ``detach()``
share their source's box, so they are inference tensors too). Normal tensors pay nothing
but the choice of box when they are made.
"""

from __future__ import annotations

from typing import Any

from ._thread_flag import ThreadFlag

__all__ = ["INFERENCE", "enabled", "check_requires_grad", "saved_version"]

#: whether an ``inference_mode()`` block is active in this thread (per thread, as grad mode)
enabled = ThreadFlag(False)

_INPLACE_MSG = (
    "Inplace update to inference tensor outside InferenceMode is not allowed."
    "You can make a clone to get a normal tensor before doing inplace update."
    "See https://github.com/pytorch/rfcs/pull/17 for more details."
)
_SAVED_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
_REQUIRES_GRAD_MSG = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
VERSION_MSG = "Inference tensors do not track version counter."


class _InferenceVersion:
    """The version counter of every inference tensor: it reads 0 and counts nothing. Every
    in-place op bumps its tensor's counter after writing; this one refuses outside inference
    mode, so the op raises with its values written, as PyTorch's does."""

    __slots__ = ()

    def __getitem__(self, index: int) -> int:
        return 0

    def __setitem__(self, index: int, value: Any) -> None:
        if not enabled[0]:
            raise RuntimeError(_INPLACE_MSG)

    def __repr__(self) -> str:
        return "INFERENCE"


INFERENCE = _InferenceVersion()


def check_requires_grad(box: Any) -> None:
    """Raise PyTorch's error for ``requires_grad_(True)`` on an inference tensor outside
    inference mode."""
    if box is INFERENCE and not enabled[0]:
        raise RuntimeError(_REQUIRES_GRAD_MSG)


def saved_version(box: Any) -> int:
    """The version a tensor is saved for backward at; an inference tensor cannot be saved."""
    if box is INFERENCE:
        raise RuntimeError(_SAVED_MSG)
    return box[0]
