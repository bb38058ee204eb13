"""``torch.autograd.functional``: Jacobians, Hessians and their products with vectors.

``vjp``, ``jacobian`` (reverse mode) and ``vhp`` run backward passes; ``jvp``, ``hvp`` and the
forward-mode Jacobian use the double-backward trick (``forward_ad.Linearization``), as
PyTorch's ``jvp``/``hvp`` do. With ``vectorize=True`` a reverse-mode Jacobian is one backward
pass of the rows of the identity as batched cotangents (``grad(..., is_grads_batched=True)``);
forward mode still takes one pass per column.

The Jacobian blocks are also what ``torch.func.jacrev``/``jacfwd`` are built from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._creation import zeros_like
from .._tensor import Tensor
from . import grad_mode
from .backprop import grad, stack_rows
from .forward_ad import Linearization

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# ------------------------------------------------------------------ Jacobian blocks


def _one_hot(like: Tensor, k: int) -> Tensor:
    e = np.zeros(like.numel(), dtype=like._data.dtype)
    e[k] = 1
    return Tensor._make(e.reshape(like._data.shape))


def jacobian_blocks(
    outputs: Sequence[Tensor],
    inputs: Sequence[Tensor],
    forward: bool = False,
    create_graph: bool = False,
    vectorize: bool = False,
) -> list[list[Tensor | None]]:
    """``blocks[i][j]``: the Jacobian of ``outputs[i]`` w.r.t. ``inputs[j]`` (shape
    ``outputs[i].shape + inputs[j].shape``), ``None`` where the output does not depend on the
    input. Reverse mode takes one backward pass per output element (``vectorize``: one pass
    of the batched rows of the identity, ``is_grads_batched``); forward mode (the
    double-backward trick) one per input element."""
    blocks: list[list[Tensor | None]] = [[None] * len(inputs) for _ in outputs]
    if forward:
        lin = Linearization(outputs, inputs, forward_ad=True)
        for j, x in enumerate(inputs):
            if not lin.depends_on(j):
                continue
            tangents: list[Tensor | None] = [None] * len(inputs)
            cols: list[list[Tensor | None]] = []
            for e in range(x.numel()):
                tangents[j] = _one_hot(x, e)
                cols.append(lin.jvp(tangents, create_graph))
            for i, out in enumerate(outputs):
                if x.numel() and cols[0][i] is None:
                    continue
                col_i = [c[i] if c[i] is not None else zeros_like(out) for c in cols]
                m = stack_rows(col_i, create_graph) if col_i else out.new_zeros((0, *out.shape))
                blocks[i][j] = m.reshape(x.numel(), out.numel()).t().reshape(*out.shape, *x.shape)
        return blocks
    for i, out in enumerate(outputs):
        if not (isinstance(out, Tensor) and out.requires_grad) or out.numel() == 0:
            continue
        if vectorize:
            eye = Tensor._make(np.eye(out.numel(), dtype=out._data.dtype).reshape(out.numel(), *out.shape))
            with grad_mode.set_grad_enabled(create_graph):
                rows_of = grad(
                    out, list(inputs), eye, True, create_graph, allow_unused=True, is_grads_batched=True
                )
            for j, x in enumerate(inputs):
                if rows_of[j] is not None:
                    blocks[i][j] = rows_of[j].reshape(*out.shape, *x.shape)
            continue
        rows: list[tuple] = []
        with grad_mode.set_grad_enabled(create_graph):
            for e in range(out.numel()):
                rows.append(
                    grad(
                        out,
                        list(inputs),
                        _one_hot(out, e),
                        retain_graph=True,
                        create_graph=create_graph,
                        allow_unused=True,
                    )
                )
        for j, x in enumerate(inputs):
            if rows[0][j] is None:
                continue
            blocks[i][j] = stack_rows([r[j] for r in rows], create_graph).reshape(*out.shape, *x.shape)
    return blocks


# ------------------------------------------------------------------ argument handling


def _as_tuple(obj: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(obj, tuple)
    items = obj if is_tuple else (obj,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                f"{where} has type {type(el)}."
            )
    return is_tuple, items


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Inputs the function is differentiated at: views keeping the user's graph when
    ``create_graph`` (so results stay differentiable), fresh leaves otherwise."""
    with grad_mode.enable_grad():
        return tuple(
            x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
            for x in inputs
        )


