"""The backward engine: walks the graph from the outputs to the leaves.

1. Discover every node reachable from the roots (iteratively, never by recursion: a chain
   of 100,000 ops is fine) and count, for each node, how many edges point at it.
2. Start from the roots with their gradients. A node is *ready* when every node that
   consumes its outputs has run; ready nodes run latest-created first (a max-heap on the
   sequence number; leaf accumulators run the moment they are ready, which is what lets
   DDP start communicating a bucket while backward goes on).
3. Running a node: call the hooks registered on its outputs' tensors, call its backward,
   sum each input gradient back to the input's shape (broadcasting) and dtype, and add it
   to the buffer of the node that produced that input.
4. A leaf's ``AccumulateGrad`` runs the leaf's hooks, adds into ``.grad`` (a fresh array
   of its own, never aliased; or hands the gradient to the thread's ``grad_sink``, as
   distributed autograd does), then its post-accumulate-grad hooks.
5. After the walk, callbacks queued with ``queue_callback`` run (DDP waits for its buckets
   there), and saved tensors are freed unless ``retain_graph``.
"""

from __future__ import annotations

import heapq
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from .. import _debug_flags
from .._dtype import from_numpy
from .._memory_format import is_dense
from .._tensor import Tensor
from .._torch_function import dispatch_args
from ..utils import trace
from . import autocast_state as _autocast
from . import grad_mode, grad_reads, grad_sink, saved_hooks
from .function import (
    _FREED_MSG,
    AccumulateGrad,
    Function,
    GradientEdge,
    Node,
    _node_call,
    forward_rule_grads,
    gradient_edge,
)

__all__ = [
    "BACKWARD_CALLERS",
    "add_to_grad",
    "backward_in_progress",
    "run_backward",
    "queue_callback",
    "edges_needed",
]

# One list of end-of-pass callbacks per backward pass in progress (passes can nest).
_callback_stack: list[list[Callable[[], None]]] = []


def backward_in_progress() -> bool:
    """Whether a backward pass is running (PyTorch: a graph task is current)."""
    return bool(_callback_stack)


def queue_callback(callback: Callable[[], None]) -> None:
    """Run ``callback()`` once, when the backward pass in progress finishes."""
    if not _callback_stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _callback_stack[-1].append(callback)


def _collect(roots: Sequence[Node]) -> dict[Node, int]:
    """Every node reachable from ``roots`` with the number of edges pointing at it."""
    deps: dict[Node, int] = {}
    stack = list(roots)
    seen = set(map(id, roots))
    for r in roots:
        deps.setdefault(r, 0)
    while stack:
        node = stack.pop()
        for edge in node.next_edges:
            if edge is None:
                continue
            nxt = edge[0]
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return deps


def reachable_leaves(tensors: Sequence[Tensor]) -> list[Tensor]:
    """The leaf tensors (those with an ``AccumulateGrad``, and any of ``tensors`` without a
    node) that a backward pass from ``tensors`` would reach, each once."""
    found = {id(t): t for t in tensors if t.grad_fn is None}
    nodes = _collect([t.grad_fn for t in tensors if t.grad_fn is not None])
    found.update((id(node.variable), node.variable) for node in nodes if isinstance(node, AccumulateGrad))
    return list(found.values())


#: callers of a node's backward other than :func:`_call_backward`, innermost last: the pass
#: started while one is here calls nodes through it (``autograd.grad(..., is_grads_batched=True)``
#: runs a node once per batch entry when its backward cannot take the batched gradients)
BACKWARD_CALLERS: list[Callable] = []

#: the ``needed`` node set of each backward pass in progress (innermost last; None: every node)
_needed_stack: list[set | None] = []


def restricted_to_inputs() -> bool:
    """Whether the backward pass now running computes gradients for given ``inputs`` only
    (``autograd.grad``, or ``backward(inputs=...)``)."""
    return bool(_needed_stack) and _needed_stack[-1] is not None


