"""Forward-mode AD (``torch.autograd.forward_ad``): dual tensors carrying a tangent.

Tangents are computed by the *double-backward trick* rather than by a forward rule per op:
for ``y = f(x)`` the vector-Jacobian product ``g(u) = J^T u`` is linear in ``u``, so
differentiating ``g`` with respect to ``u`` in the direction ``t`` gives ``J t``, the
Jacobian-vector product. Every op whose backward is written with tensor ops therefore has
forward-mode AD, with the same values as PyTorch's forward rules; the layers whose backward
is a fused NumPy kernel give that node their forward rule instead (``nn.functional``'s
``numpy_backward``: convolution, pooling, normalisation, attention).

How it differs from PyTorch:

- ``make_dual`` returns a tensor that requires grad (the graph from it is what the tangent
  is later read from); its tangent is computed when ``unpack_dual`` asks for it, at the
  cost of two backward passes over the graph between the dual inputs and that tensor.
- A primal keeps the autograd history of the tensors it depends on that require grad (a
  layer's weight), as PyTorch's, and so does its tangent, but only where the tangent truly
  depends on one: PyTorch's has a ``grad_fn`` wherever its op's forward formula reads such a
  primal (``relu``'s does, a view's does not), even when the derivative is zero.
- Computations must run with grad mode enabled: ``dual_level`` enables it for its block (so
  ``with no_grad(), dual_level():`` works), but a ``no_grad`` block inside it leaves the
  results computed there without a tangent (``unpack_dual`` gives ``None``).
- One level at a time, like PyTorch (nested ``dual_level`` raises).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from .._creation import zeros_like
from .._tensor import Tensor
from . import grad_mode, transform_leaves
from .backprop import grad

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
    "refuse_tangents",
]


class Linearization:
    """The vector-Jacobian product ``J^T u`` of ``outputs`` w.r.t. ``inputs``, recorded once
    with ``u`` as a free variable, so that ``jvp(tangents)`` (``J @ tangent``, by
    differentiating it w.r.t. ``u``) can be taken any number of times.

    ``forward_ad``: the linearisation stands for forward-mode AD (dual tensors, ``torch.func``'s
    forward transforms), where a Python ``autograd.Function``'s derivative is its ``jvp`` (one
    without ``jvp`` raises PyTorch's ``NotImplementedError``); otherwise it is the
    double-backward trick of ``autograd.functional`` and differentiates that Function's backward."""

    def __init__(
        self, outputs: Sequence[Tensor], inputs: Sequence[Tensor], *, forward_ad: bool = False
    ) -> None:
        self.n_out, self.forward_ad = len(outputs), forward_ad
        self.idx = [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and o._rg]
        self.probes: list[Tensor] = []
        self.vjps: tuple = (None,) * len(inputs)
        if self.idx:
            outer = grad_mode.linearizing[0], grad_mode.forward_ad_rules[0]
            grad_mode.linearizing[0], grad_mode.forward_ad_rules[0] = True, forward_ad
            try:
                with grad_mode.enable_grad():
                    self.probes = [zeros_like(outputs[k]).requires_grad_(True) for k in self.idx]
                    self.vjps = grad(
                        [outputs[k] for k in self.idx],
                        list(inputs),
                        self.probes,
                        retain_graph=True,
                        create_graph=True,
                        allow_unused=True,
                    )
            finally:
                grad_mode.linearizing[0], grad_mode.forward_ad_rules[0] = outer

    def depends_on(self, j: int) -> bool:
        """Does some output depend (differentiably) on input ``j``?"""
        g = self.vjps[j]
        return g is not None and g._rg

    def jvp(self, tangents: Sequence[Tensor | None], create_graph: bool = False) -> list[Tensor | None]:
        """``J @ tangents`` for each output (``None`` for an output no input with a tangent
        reaches; zeros for one reached only through ops of zero derivative, ``ceil``, as
        PyTorch's forward rules give). ``None`` tangents count as zero."""
        result: list[Tensor | None] = [None] * self.n_out
        pairs = [
            (g, t)
            for j, (g, t) in enumerate(zip(self.vjps, tangents))
            if t is not None and self.depends_on(j)
        ]
        if not pairs:
            if any(g is not None and t is not None for g, t in zip(self.vjps, tangents)):
                for k, probe in zip(self.idx, self.probes):
                    result[k] = zeros_like(probe).detach()
            return result
        outer = grad_mode.forward_mode_pass[0]
        grad_mode.forward_mode_pass[0] = self.forward_ad
        try:
            with grad_mode.set_grad_enabled(create_graph):
                jv = grad(
                    [g for g, _ in pairs],
                    self.probes,
                    [t for _, t in pairs],
                    retain_graph=True,
                    create_graph=create_graph,
                    allow_unused=True,
                )
        finally:
            grad_mode.forward_mode_pass[0] = outer
        for k, j in zip(self.idx, jv):
            result[k] = j
        return result


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the ``primal`` value and its ``tangent`` (or ``None``)."""

    primal: Tensor
    tangent: Tensor | None


class _Level:
    __slots__ = ("duals", "tangents", "keep", "fresh")

    def __init__(self) -> None:
        self.duals: list[Tensor] = []
        self.tangents: list[Tensor] = []
        self.keep = False  # does a primal or tangent carry autograd history of its own?
        self.fresh: set[int] = set()  # ids of the duals made to require grad for the trick only


def _own_history(tensor: Tensor, lv: _Level) -> bool:
    """Whether ``tensor`` depends on a tensor that requires grad of its own (not only on
    duals made to require grad here), as a Linear layer's output does on its weight."""
    return transform_leaves.reaches_leaf(tensor, lambda leaf: id(leaf) not in lv.fresh)


