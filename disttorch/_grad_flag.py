"""Grad mode's flag, per thread: whether ops on tensors that require grad record a graph.
``autograd/grad_mode.py`` sets it (``no_grad``, ``enable_grad``, ...); the core reads it
too (a tensor's ``float()`` warns about its graph only while grad mode is on, as PyTorch's)."""

from __future__ import annotations

from ._thread_flag import ThreadFlag

__all__ = ["grad_enabled"]

grad_enabled = ThreadFlag(True)
