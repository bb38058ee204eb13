"""``torch.compile`` and ``torch.compiler``, the controls of compilation. disttorch runs every
program eagerly: ``torch.compile(module)`` hands back what PyTorch hands back, an
``OptimizedModule`` that holds the module as ``_orig_mod`` (so state_dict keys and parameter
names carry PyTorch's ``_orig_mod.`` prefix, and a checkpoint saved from it loads where
PyTorch's would) and calls it; a compiled function is a wrapper that calls the function. While
a compiled call runs, ``is_compiling()`` is True, as it is for the code PyTorch traces (a
``disable``d function called from there sees False, and so does everything under the
``"force_eager"`` stance of ``set_stance``); while ``torch.export`` captures a forward,
``is_exporting()`` is True as well. The first call of a compiled function that no
earlier call's guards would take counts as a compile (``torch._dynamo.utils.counters``, see
``_compile_cache``), which ``reset()`` forgets. The markers return what they mark."""

from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

from . import _compile, _compile_cache
from ._compile import _BACKEND_TAGS, _compiled_region, _State, _state, check_arguments
from ._tensor import Tensor
from .autograd.function import AccumulateGrad, Function, _observers, _seq, _use_observers, named_node
from .autograd.grad_mode import is_grad_enabled
from .nn.modules.module import Module
from .nn.parameter import Parameter
from .overrides import TorchFunctionMode
from .utils._pytree import tree_flatten, tree_unflatten

__all__ = [
    "OptimizedModule",
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "list_backends",
    "reset",
    "set_stance",
    "substitute_in_graph",
]


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
) -> Any:
    """``torch.compile``: a module wrapped in an ``OptimizedModule``, as PyTorch wraps it, a
    function unchanged (with no ``model``, a decorator that does either). Either computes
    exactly what the eager model computes: nothing is compiled."""
    check_arguments(model, backend=backend, mode=mode, options=options)
    aot = isinstance(backend, str) and (backend in ("inductor", "cudagraphs") or backend.startswith("aot_"))
    wrap = (
        (lambda m: m) if disable else functools.partial(_compiled, aot=aot, dynamic=dynamic)
    )  # disable: the model, as PyTorch
    return wrap if model is None else wrap(model)


def _compiled(model: Callable, aot: bool, dynamic: bool | None = None) -> Any:
    """``model`` compiled; ``aot``: by a backend through AOTAutograd (its outputs' node is
    ``CompiledFunction``; PyTorch's eager backends and a callable one leave the eager nodes);
    ``dynamic``: ``torch.compile``'s (see ``_compile_cache.record``)."""
    if isinstance(model, Module):
        compiled_module = OptimizedModule(model, _eager)
        compiled_module._aot, compiled_module._dynamic = aot, dynamic
        return compiled_module

    code = getattr(model, "__code__", None)

    @functools.wraps(model)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        return _run_compiled(model, args, kwargs, aot, code=code, dynamic=dynamic)

    return compiled