def _release(obj: Any, create_graph: bool) -> Any:
    if isinstance(obj, (tuple, list)):
        return tuple(_release(o, create_graph) for o in obj)
    return obj if create_graph or obj is None else obj.detach()


def _unpack(res: Any, out_tuple: bool, in_tuple: bool | None = None) -> Any:
    if in_tuple is not None and not in_tuple:
        res = tuple(r[0] for r in res)
    return res if out_tuple else res[0]


def _validate_v(v: tuple, other: tuple, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for k, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            where = f"Entry {k} in " if other_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.shape} but got {a.shape}.")


def _check_outputs(outputs: tuple, strict: bool) -> None:
    if not strict:
        return
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The outputs must "
                "be computed in a differentiable manner from the input when running in strict mode."
            )


def _grad(outputs: tuple, inputs: tuple, grad_outputs: Any, create_graph: bool) -> tuple:
    """``autograd.grad`` over the outputs that require grad; ``None`` for unused inputs."""
    gos = grad_outputs if grad_outputs is not None else (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, gos) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad(
        [o for o, _ in pairs],
        list(inputs),
        [g for _, g in pairs] if grad_outputs is not None else None,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed "
    "in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs "
    "when using the double backward trick to compute forward mode gradients. This is not allowed in "
    "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not "
    "allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
    "that your function is twice differentiable and that the jacobian depends on the inputs (this would be "
    "violated by a linear function for example).",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
    "grad_jacobian. This is not allowed in strict mode as it prevents from using the double backward "
    "trick to replace forward mode AD.",
}


def _zeros_for_none(grads: Sequence, refs: Sequence, strict: bool, create_graph: bool, stage: str) -> tuple:
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is not allowed "
                "in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _call(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> tuple[bool, tuple]:
    with grad_mode.enable_grad():
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_outputs(outputs, strict)
    return out_tuple, outputs


def _vector(v: Any, refs: tuple, refs_tuple: bool, create_graph: bool, fn_name: str, none_msg: str) -> Any:
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(none_msg)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _prepare(v, create_graph, need_graph=False)
    _validate_v(v, refs, refs_tuple)
    return v