def edges_needed(node: Any) -> tuple[bool, ...]:
    """For each input edge of ``node`` (whose backward is running): does the current pass need
    a gradient along it? (``autograd.grad(outputs, inputs)`` runs only the part of the graph
    that leads to ``inputs``; a node may then skip work, or refuse only what is needed.)"""
    needed = _needed_stack[-1] if _needed_stack else None
    return tuple(e is not None and (needed is None or e[0] in needed) for e in node.next_edges)


def _needed(deps: dict[Node, int], roots: Sequence[Node], targets: set) -> set:
    """Nodes from which some target can be reached (only these run when ``inputs`` is given)."""
    order: list[Node] = []
    remaining = dict(deps)
    ready = [r for r in roots if remaining[r] == 0]
    seen_ready = set(map(id, ready))
    while ready:
        node = ready.pop()
        order.append(node)
        for edge in node.next_edges:
            if edge is None:
                continue
            remaining[edge[0]] -= 1
            if remaining[edge[0]] == 0 and id(edge[0]) not in seen_ready:
                seen_ready.add(id(edge[0]))
                ready.append(edge[0])
    needed: set = set()
    for node in reversed(order):
        if node in targets or any(e is not None and e[0] in needed for e in node.next_edges):
            needed.add(node)
    return needed


def _sum_to(grad, shape: tuple, dtype: np.dtype):
    """Sum a gradient back to an input's shape (undoing broadcasting) and dtype."""
    if grad.is_sparse:  # a sparse gradient (an embedding table's) has its input's shape
        return grad
    if grad._data.shape != shape:
        grad = grad._sum_to(shape)
    if grad._data.dtype != dtype:
        if grad._data.dtype.kind == "c" and dtype.kind != "c":
            grad = grad.real  # a real input of an op with a complex gradient: its real part
        grad = grad.to(from_numpy(dtype))
    return grad


def _accumulate(leaf, grad, shared: bool, create_graph: bool) -> None:
    """The leaf's hooks, ``grad`` added to ``leaf.grad`` (or handed to the thread's grad sink),
    then its post-accumulate-grad hooks; nothing is added to a leaf that no longer requires grad."""
    if leaf._hooks:
        laid_out = getattr(leaf, "_hook_view", None)  # a leaf whose hooks see a laid-out gradient (DTensor)
        if laid_out is not None:
            grad = laid_out(grad)
        for hook in leaf._hooks:
            out = hook(grad)
            if out is not None:
                grad, shared = out, True
        if laid_out is not None:
            grad = leaf._from_hook_view(grad)
    if leaf._rg:  # frozen after the graph was made: PyTorch's AccumulateGrad stores nothing
        _store(leaf, grad, shared, create_graph)
    if leaf._post_hooks:
        for hook in list(leaf._post_hooks):
            hook(leaf)


def _store(leaf, grad, shared: bool, create_graph: bool) -> None:
    """``grad`` handed to the thread's grad sink, or added to the leaf's gradient."""
    sink = grad_sink.current()
    if sink is not None:
        sink.accumulate(leaf, grad)
        return
    own = getattr(leaf, "_add_grad", None)  # a leaf that lays out its gradient itself (DTensor)
    if own is None:
        add_to_grad(leaf, grad, shared, create_graph)
    else:
        own(grad, shared, create_graph)