class CompiledFunction(Function):
    """The node a compiled call's differentiable outputs come from, as PyTorch's AOTAutograd
    records it (``grad_fn=<CompiledFunctionBackward>``); gradients pass through unchanged.
    The outputs are copies, fresh buffers as a compiled graph's are (an in-place change to
    one leaves what the eager ops saved for backward intact, as in PyTorch)."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx: Any, *outputs: Tensor) -> tuple:
        return tuple(o.clone() for o in outputs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        return grads


def _run_compiled(
    fn: Callable,
    args: tuple,
    kwargs: dict,
    aot: bool,
    held: tuple = (),
    code: Any = None,
    dynamic: bool | None = None,
) -> Any:
    """Call ``fn`` as a compiled call: the first call for which no graph compiled for
    ``code`` passes its guards is counted as a compile (see ``_compile_cache``); ``aot``:
    see :func:`_run_graph` (``held``: a compiled module's parameters and buffers);
    ``dynamic``: ``torch.compile``'s."""
    # (PyTorch's compiler inlines a nested compiled call)
    if _state.depth or _State.stance[0] == "force_eager":
        with _compiled_region():
            return fn(*args, **kwargs)
    key, tensors = _guards(held, fn, args, kwargs)
    if code is None or _compile_cache.compiled(code, key) is not None:
        return _run_graph(fn, args, kwargs, aot, held)
    # (a compile of it captured nothing, or hit the recompile limit: PyTorch runs the frame eagerly)
    if _compile_cache.skipped(code) or _compile_cache.give_up(code):
        return fn(*args, **kwargs)
    marked = _compile_cache.marks(tensors)
    captured = _Captured()

    def traced(*args: Any, **kwargs: Any) -> Any:
        with captured:
            return fn(*args, **kwargs)

    out = _run_graph(traced, args, kwargs, aot, held)
    _compile_cache.record(code, key, captured.calls, aot, dynamic, marked)
    return out


#: a compiled function's signature, for its calls' arguments as its parameters receive them
_signatures: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _arguments(fn: Callable, args: tuple, kwargs: dict) -> list:
    """``fn``'s parameters' values in a call, defaults included (PyTorch guards the frame's
    locals: ``f(x, y=y)`` is ``f(x, y)``); the arguments as given where ``fn`` has no signature."""
    func = getattr(fn, "__func__", fn)
    try:
        signature = _signatures.get(func)
        if signature is None:
            signature = _signatures[func] = inspect.signature(func)
        bound = signature.bind(*((fn.__self__,) if func is not fn else ()), *args, **kwargs)
    except (TypeError, ValueError):  # (no signature, not weakly referable, or a call it refuses)
        return [*args, *(kwargs[name] for name in sorted(kwargs))]
    bound.apply_defaults()
    return list(bound.arguments.values())


#: arguments a graph is guarded on by value (functions and classes by identity, as PyTorch's ID_MATCH)
_GUARDED_BY_VALUE = (bool, int, float, str, type, types.FunctionType, types.BuiltinFunctionType)


def _guards(held: tuple, fn: Callable, args: tuple, kwargs: dict) -> tuple[tuple, list]:
    """What PyTorch's guards check of a call of ``fn`` (and a module's parameters and buffers,
    ``held``): grad mode, each tensor's dtype, ``requires_grad`` and sizes, the arguments'
    nesting, and each other argument's type and (a bool, ``None``, string, number, function
    or class) value; and the tensors, in that order."""
    leaves, spec = tree_flatten(_arguments(fn, args, kwargs))
    tensors = [*held, *(t for t in leaves if isinstance(t, Tensor))]
    values = tuple(
        (type(v), v) if v is None or isinstance(v, _GUARDED_BY_VALUE) else (type(v),)
        for v in leaves
        if not isinstance(v, Tensor)
    )
    sizes = tuple((t.dtype, t.requires_grad, tuple(t.shape)) for t in tensors)
    return (is_grad_enabled(), sizes, spec, values), tensors


class _Captured(TorchFunctionMode):
    """Counts the operations a call makes itself that give a tensor (those PyTorch's graph
    would capture; the others it computes while tracing)."""

    calls = 0

    def __torch_function__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        self.calls += any(isinstance(t, Tensor) for t in tree_flatten(out)[0])
        return out


def _run_graph(fn: Callable, args: tuple, kwargs: dict, aot: bool, held: tuple) -> Any:
    """Call ``fn`` as an outermost compiled call; with ``aot``, outputs computed with grad come from
    ``CompiledFunction``, with the aliasing PyTorch's AOTAutograd keeps: an input, parameter
    or buffer (or a view of one) comes back as the eager call made it, a tensor returned twice is one tensor, and a
    view of another output is a view of that output's new tensor. The node's
    ``next_functions`` are the call's inputs' nodes, ``(None, 0)`` for an input or parameter
    that needs no grad."""
    if not aot:
        with _compiled_region():
            return fn(*args, **kwargs)
    before, _state.views = _state.views, {}  # (filled by ``autograd.function.log_view``)
    start = next(_seq)
    views = _state.views
    explicit = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)]
    # (a module's buffers are watched too, as PyTorch's graph takes those it uses, BatchNorm's
    # running statistics; nothing is without grad mode, where no output comes from
    # ``CompiledFunction``)
    watched = [t for t in (*held, *explicit) if not t.requires_grad] if is_grad_enabled() else []
    uses = _FirstUses(watched, start)
    try:
        with _compiled_region(), uses:
            out = fn(*args, **kwargs)
    finally:
        _state.views = before  # (a compiled call inside a disabled one: the outer call's log)
    leaves, spec = tree_flatten(out)
    inputs = {id(_root(t)) for t in explicit}
    made = {
        id(v): v
        for v in leaves
        if isinstance(v, Tensor) and v.grad_fn is not None and _made_in_call(_root(v), inputs)
    }
    through = [v for v in made.values() if v._base is None or id(v._base) not in made]
    if not through:
        return out
    new = {id(v): n for v, n in zip(through, CompiledFunction.apply(*through))}
    node = new[id(through[0])].grad_fn
    # (walking the call's graph costs a pass over its nodes: done when a program first reads it)
    node._shown_edges = functools.partial(
        _input_edges, node.next_edges, start, {id(t) for t in held}, uses.first
    )
    for v in made.values():
        _remade(v, new, views)
    return tree_unflatten([new.get(id(v), v) for v in leaves], spec)


