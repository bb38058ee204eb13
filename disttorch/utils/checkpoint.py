"""Activation checkpointing: ``checkpoint(fn, *args)`` runs ``fn`` without keeping its
intermediate results, and recomputes them when backward needs them.

How: ``fn`` runs once with autograd recording, as usual; then every graph node that
``fn`` created gives up what it saved for backward (its saved tensors and arrays), so
the intermediates are freed as soon as nothing else holds them. When the backward pass
reaches the first of those nodes, ``fn`` is run again on the same inputs (with the RNG
state and autocast state of the first run, so dropout draws the same mask) and each
original node takes back the saved state of its twin in the new run. The gradients are
then exactly those of the un-checkpointed graph: they reach parameters ``fn`` uses and
tensors it closes over, ``autograd.grad`` works, and checkpoints nest.

``use_reentrant=True`` (PyTorch's old default) is PyTorch's reentrant design instead
(:class:`CheckpointFunction`): one node, ``CheckpointFunctionBackward``, over the call's
tensor arguments; forward records nothing inside, and backward recomputes and runs a
backward pass of its own. Its rules are PyTorch's: keyword arguments are refused, when no
tensor argument requires grad a warning is given and the outputs do not require grad, and
a backward pass restricted to some ``inputs`` (``autograd.grad``, ``backward(inputs=...)``)
that reaches the checkpoint raises.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager as ContextManager
from typing import Any

from .. import _random
from .._tensor import Tensor
from ..autograd import autocast_state as _autocast
from ..autograd import backprop as _backprop
from ..autograd import engine as _engine
from ..autograd import function as _function
from ..autograd import grad_mode

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "DefaultDeviceType",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "get_device_states",
    "noop_context_fn",
    "set_device_states",
]

# What a node keeps through checkpointing: the graph structure and hooks, and a
# per-node backward override (a nested checkpoint's trigger); everything else it saved
# in forward is dropped and later taken from the recomputed twin.
_STRUCTURE = frozenset(
    {
        "next_edges",
        "needs_input_grad",
        "_input_meta",
        "_seq_nr",
        "_n_outputs",
        "_output_meta",
        "_pre_hooks",
        "_retained",
        "_node_pre_hooks",
        "_node_hooks",
        "_metadata",
        "backward",
    }
)


_REENTRANT_GRAD_MSG = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)


class CheckpointError(RuntimeError):
    """The recomputation in backward did not reproduce the forward pass's graph."""


def noop_context_fn() -> tuple[ContextManager, ContextManager]:
    """The default ``context_fn``: no context around the forward run or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the tensors in ``inputs`` keeping ``requires_grad``."""
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            x = d
        out.append(x)
    return tuple(out)


_NO_GRAD_INPUTS = "None of the inputs have requires_grad=True. Gradients will be None"


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn that gradients will be None when no tensor in ``inputs`` requires grad."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn(_NO_GRAD_INPUTS, stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG states a recomputation restores when no argument is on an
    accelerator: ``'cpu'`` in this build (it has none) until :meth:`set_device_type`."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the default device type for checkpointing."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The default device type for checkpointing."""
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args: Any) -> tuple[list[int], list[Tensor]]:
    """``(device ids, RNG states)`` of the accelerators holding tensors in ``args``, for a
    recomputation to restore: every tensor of this build is on the CPU, so ``([], [])``."""
    return [], []


def set_device_states(devices: list, states: list, *, device_type: str | None = None) -> None:
    """Restore the RNG ``states`` of accelerator ``devices`` (as :func:`get_device_states`
    gave them) through ``torch.<device_type>``: nothing to do for empty lists; a device of
    a type this build lacks raises as PyTorch's CPU build does."""
    device_type = device_type or DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = getattr(sys.modules[__name__.split(".")[0]], device_type)
    for device, state in zip(devices, states):
        with module.device(device):
            module.set_rng_state(state)