def add_to_grad(leaf, grad, shared: bool, create_graph: bool) -> None:
    """``leaf.grad += grad``; the stored gradient never aliases another tensor. A wrapper
    subclass's gradient (which keeps its data itself) is stored detached and added with ``+``."""
    if type(grad) is not Tensor and dispatch_args((grad,)):
        leaf._grad = grad.detach() if leaf._grad is None else leaf._grad + grad
        return
    if grad.is_sparse or (leaf._grad is not None and leaf._grad.is_sparse):
        # sparse + sparse stays sparse (indices concatenated); sparse + dense is dense
        old = leaf._grad
        if old is None or (old.is_sparse and grad.is_sparse):
            leaf._grad = grad if old is None else old + grad
        else:
            leaf._grad = (old.to_dense() if old.is_sparse else old) + (
                grad.to_dense() if grad.is_sparse else grad
            )
    elif leaf._grad is None:
        if create_graph:
            leaf._grad = grad
        else:
            arr, var = grad._data, leaf._data
            other_layout = not var.flags.c_contiguous and arr.strides != var.strides and is_dense(var)
            if other_layout or shared or arr.base is not None or not arr.flags.writeable:
                if is_dense(var):  # a copy in the leaf's layout (e.g. channels_last): PyTorch's contract
                    arr = np.empty_like(var, dtype=arr.dtype, order="K")
                    arr[...] = grad._data
                else:
                    arr = arr.copy()
            leaf._grad = Tensor._make(arr)
    elif create_graph or leaf._grad._rg:
        leaf._grad = leaf._grad + grad
    else:
        np.add(leaf._grad._data, grad._data, out=leaf._grad._data)
        leaf._grad._bump_version()


def run_backward(
    roots: Sequence[Any],
    grad_roots: Sequence[Any],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None = None,
    accumulate: bool = True,
    allow_unused: bool = True,
) -> list | None:
    """Backpropagate ``grad_roots`` from the tensors ``roots``.

    With ``accumulate`` (``Tensor.backward``) gradients go into leaves' ``.grad`` (only
    those in ``inputs`` when given). Without it (``autograd.grad``) the gradients of
    ``inputs`` are returned and no ``.grad`` is touched.
    """
    start = trace.begin("backward")
    try:
        return _run(roots, grad_roots, retain_graph, create_graph, inputs, accumulate, allow_unused)
    finally:
        trace.end("backward", start, timeline_only=True)