class _FirstUses:
    """While a compiled call runs on this thread, where the first op using each of the
    ``watched`` tensors (inputs that need no grad, so the graph does not show their uses)
    ran: ``first[id] = (sequence number, slot, tensor)``; it stops watching once all are seen."""

    def __init__(self, watched: list[Tensor], start: int) -> None:
        self.pending = {id(t): t for t in watched}
        self.first: dict[int, tuple[int, int, Tensor]] = {}
        self.start, self.thread = start, threading.get_ident()

    def __enter__(self) -> None:
        if self.pending:
            _observers.append(self._observe)
            _use_observers.append(self._observe)

    def __exit__(self, *exc: object) -> None:
        for observers in (_observers, _use_observers):
            if self._observe in observers:
                observers.remove(self._observe)

    def _observe(self, cls: type, args: tuple, out: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        seq = None
        for slot, a in enumerate(args):
            if id(a) in self.pending and a is self.pending[id(a)]:
                if seq is None:  # (the op's node when it made one, else a place after it)
                    node = getattr(out[0] if isinstance(out, tuple) else out, "grad_fn", None)
                    seq = node._seq_nr if node is not None and node._seq_nr >= self.start else next(_seq)
                self.first[id(a)] = (seq, _call_slot(cls, slot), self.pending.pop(id(a)))
        if not self.pending:
            self.__exit__()


def _input_edges(edges: tuple, start: int, held: set[int], unseen: dict[int, tuple]) -> tuple:
    """The edges from the nodes a call made (sequence number ``start`` on) to the graph
    before it (a leaf's ``AccumulateGrad``, an input's node), with ``(None, 0)`` for the
    inputs ``unseen`` by the graph, in the order the call first used them: the inputs of
    PyTorch's compiled graph. Within one op, a module's parameters and buffers (``held``)
    and other parameters come first, as attributes PyTorch's compiler loads before the call."""
    first: dict[tuple, tuple] = {}  # (id(node), output_nr) -> ((first user's seq, slot), edge)
    seen: set[int] = set()
    todo = [((-1, i), edge) for i, edge in enumerate(edges)]
    while todo:
        use, edge = todo.pop()
        node = edge[0]
        if isinstance(node, AccumulateGrad) or node._seq_nr < start:
            key = (id(node), edge[1])
            if key not in first or use < first[key][0]:
                first[key] = (use, edge)
        elif id(node) not in seen:
            seen.add(id(node))
            todo += [
                ((node._seq_nr, _call_slot(type(node), i)), e)
                for i, e in enumerate(node.next_edges)
                if e is not None
            ]
    firsts = [(seq, slot, getattr(edge[0], "variable", None), edge) for (seq, slot), edge in first.values()]
    firsts += [(seq, slot, t, (None, 0)) for seq, slot, t in unseen.values()]

    def order(item: tuple) -> tuple:
        seq, slot, tensor, _ = item
        return seq, not (id(tensor) in held or isinstance(tensor, Parameter)), slot

    return tuple(item[3] for item in sorted(firsts, key=order))


def _call_slot(cls: Any, slot: int) -> int:
    """Where argument ``slot`` of op ``cls`` comes in PyTorch's Python call of it (its
    ``_call_order``; the position itself where it has none)."""
    order = getattr(cls, "_call_order", ())
    return order.index(slot) if slot in order else slot


def _remade(v: Tensor, new: dict[int, Tensor], views: dict[int, tuple]) -> Tensor:
    """``v``, a view made in the call of a tensor that ``new`` replaces, made again from that
    tensor's replacement by the same view ops (as PyTorch's AOTAutograd replays them); a view
    whose making was not logged is the same elements as an ``as_strided`` view."""
    done = new.get(id(v))
    if done is None:
        logged = views.get(id(v))
        if logged is not None and logged[0] is v:
            done = logged[2](_remade(logged[1], new, views))
            if done.grad_fn is not None and v.grad_fn is not None:  # (the name a caller gave the node)
                named_node(done, v.grad_fn.name())
        else:
            done = new[id(v._base)].as_strided(v.shape, v.stride(), v.storage_offset())
        new[id(v)] = done
    return done


def _made_in_call(root: Tensor, inputs: set[int]) -> bool:
    """Whether memory ``root`` holds was made by the call: not an input's, nor a leaf's (a
    parameter or buffer, which PyTorch's compiler takes as inputs too)."""
    return id(root) not in inputs and root.grad_fn is not None


def _root(t: Tensor) -> Tensor:
    """The tensor whose memory ``t`` shows (``t`` itself unless a view)."""
    return t if t._base is None else t._base


def _eager(fn: Callable) -> Callable:
    """An ``OptimizedModule``'s ``dynamo_ctx``, which libraries apply to more methods of the
    module (Lightning's ``from_compiled``): PyTorch's compiles them, this returns them."""
    return fn


class OptimizedModule(Module):
    """A module as ``torch.compile`` returns it (``torch._dynamo.eval_frame.OptimizedModule``
    in PyTorch): the original is ``_orig_mod``, calling runs it, attributes are read from it
    and written to it (but the wrapper's own), and ``training`` is the original's."""

    _own = frozenset({"_orig_mod", "dynamo_ctx", "_aot", "_dynamic"})

    def __init__(self, mod: Module, dynamo_ctx: Any = None) -> None:
        super().__init__()
        self._modules["_orig_mod"] = mod  # before any other attribute: those go to it
        self.dynamo_ctx = dynamo_ctx
        self._aot = True  # (torch.compile's default backend, inductor, goes through AOTAutograd)
        self._dynamic: bool | None = None

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        mod = self._orig_mod
        held = (*mod.parameters(), *mod.buffers())
        code = getattr(type(mod).forward, "__code__", None)
        return _run_compiled(mod, args, kwargs, self._aot, held, code, self._dynamic)

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        if "_orig_mod" in self.__dict__.get("_modules", {}):  # (Module.__init__ sets it first)
            self._orig_mod.training = value

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._is_own(name) or "_orig_mod" not in self.__dict__.get("_modules", {}):
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if self._is_own(name):
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def _is_own(self, name: str) -> bool:
        return hasattr(type(self), name) or name in self._own

    def __len__(self) -> int:
        if not hasattr(type(self._orig_mod), "__len__"):
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")
        return len(self._orig_mod)

    def __dir__(self) -> list:
        own = self._orig_mod.__dir__()
        return own + [name for name in super().__dir__() if name not in own]


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Exclude ``fn`` from compilation: a wrapper under which ``is_compiling()`` is False
    (usable as ``@disable`` or ``@disable()``)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if isinstance(fn, Module):  # as PyTorch: the module's forward is what runs uncompiled
        fn.forward = disable(fn.forward, recursive, reason=reason)
        return fn

    @functools.wraps(fn)
    def disabled(*args: Any, **kwargs: Any) -> Any:
        with _compiled_region(depth=0):
            return fn(*args, **kwargs)

    return disabled


def allow_in_graph(fn: Callable) -> Callable:
    """Returns ``fn`` (nothing is traced)."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """Returns ``fn`` (nothing is traced)."""
    return fn


def substitute_in_graph(
    original_fn: Callable, *, can_constant_fold_through: bool = False, skip_signature_check: bool = False
) -> Callable:
    """A decorator returning the decorated function unchanged (nothing is traced)."""
    return lambda fn: fn


def is_compiling() -> bool:
    """True inside a compiled call (where PyTorch's compiler would be tracing), else False."""
    return _state.depth > 0


def is_dynamo_compiling() -> bool:
    """As ``is_compiling()`` (TorchDynamo is the compiler that would be tracing)."""
    return _state.depth > 0


def is_exporting() -> bool:
    """True while ``torch.export`` captures a forward, else False."""
    return _state.exporting


def set_stance(
    stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend: Any = None
) -> Any:
    """``torch.compiler.set_stance``: how compiled calls behave from now on (a raw call), in a
    ``with`` block, or in calls of a decorated function. ``"force_eager"`` runs them as plain
    calls (``is_compiling()`` False); the stances about recompiling act as ``"default"``,
    since nothing is recompiled here. An unknown stance fails at the next compiled call, as
    in PyTorch; changing the stance inside a compiled call fails at once."""
    if _state.depth:
        raise AssertionError(f"Attempt to trace forbidden callable {set_stance!r}")
    return _compile.set_stance((stance, skip_guard_eval_unsafe, force_backend))


def reset() -> None:
    """Forget what was compiled: the next compiled call of each function compiles (is
    counted) anew."""
    _compile_cache.reset()


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark (no CUDA graphs)."""


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The backend names ``torch.compile`` accepts (all run eagerly here), without those
    tagged with one of ``exclude_tags`` ('debug', 'experimental'), as PyTorch lists them."""
    excluded = set(exclude_tags or ())
    return sorted(name for name, tags in _BACKEND_TAGS.items() if not excluded.intersection(tags))