def _flatten_tensors(value: Any) -> list:
    """The tensors in ``value`` (a tensor, or nested in tuples/lists/dicts)."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flatten_tensors(v)]
    return []


def _nodes_since(outputs: Any, start: int) -> list:
    """The graph nodes created at or after sequence number ``start`` that the outputs
    depend on, oldest first."""
    found, seen = [], set()
    stack = [t.grad_fn for t in _flatten_tensors(outputs) if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen or isinstance(node, _function.AccumulateGrad) or node._seq_nr < start:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(e[0] for e in node.next_edges if e is not None)
    return sorted(found, key=lambda n: n._seq_nr)


def _autocast_state() -> tuple:
    """What :func:`_replayed` needs of the autocast state of a forward run."""
    st = _autocast._state
    return dict(st.enabled), dict(st.dtypes), st.cache_enabled, dict(st.cache)


@contextlib.contextmanager
def _replayed(rng_state: Any, autocast_state: tuple) -> Any:
    """Recording, with the RNG state (unless None) and autocast state of a forward run (its
    weight-cast cache as it was when the forward began, so casts hit and miss as they did);
    the live states come back afterwards."""
    st = _autocast._state
    prev_rng = _random.get_rng_state() if rng_state is not None else None
    prev_ac = (st.enabled, st.dtypes, st.suspended, st.cache_enabled, st.cache)
    try:
        if rng_state is not None:
            _random.set_rng_state(rng_state)
        enabled, dtypes, cache_enabled, cache = autocast_state
        st.enabled, st.dtypes = dict(enabled), dict(dtypes)
        st.cache_enabled, st.cache = cache_enabled, dict(cache)
        st.suspended = 0
        st.refresh()
        with grad_mode.enable_grad():
            yield
    finally:
        st.enabled, st.dtypes, st.suspended, st.cache_enabled, st.cache = prev_ac
        st.refresh()
        if prev_rng is not None:
            _random.set_rng_state(prev_rng)


_SAVED = object()  # CheckpointFunction: where a tensor argument was (it is in saved_tensors)


class CheckpointFunction(_function.Function):
    """``use_reentrant=True``: PyTorch's reentrant checkpoint, one node
    (``CheckpointFunctionBackward``) whose inputs are the call's tensor arguments. Forward
    runs the function without recording; backward runs it again, recording, and runs a
    backward pass of its own through that graph (parameters get their gradients there)."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        ctx.run_function = run_function
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        ctx.autocast_state = _autocast_state()
        # _SAVED marks a tensor argument's place; a None argument stays None (HF layers pass
        # encoder_hidden_states=None positionally)
        ctx.inputs = [_SAVED if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        if _engine.restricted_to_inputs():
            raise RuntimeError(_REENTRANT_GRAD_MSG)
        tensors = iter(ctx._checked_saved())
        inputs = detach_variable(tuple(next(tensors) if a is _SAVED else a for a in ctx.inputs))
        with _replayed(ctx.rng_state, ctx.autocast_state):
            outputs = ctx.run_function(*inputs)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backprop.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *(a.grad if isinstance(a, Tensor) else None for a in inputs))


class _Recomputation:
    """The nodes of one checkpointed call and how to refill them."""

    def __init__(
        self,
        fn: Callable,
        args: tuple,
        kwargs: dict,
        nodes: list,
        rng_state: Any,
        autocast_state: tuple,
        recompute_ctx: ContextManager,
        check: bool,
        reentrant: bool,
    ) -> None:
        self.fn, self.args, self.kwargs, self.nodes = fn, args, kwargs, nodes
        self.rng_state, self.autocast_state = rng_state, autocast_state
        self.recompute_ctx, self.check, self.reentrant = recompute_ctx, check, reentrant
        self.done = False

    def release(self) -> None:
        """Drop what the nodes saved for backward, and make each one refill on demand."""
        for node in self.nodes:
            kept = {k: v for k, v in vars(node).items() if k in _STRUCTURE}
            vars(node).clear()
            vars(node).update(kept)
            if "backward" not in kept:
                node.backward = self._trigger(type(node))

    def _trigger(self, cls: type) -> Callable:
        def backward(ctx: Any, *grads: Any) -> Any:
            self.refill()
            return cls.backward(ctx, *grads)

        return backward

    def refill(self) -> None:
        """Run ``fn`` again and hand each original node its twin's saved state."""
        if self.done:
            return
        if self.reentrant and _engine.restricted_to_inputs():
            raise RuntimeError(_REENTRANT_GRAD_MSG)
        self.done = True
        start = next(_function._seq)
        with _replayed(self.rng_state, self.autocast_state), self.recompute_ctx:
            outputs = self.fn(*self.args, **self.kwargs)
        twins = _nodes_since(outputs, start)
        if self.check and [type(n) for n in twins] != [type(n) for n in self.nodes]:
            raise CheckpointError(
                "torch.utils.checkpoint: the recomputation in backward ran different operations "
                f"({len(twins)} recorded) than the forward pass ({len(self.nodes)} recorded); "
                "the checkpointed function must compute the same thing when run again (pass "
                "determinism_check='none' to skip this check)"
            )
        for node, twin in zip(self.nodes, twins):
            vars(node).update({k: v for k, v in vars(twin).items() if k not in _STRUCTURE})
        self.args = self.kwargs = self.fn = None  # nothing more to recompute