def _run(
    roots: Sequence[Any],
    grad_roots: Sequence[Any],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None,
    accumulate: bool,
    allow_unused: bool,
) -> list | None:
    root_edges = [gradient_edge(t) for t in roots]
    root_nodes = list(dict.fromkeys(e[0] for e in root_edges))  # two outputs of one node: one root
    deps = _collect(root_nodes)

    capture: dict[tuple, int] = {}
    input_edges = []
    if inputs is not None:
        for i, t in enumerate(inputs):
            if isinstance(t, GradientEdge):
                e = (t.node, t.output_nr)
            elif not t._rg:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            else:  # a view made in no_grad mode has no edge: a node of its own, never reached
                e = gradient_edge(t) or (object(), 0)
            input_edges.append(e)
            capture.setdefault((id(e[0]), e[1]), i)
        needed = _needed(deps, root_nodes, {e[0] for e in input_edges})
    else:
        needed = None
    captured: list = [None] * (len(inputs) if inputs is not None else 0)

    buffers: dict[Node, list] = {}
    shared_ids: set[int] = set()
    for root, (node, nr), g in zip(roots, root_edges, grad_roots):
        if isinstance(root, Tensor) and g is not None and g.dtype != root.dtype:
            g = g.to(root.dtype)  # a root's gradient in its dtype, as the ops after it would give
        buf = buffers.setdefault(node, [None] * node._n_outputs)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
        shared_ids.add(id(buf[nr]))

    heap: list = []
    counter = 0
    for node in set(root_nodes):
        if deps[node] == 0:
            heapq.heappush(heap, (-node._seq_nr, counter, node))
            counter += 1

    callbacks: list[Callable[[], None]] = []
    _callback_stack.append(callbacks)
    _needed_stack.append(needed)
    prev_mode = grad_mode._state[0]
    grad_mode._state[0] = create_graph
    _autocast.suspend()  # backward ops run in the dtypes forward chose, as PyTorch's
    executed: list[Node] = []
    call = BACKWARD_CALLERS[-1] if BACKWARD_CALLERS else _call_backward
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads = buffers.pop(node, None) or [None] * node._n_outputs
            if needed is not None and node not in needed:
                continue
            grads = _run_pre_hooks(node, grads)
            if node._node_pre_hooks:
                grads = _run_node_pre_hooks(node, grads)
            if capture:
                for nr, g in enumerate(grads):
                    idx = capture.get((id(node), nr))
                    if idx is not None:
                        captured[idx] = g
                if not accumulate and isinstance(node, AccumulateGrad):
                    continue
            if isinstance(node, AccumulateGrad):
                if accumulate and grads[0] is not None:
                    _accumulate(node.variable, grads[0], id(grads[0]) in shared_ids, create_graph)
                    if node._node_hooks:
                        _run_node_hooks(node, (), grads)
                continue
            # A node no gradient reached (e.g. the old values under an overwriting in-place
            # op) passes nothing on, but still releases its inputs' nodes.
            if all(g is None for g in grads):
                in_grads = ()
            elif _debug_flags.is_anomaly_enabled():
                in_grads = _call_reporting(call, node, grads)
            else:
                in_grads = call(node, grads)
            if node._node_hooks and in_grads:
                in_grads = _run_node_hooks(node, in_grads, grads)
            executed.append(node)
            for i, edge in enumerate(node.next_edges):
                if edge is None:
                    continue
                nxt, nr = edge
                g = in_grads[i] if i < len(in_grads) else None
                if g is not None:
                    shape, dt = node._input_meta[i]
                    g2 = _sum_to(g, shape, dt)
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt._n_outputs
                    if buf[nr] is None:
                        buf[nr] = g2
                        if g2 is g and (
                            not node._raw
                            or any(g is x for x in grads)
                            or any(g is in_grads[j] for j in range(i))
                        ):
                            shared_ids.add(id(g2))
                    else:
                        buf[nr] = buf[nr] + g2
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(heap, (-nxt._seq_nr, counter, nxt))
                    counter += 1
        while callbacks:
            callbacks.pop(0)()
    finally:
        grad_mode._state[0] = prev_mode
        _autocast.resume()
        _callback_stack.pop()
        _needed_stack.pop()
        if not retain_graph:
            for node in executed:
                node._saved = None
                node._freed = True
                if node._packed is not None:
                    node._packed = {}  # the packed values go; backward again raises

    if inputs is None:
        return None
    if accumulate:
        for t, g in zip(inputs, captured):
            if g is not None and t.grad_fn is not None:
                _accumulate(t, g, True, create_graph)
        return None
    for i, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been "
                "used in the graph. Set allow_unused=True if this is the desired "
                "behavior."
            )
    return captured


def _run_node_pre_hooks(node: Node, grads: list) -> list:
    """The node's own pre-hooks (``Node.register_prehook``): each may replace the gradients."""
    for hook in list(node._node_pre_hooks):
        out = hook(tuple(grads))
        if out is not None:
            grads = _checked_hook_result(hook, out, len(grads))
    return grads


def _run_node_hooks(node: Node, in_grads: tuple, grads: list) -> tuple:
    """The node's own hooks (``Node.register_hook``), after its backward: each may replace
    the input gradients. A hook sees those of PyTorch's tensor inputs only (one per entry of
    ``next_functions``: a convolution's input, weight and bias, not its geometry)."""
    hidden = node._unlisted
    listed = [i for i in range(len(in_grads)) if i not in hidden]
    for hook in list(node._node_hooks):
        out = hook(tuple(in_grads[i] for i in listed), tuple(grads))
        if out is not None:
            new = list(in_grads)
            for i, g in zip(listed, _checked_hook_result(hook, out, len(listed))):
                new[i] = g
            in_grads = tuple(new)
    return in_grads