def _inputs_and_vector(inputs: Any, v: Any, create_graph: bool, fn_name: str) -> tuple:
    """``(inputs were a tuple, inputs, v)`` for the functions whose ``v`` is shaped like the
    inputs (``jvp``, ``vhp``, ``hvp``)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    none_msg = (
        "The vector v can only be None if the input to the user-provided function is a single "
        "Tensor with a single element."
    )
    return in_tuple, inputs, _vector(v, inputs, in_tuple, create_graph, fn_name, none_msg)


# ------------------------------------------------------------------ public functions


def vjp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """The dot product of ``v`` with the Jacobian of ``func`` at ``inputs``.

    Returns ``(func_output, vjp)``; ``vjp`` has the structure of ``inputs`` (a tensor or a tuple).
    ``v`` may be omitted when ``func`` returns a single-element tensor. With ``strict``, an output
    independent of an input raises instead of giving zeros."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    inputs = _prepare(inputs, create_graph, need_graph=True)
    out_tuple, outputs = _call(func, inputs, "vjp", strict)
    v = _vector(
        v,
        outputs,
        out_tuple,
        create_graph,
        "vjp",
        "The vector v can only be None if the user-provided function returns a single Tensor with "
        "a single element.",
    )
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _zeros_for_none(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return _unpack(_release(outputs, create_graph), out_tuple), _unpack(_release(res, create_graph), in_tuple)


def jvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """The product of the Jacobian of ``func`` at ``inputs`` with ``v`` (double-backward trick).

    Returns ``(func_output, jvp)``; ``jvp`` has the structure of ``func``'s output. ``v`` may be
    omitted when ``inputs`` is a single-element tensor."""
    in_tuple, inputs, v = _inputs_and_vector(inputs, v, create_graph, "jvp")
    out_tuple, outputs = _call(func, inputs, "jvp", strict)
    lin = Linearization(outputs, inputs)
    if strict:
        for j in range(len(inputs)):
            if lin.vjps[j] is not None and not lin.vjps[j].requires_grad:
                raise RuntimeError(
                    f"The gradient with respect to input {j} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."
                )
    tangents = v if v is not None else tuple(x.new_ones(x.shape) for x in inputs)
    res = _zeros_for_none(lin.jvp(tangents, create_graph), outputs, strict, create_graph, "back_trick")
    return _unpack(_release(outputs, create_graph), out_tuple), _unpack(
        _release(res, create_graph), out_tuple
    )


_STRATEGY_MSG = (
    'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has more '
    'outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use "reverse-mode".'
)


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``.

    A tensor when both the input and the output are tensors (shape ``output.shape +
    input.shape``); a tuple over inputs (or outputs) when one of them is a tuple; a tuple of
    tuples ``J[i][j]`` (output ``i``, input ``j``) when both are. ``strategy="forward-mode"``
    (requires ``vectorize=True``, as in PyTorch) takes one pass per input element instead of
    one per output element."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_MSG)
    forward = strategy == "forward-mode"
    if forward:
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` are '
                "not supported together (yet). Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only implemented "
                "for `vectorize=True`."
            )
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = _prepare(inputs, create_graph, need_graph=True)
    out_tuple, outputs = _call(func, inputs, "jacobian", strict)
    if vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
            "together. Please either set `strict=False` or `vectorize=False`."
        )
    blocks = jacobian_blocks(outputs, inputs, forward, create_graph, vectorize)
    res = []
    for i, (out, row) in enumerate(zip(outputs, blocks)):
        for j, b in enumerate(row):
            if b is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input {j}. This is not "
                        "allowed in strict mode."
                    )
                row[j] = out.new_zeros((*out.shape, *inputs[j].shape))
            elif strict and create_graph and not b.requires_grad:
                raise RuntimeError(
                    f"The jacobian of the user-provided function is independent of input {i}. This is not "
                    "allowed in strict mode when create_graph=True."
                )
        res.append(row)
    res = _release(res, create_graph)
    if forward:  # PyTorch's forward mode nests lists where its reverse mode nests tuples
        res = [list(r) for r in res]
    return _unpack(res, out_tuple, in_tuple)


def _scalar_output(func: Callable, fn_name: str, strict: bool) -> Callable:
    def scalar(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
        _check_outputs(outs, strict)
        if is_tuple:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                f"The Tensor returned by the function given to {fn_name} should contain a single element"
            )
        return out

    return scalar


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of the scalar ``func`` at ``inputs``: a tensor of shape
    ``input.shape + input.shape`` for one input, a tuple of tuples ``H[i][j]`` for a tuple."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    scalar = _scalar_output(func, "hessian", strict)

    def jac_func(*inp: Tensor) -> tuple:
        jac = jacobian(lambda *a: scalar(*a).reshape(()), inp, create_graph=True)
        if strict:
            for i, g in enumerate(jac):
                if not g.requires_grad:
                    raise RuntimeError(_INDEPENDENT["jacobian"].format(i=i))
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack(res, in_tuple, in_tuple)


def _first_derivative(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> tuple:
    out = _scalar_output(func, fn_name, strict)
    with grad_mode.enable_grad():
        output = out(*inputs)
        jac = _grad((output,), inputs, None, create_graph=True)
    if strict:
        for i, g in enumerate(jac):
            if g is None:
                raise RuntimeError(_INDEPENDENT["back"].format(i=i))
            if not g.requires_grad:
                raise RuntimeError(_INDEPENDENT["jacobian"].format(i=i))
    return output, jac


def vhp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``v^T H``: the product of ``v`` with the Hessian of the scalar ``func`` at ``inputs``.
    Returns ``(func_output, vhp)``, ``vhp`` with the structure of ``inputs``."""
    in_tuple, inputs, v = _inputs_and_vector(inputs, v, create_graph, "vhp")
    output, jac = _first_derivative(func, inputs, "vhp", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _grad(jac, inputs, v, create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back")
    return _release(output, create_graph), _unpack(_release(res, create_graph), in_tuple)


def hvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``H v``: the product of the Hessian of the scalar ``func`` at ``inputs`` with ``v``
    (double-backward trick). Returns ``(func_output, hvp)``, ``hvp`` shaped like ``inputs``."""
    in_tuple, inputs, v = _inputs_and_vector(inputs, v, create_graph, "hvp")
    output, jac = _first_derivative(func, inputs, "hvp", strict)
    jac = tuple(g if g is not None else zeros_like(x) for g, x in zip(jac, inputs))
    lin = Linearization(jac, inputs)
    tangents = v if v is not None else tuple(x.new_ones(x.shape) for x in inputs)
    res = _zeros_for_none(lin.jvp(tangents, create_graph), inputs, strict, create_graph, "double_back_trick")
    return _release(output, create_graph), _unpack(_release(res, create_graph), in_tuple)
