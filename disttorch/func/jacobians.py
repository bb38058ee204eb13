"""``jacrev``, ``jacfwd`` and ``hessian`` of ``torch.func``.

As in PyTorch, ``jacrev`` is ``vmap`` of the vector-Jacobian product over the rows of the
identity (one cotangent per output element) and ``jacfwd`` ``vmap`` of the Jacobian-vector
product over the columns (one tangent per input element): the function runs once, unbatched
at the new level, and one backward pass takes the whole batch of cotangents (two for
``jacfwd``, forward mode being the double-backward trick; see ``products``). ``hessian`` is
``jacfwd(jacrev(f))``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._creation import eye
from .._tensor import Tensor
from ._inputs import check_argnums, flat_outputs
from ._pytree import tree_flatten, tree_map, tree_unflatten
from .products import jvp, vjp
from .transforms import vmap

__all__ = ["hessian", "jacfwd", "jacrev"]


def _with_primals(func: Callable, args: tuple, kwargs: dict, nums: tuple[int, ...]) -> Callable:
    """``func`` as a function of the differentiated arguments only."""

    def of_primals(*primals: Any) -> Any:
        full = list(args)
        for k, p in zip(nums, primals):
            full[k] = p
        return func(*full, **kwargs)

    return of_primals


def _basis(like: list[Tensor]) -> tuple[list[Tensor], list[int]]:
    """The rows of the identity over all elements of ``like``, cut into one tensor per entry
    (``(n, *x.shape)``, n the total count), and each entry's element count."""
    counts = [x.numel() for x in like]
    n = sum(counts)
    ident = eye(n, dtype=like[0].dtype)
    parts, start = [], 0
    for x, c in zip(like, counts):
        parts.append(ident[:, start : start + c].reshape(n, *x.shape))
        start += c
    return parts, counts


def _regroup(flat: list, specs: list, argnums: Any) -> Any:
    """One entry per differentiated leaf, regrouped like the arguments ``argnums``."""
    trees, pos = [], 0
    for spec in specs:
        trees.append(tree_unflatten(flat[pos : pos + spec.num_leaves], spec))
        pos += spec.num_leaves
    return trees[0] if isinstance(argnums, int) else tuple(trees)


def _jacobian(blocks: list[list[Tensor]], out_spec: Any, specs: list, argnums: Any) -> Any:
    """The Jacobian's blocks (one row per output leaf, one entry per input leaf) nested like
    the outputs, each output's like the arguments ``argnums``."""
    return tree_unflatten([_regroup(row, specs, argnums) for row in blocks], out_spec)


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
    ``(output, aux)`` and the result is ``(jacobian, aux)``. ``chunk_size`` computes that many
    rows at a time."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = check_argnums(argnums, len(args), "jacrev")
        primals = tuple(args[k] for k in nums)
        result = vjp(_with_primals(func, args, kwargs, nums), *primals, has_aux=has_aux)
        out, vjp_fn = result[0], result[1]
        outs, out_spec = flat_outputs(out, "jacrev")
        specs = [tree_flatten(p)[1] for p in primals]
        ins = [x for p in primals for x in tree_flatten(p)[0]]
        basis, counts = _basis(outs)
        rows = vmap(
            lambda *cts: vjp_fn(tree_unflatten(list(cts), out_spec)), randomness="same", chunk_size=chunk_size
        )(*basis)
        rows = tree_flatten(rows)[0]  # one (n_out, *x.shape) per input leaf
        blocks, start = [], 0
        for o, c in zip(outs, counts):
            blocks.append([r[start : start + c].reshape(*o.shape, *x.shape) for r, x in zip(rows, ins)])
            start += c
        jac = _jacobian(blocks, out_spec, specs, argnums)
        return (jac, result[2]) if has_aux else jac

    return wrapper


def jacfwd(
    func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *, randomness: str = "error"
) -> Callable:
    """A function returning the Jacobian of ``func`` w.r.t. argument(s) ``argnums``, by
    forward-mode AD (Jacobian-vector products with the columns of the identity, batched);
    nested as in :func:`jacrev`. ``randomness`` is one of ``"error"``, ``"different"``,
    ``"same"``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = check_argnums(argnums, len(args), "jacfwd")
        primals = tuple(args[k] for k in nums)
        specs = [tree_flatten(p)[1] for p in primals]
        ins = [x for p in primals for x in tree_flatten(p)[0]]
        for x in ins:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"jacfwd: Expected primals to only contain Tensors, got {type(x)}")
        basis, counts = _basis(ins)
        of_primals = _with_primals(func, args, kwargs, nums)
        primal_spec = tree_flatten(primals)[1]

        def push(*tangents: Tensor) -> tuple:
            return jvp(of_primals, primals, tree_unflatten(list(tangents), primal_spec), has_aux=has_aux)[1:]

        pushed = vmap(push, randomness=randomness)(*basis)
        columns, out_spec = flat_outputs(pushed[0], "jacfwd")  # one (n_in, *o.shape) per output
        blocks = []
        for col in columns:
            row, start = [], 0
            for x, c in zip(ins, counts):
                part = col[start : start + c]
                row.append(part.movedim(0, -1).reshape(*col.shape[1:], *x.shape))
                start += c
            blocks.append(row)
        jac = _jacobian(blocks, out_spec, specs, argnums)
        if not has_aux:
            return jac
        return jac, tree_map(lambda a: a[0] if isinstance(a, Tensor) else a, pushed[1])

    return wrapper


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """A function returning the Hessian of ``func`` w.r.t. argument(s) ``argnums``:
    ``jacfwd(jacrev(func, argnums), argnums)``, as in PyTorch."""
    return jacfwd(jacrev(func, argnums), argnums)