def _dynamo_disabled(fn: Callable) -> Callable:
    """PyTorch runs ``checkpoint`` inside its compiler's ``disable`` wrapper, so a warning
    ``checkpoint`` gives with ``stacklevel=2`` points at that wrapper's line, the same for
    every caller: it is shown once per process, not once per calling line. Here too."""

    @functools.wraps(fn)
    def _fn(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return _fn


@_dynamo_disabled
def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[ContextManager, ContextManager]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its intermediate activations;
    they are recomputed during backward.

    Args:
        function: what to run (a module or any callable of tensors).
        args: its arguments (tensors or anything else).
        use_reentrant: PyTorch's two variants; pass it explicitly (None warns, as PyTorch
            2.13 does, and means True). ``False`` is recommended; ``True`` is
            :class:`CheckpointFunction` (see the module's header).
        preserve_rng_state (keyword, default True): replay the RNG state of the forward
            run during recomputation, so random ops (dropout) draw the same values.
        context_fn: returns two context managers, entered around the forward run and
            around the recomputation (``use_reentrant=False`` only).
        determinism_check: ``"default"`` raises :class:`CheckpointError` when the
            recomputation records other operations than the forward run; ``"none"`` skips.
        debug, early_stop: accepted for compatibility (no effect).

    Returns:
        What ``function`` returns.
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs "
            "for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check!r}"
        )
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if not any(t.requires_grad for t in _flatten_tensors(args)):
            warnings.warn(_NO_GRAD_INPUTS, stacklevel=2)
        return CheckpointFunction.apply(function, preserve, *args)
    forward_ctx, recompute_ctx = context_fn()
    autocast_state = _autocast_state()
    rng_state = _random.get_rng_state() if preserve else None
    start = next(_function._seq)
    with forward_ctx:
        outputs = function(*args, **kwargs)
    if not grad_mode.is_grad_enabled():
        return outputs  # nothing recorded, nothing to free
    nodes = _nodes_since(outputs, start)
    if nodes:
        _Recomputation(
            function,
            args,
            kwargs,
            nodes,
            rng_state,
            autocast_state,
            recompute_ctx,
            determinism_check == "default",
            bool(use_reentrant),
        ).release()
    return outputs


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Run a sequence of modules/functions (e.g. an ``nn.Sequential``) in ``segments``
    chunks, checkpointing every chunk but the last.

    Args:
        functions: an ``nn.Sequential``, or a list of modules/functions run in order.
        segments: how many chunks to split them into.
        input: the input of the first function.
        use_reentrant: as in :func:`checkpoint`.
        preserve_rng_state (keyword, default True): as in :func:`checkpoint`.
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
            "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
            "two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    fns: list = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be >= 1, got {segments}")

    def run(begin: int, end: int) -> Callable:
        def forward(x: Any) -> Any:
            for f in fns[begin : end + 1]:
                x = f(x)
            return x

        return forward

    size = len(fns) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(fns) - 1)(input)
