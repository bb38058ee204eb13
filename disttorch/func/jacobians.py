"""``jacrev``, ``jacfwd`` and ``hessian`` of ``torch.func``.

Both Jacobians come from ``autograd.functional.jacobian_blocks``: ``jacrev`` takes one
backward pass per output element, ``jacfwd`` one double-backward product per input element
(forward-mode by the double-backward trick, see ``autograd.forward_ad``). PyTorch vectorises
these passes with ``vmap``; the values are the same. ``chunk_size`` and ``randomness`` are
checked and accepted; they change nothing here because the function is called only once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import autograd
from ..autograd.functional import jacobian_blocks
from ._inputs import flat_outputs, release, split_aux, track_args
from ._pytree import tree_unflatten

__all__ = ["hessian", "jacfwd", "jacrev"]


def _jacobian_transform(func: Callable, argnums: Any, has_aux: bool, forward: bool, api: str) -> Callable:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = track_args(args, argnums, api)
        with autograd.enable_grad():
            out, aux = split_aux(func(*tr.args, **kwargs), has_aux, f"{api}(f, ...)(*args)")
        outs, out_spec = flat_outputs(out, api)
        blocks = jacobian_blocks(outs, tr.leaves, forward=forward, create_graph=tr.keep)
        per_out = []
        for o, row in zip(outs, blocks):
            row = [b if b is not None else o.new_zeros((*o.shape, *x.shape)) for b, x in zip(row, tr.leaves)]
            per_out.append(tr.per_argnum(row, argnums))
        jac = release(tree_unflatten(per_out, out_spec), tr.keep)
        return (jac, release(aux, tr.keep)) if has_aux else jac

    return wrapper


def jacrev(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """A function returning the Jacobian of ``func`` w.r.t. argument(s) ``argnums``, by
    reverse-mode AD.

    For each output tensor ``o`` and differentiated input ``x`` the Jacobian has shape
    ``o.shape + x.shape``; it is nested like the outputs, and within each output like the
    arguments (a tuple over ``argnums`` when it is a tuple). With ``has_aux``, ``func`` returns
    ``(output, aux)`` and the result is ``(jacobian, aux)``."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian_transform(func, argnums, has_aux, forward=False, api="jacrev")


def jacfwd(
    func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *, randomness: str = "error"
) -> Callable:
    """A function returning the Jacobian of ``func`` w.r.t. argument(s) ``argnums``, by
    forward-mode AD (one Jacobian-vector product per input element); nested as in
    :func:`jacrev`. ``randomness`` is one of ``"error"``, ``"different"``, ``"same"``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    return _jacobian_transform(func, argnums, has_aux, forward=True, api="jacfwd")


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """A function returning the Hessian of ``func`` w.r.t. argument(s) ``argnums``:
    ``jacfwd(jacrev(func, argnums), argnums)``, as in PyTorch."""
    return jacfwd(jacrev(func, argnums), argnums)