_levels: list[_Level] = []

_NO_FORWARD_RULE = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
)


def refuse_tangents(op: str, *tensors: Tensor | None) -> None:
    """Raise PyTorch's ``NotImplementedError`` for ``op`` (an op it has no forward-mode rule
    for) when one of ``tensors`` carries a tangent: it depends on a dual tensor of the current
    level or on an input of a forward ``torch.func`` transform (``jvp``, ``jacfwd``)."""
    for t in tensors:
        if isinstance(t, Tensor) and t.requires_grad and _carries_tangent(t):
            raise NotImplementedError(_NO_FORWARD_RULE.format(op))


def _carries_tangent(tensor: Tensor) -> bool:
    kinds = transform_leaves.transform_kinds(tensor)
    if "dual" in kinds or "jvp" in kinds:
        return True
    lv = _current(None)
    if lv is None or not lv.duals:
        return False
    duals = {id(d) for d in lv.duals}  # duals of primals that require grad: views with history
    nodes = {id(d.grad_fn) for d in lv.duals if d.grad_fn is not None}
    if id(tensor) in duals:
        return True
    todo, seen = [tensor.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        if id(node) in nodes:
            return True
        seen.add(id(node))
        todo += [n for n, _ in node.next_functions]
    return False


def _current(level: int | None) -> _Level | None:
    if level is None:
        level = len(_levels) - 1
    if level < 0 or level >= len(_levels):
        return None
    return _levels[level]


def enter_dual_level() -> int:
    """Enter a new forward grad level and return its index (only one level may be open)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append(_Level())
    return len(_levels) - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the forward grad level ``level`` (the current one by default); its tangents are gone."""
    if level is None:
        level = len(_levels) - 1
    if level != len(_levels) - 1 or level < 0:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _levels.pop()


class dual_level:
    """Context manager (and decorator) inside which dual tensors are made and unpacked::

    with dual_level():
        y, jvp = unpack_dual(f(make_dual(x, v)))
    """

    def __enter__(self) -> int:
        level = enter_dual_level()
        self._grad = grad_mode.set_grad_enabled(True)  # tangents are read from the graph
        return level

    def __exit__(self, *exc: Any) -> None:
        self._grad.__exit__()
        exit_dual_level()

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


def _check_float(what: str, t: Any) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"make_dual(): expected {what} to be a Tensor, got {type(t).__name__}")
    if not t.is_floating_point():
        raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor: ``tensor``'s value with ``tangent`` as its forward gradient at ``level``.

    Ops on it (and on results computed from it) propagate the tangent; read it with
    :func:`unpack_dual`. Backward-differentiable with respect to ``tensor``."""
    lv = _current(level)
    if lv is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    _check_float("primal", tensor)
    _check_float("tangent", tangent)
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
            f"forward gradient is of size {list(tangent.shape)}."
        )
    with grad_mode.enable_grad():
        if tensor.requires_grad:
            dual = tensor.view_as(tensor)
            lv.keep = True
        else:  # a view of the primal, as PyTorch's (``dual._base is tensor``)
            with grad_mode.no_grad():
                dual = tensor.view_as(tensor)
            transform_leaves.mark(dual.requires_grad_(True), "dual")
            lv.fresh.add(id(dual))
    lv.keep = lv.keep or tangent.requires_grad
    lv.duals.append(dual)
    lv.tangents.append(_as_tangent_of(tensor, tangent))
    return dual


def _as_tangent_of(primal: Tensor, tangent: Tensor) -> Tensor:
    """``tangent`` itself where it has ``primal``'s dtype and memory layout, else (as
    PyTorch's ``make_dual``) a copy of its values laid out as ``primal``: same strides and
    storage offset, a storage of the same size."""
    same_layout = (
        tangent.dtype == primal.dtype
        and tangent.storage_offset() == primal.storage_offset()
        and all(n <= 1 or a == b for n, a, b in zip(primal.shape, tangent.stride(), primal.stride()))
        and tangent.untyped_storage().nbytes() == primal.untyped_storage().nbytes()
    )
    if same_layout or primal.numel() == 0:
        return tangent
    from .._buffers import empty_strided

    out = empty_strided(primal.shape, primal.stride(), dtype=primal.dtype)
    return out.copy_(tangent)


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at ``level``: its value and the Jacobian-vector
    product of the dual inputs' tangents through the computation that produced it (``None``
    when it does not depend on any dual tensor, or outside a level)."""
    lv = _current(level)
    if lv is None:
        return UnpackedDualTensor(tensor, None)
    keep = lv.keep or (tensor.requires_grad and _own_history(tensor, lv))
    primal = tensor if keep else tensor.detach()
    for d, t in zip(lv.duals, lv.tangents):
        if d is tensor:
            return UnpackedDualTensor(primal, t)
    if not lv.duals:
        return UnpackedDualTensor(primal, None)
    (tangent,) = Linearization([tensor], lv.duals, forward_ad=True).jvp(lv.tangents, create_graph=keep)
    return UnpackedDualTensor(primal, tangent)
