"""Grad mode: whether ops record a graph. ``no_grad``, ``enable_grad``,
``set_grad_enabled`` and ``inference_mode`` work as context managers and decorators."""

from __future__ import annotations

import functools
from typing import Any, Callable

from .._grad_flag import grad_enabled as _state  # grad mode, per thread
from .._inference import enabled as _inference
from .._public_name import package_name
from .._thread_flag import ThreadFlag

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
    "set_multithreading_enabled",
    "is_multithreading_enabled",
    "is_view_replay_enabled",
]


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad record a graph."""
    return _state[0]


#: per thread: backwards compute with tensor ops even when not recorded (a pass whose
#: gradients are batched tensors, see ``func._batched_backward``)
tensor_backwards = ThreadFlag(False)

#: per thread: the backward pass running is forward-mode AD's (the double-backward trick, reading
#: ``J t`` from a recorded vector-Jacobian product), where the derivative of a write at repeated
#: positions is PyTorch's forward rule (the last value written wins) and not the transpose of its
#: backward (which sums the repeats); not so for ``autograd.functional.jvp``/``hvp``, whose
#: double-backward trick is PyTorch's too
forward_mode_pass = ThreadFlag(False)

#: per thread: the recorded backward pass running builds forward-mode AD's linearisation, which is
#: differentiated w.r.t. the output gradients only: an op whose backward is a fused kernel keeps it
#: there (its forward rule is that node's derivative), where another recorded pass would have it
#: written in tensor ops, differentiable w.r.t. its inputs too (``autograd.fused_backward``)
linearizing = ThreadFlag(False)

#: per thread: that linearisation is forward-mode AD's own (dual tensors, ``torch.func.jvp``,
#: ``jacfwd``), where a Python ``autograd.Function`` answers with its ``jvp`` (one without refuses),
#: as PyTorch's forward rules; the double-backward trick of ``autograd.functional.jvp``/``hvp``
#: differentiates its ``backward`` instead, as PyTorch's does
forward_ad_rules = ThreadFlag(False)

#: per thread: the batched backward pass running is ``autograd.grad(..., is_grads_batched=True)``'s
#: (PyTorch's legacy vmap, where an op without a batching rule of its own runs once per entry:
#: a fused kernel gives each entry the bits of its unbatched pass), not ``torch.func.vmap``'s
grads_batched = ThreadFlag(False)


def recording() -> bool:
    """Asked inside a backward: is this backward itself being recorded (``create_graph=True``),
    or must it be made of tensor ops (:data:`tensor_backwards`)?

    The engine runs backward with grad mode on only when recorded. A recorded backward builds
    its local derivative from tensor ops of the saved inputs, so that it can be differentiated
    again; otherwise it works on the arrays forward kept.
    """
    return _state[0] or tensor_backwards[0]


class _GradMode:
    """Base of the grad-mode context managers; subclasses set ``_mode``."""

    _mode = True

    def __enter__(self) -> None:
        self._prev = _state[0]
        _state[0] = self._mode

    def __exit__(self, *exc: Any) -> None:
        _state[0] = self._prev

    def __call__(self, fn: Callable) -> Callable:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _state[0]
            _state[0] = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _state[0] = prev

        return wrapper


class _BareDecoratorMode(_GradMode):
    """A grad mode that also decorates without brackets: ``@no_grad`` as ``@no_grad()``."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecoratorMode):
    """Disable graph recording: ``with disttorch.no_grad(): ...``, ``@disttorch.no_grad()`` or
    ``@disttorch.no_grad``."""

    _mode = False


class enable_grad(_BareDecoratorMode):
    """Enable graph recording inside a ``no_grad`` region (``@enable_grad`` works too)."""

    _mode = True


class inference_mode(_GradMode):
    """``no_grad`` that also makes the tensors created inside it inference tensors
    (``is_inference()``; see ``disttorch._inference`` for what they refuse afterwards);
    ``torch.is_inference_mode_enabled()`` is True inside it. ``inference_mode(False)`` turns
    it off (and grad mode on) inside one; ``@inference_mode`` without brackets decorates as
    ``@inference_mode()``."""

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self._mode = not mode
        self._inference = bool(mode)

    def __enter__(self) -> None:
        self._prev_inference = _inference[0]
        _inference[0] = self._inference
        super().__enter__()

    def __exit__(self, *exc: Any) -> None:
        super().__exit__(*exc)
        _inference[0] = self._prev_inference

    def __call__(self, fn: Callable) -> Callable:
        mode = self._inference

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block is active."""
    return _inference[0]


class set_grad_enabled(_GradMode):
    """Set grad mode to ``mode``; takes effect at once, and is undone on leaving a ``with``."""

    def __init__(self, mode: bool) -> None:
        self._prev = _state[0]
        self._mode = bool(mode)
        _state[0] = self._mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _state[0] = self._prev

    def __repr__(self) -> str:
        """As PyTorch's (a notebook cell ending in ``torch.set_grad_enabled(True)`` shows it)."""
        return f"{package_name()}.autograd.grad_mode.set_grad_enabled(mode={self._mode})"


#: whether backward may run on worker threads (disttorch's always runs on the calling thread)
_multithreading = [True]


def is_multithreading_enabled() -> bool:
    """The flag :class:`set_multithreading_enabled` keeps (True unless disabled)."""
    return _multithreading[0]


def is_view_replay_enabled() -> bool:
    """False: views of tensors are never replayed in backward (PyTorch's default; it replays
    them only where a backend cannot express a view as strides)."""
    return False


class set_multithreading_enabled:
    """Enable or disable multithreaded backward; takes effect at once and is undone on
    leaving a ``with``. disttorch's backward always runs on the calling thread, so this only
    keeps the flag."""

    def __init__(self, mode: bool) -> None:
        self.prev, self.mode = _multithreading[0], bool(mode)
        _multithreading[0] = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _multithreading[0] = self.prev

    def clone(self) -> set_multithreading_enabled:
        """A copy of this switch (it sets the flag again)."""
        return type(self)(self.mode)