def _checked_hook_result(hook: Callable, out: Any, expected: int) -> list:
    """A node hook's returned gradients, as many as it was given (PyTorch's error otherwise)."""
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(out) != expected:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(out)}, but expected {expected})"
        )
    return out


def _run_pre_hooks(node: Node, grads: list) -> list:
    """Tensor hooks registered on the node's outputs, then retain_grad."""
    if node._pre_hooks:
        for nr, hooks in node._pre_hooks.items():
            for hook in hooks:
                if grads[nr] is not None:
                    out = hook(grads[nr])
                    if out is not None:
                        grads[nr] = out
    if node._retained:
        for nr, ref in node._retained.items():
            t = ref()
            g = grads[nr]
            if t is None or g is None:
                continue
            if t._grad is None:
                t._grad = g if grad_mode._state[0] else Tensor._make(g._data.copy())
            else:
                t._grad = t._grad + g
    return grads


def _call_reporting(call: Callable, node: Node, grads: list) -> tuple:
    """``call(node, grads)`` in anomaly mode: an error in the node's backward first warns with
    the stack of the forward call that made the node, as PyTorch's anomaly mode."""
    try:
        return call(node, grads)
    except Exception:
        stack = node.metadata.get("traceback_")
        if stack is not None:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                + "".join(stack),
                UserWarning,
                stacklevel=2,
            )
        raise


def _call_backward(node: Function, grads: list) -> tuple:
    """Call ``node.backward`` with materialised output gradients; check the result's arity."""
    if node.materialize_grads and any(g is None for g in grads):
        grads = [g if g is not None else _zeros_for(node, i) for i, g in enumerate(grads)]
    if grad_mode.forward_ad_rules[0] and not node._raw and not node._jvp_from_backward:
        out = forward_rule_grads(node, grads)
    elif node._packed is None:
        out = node.backward(node, *grads)
    else:
        if node._freed:
            raise RuntimeError(_FREED_MSG)
        saved_hooks.unpack_saved(node)
        try:
            out = node.backward(node, *grads)
        finally:
            saved_hooks.forget_unpacked(node)
    if not isinstance(out, tuple):
        out = (out,)
    n_in = len(node.next_edges)
    if len(out) != n_in:
        if len(out) > n_in and all(g is None for g in out[n_in:]):
            out = out[:n_in]
        else:
            raise RuntimeError(
                f"function {node.name()} returned an incorrect number of gradients "
                f"(expected {n_in}, got {len(out)})"
            )
    if node._grad_reads and grad_mode._state[0]:  # recorded: PyTorch's formula reads the inputs
        out = grad_reads.connect(node, out)
    if _debug_flags.is_anomaly_enabled() and _debug_flags.is_anomaly_check_nan_enabled():
        for i, g in enumerate(out):
            arr = getattr(g, "_data", g)
            if isinstance(arr, np.ndarray) and arr.dtype.kind == "f" and np.isnan(arr).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return out


def call_node(node: Function, grads: tuple) -> Any:
    """``node(*grads)``: the gradients of ``node``'s inputs for the gradients ``grads`` of its
    outputs, as its backward gives them (the engine, not the node, reduces a broadcast input's
    gradient to its shape, as in PyTorch); one tensor for a one-input node, else a tuple."""
    if len(grads) != node._n_outputs:
        raise TypeError(f"{node.name()}: expected {node._n_outputs} gradients, got {len(grads)}")
    hidden = node._unlisted  # arguments that are not PyTorch's tensor inputs
    out = tuple(g for i, g in enumerate(_call_backward(node, list(grads))) if i not in hidden)
    return out[0] if len(out) == 1 else out


_node_call.append(call_node)


def _zeros_for(node: Function, i: int):
    meta = node._output_meta[i]
    if meta is None:  # a user Function's output that is not a tensor: backward gets None
        return None
    shape, dt = meta
    return Tensor._make(np.zeros(shape, dtype=dt))
