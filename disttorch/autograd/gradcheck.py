"""``gradcheck``: compare analytical gradients with central finite differences."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._tensor import Tensor
from .backprop import grad as autograd_grad
from .grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck"]


def _tensors(inputs: Any) -> tuple:
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _flat_outputs(fn: Callable, inputs: tuple) -> list:
    out = fn(*inputs)
    outs = [out] if isinstance(out, Tensor) else list(out)
    return [o for o in outs if isinstance(o, Tensor) and o._data.dtype.kind in "fV"]


def gradcheck(
    fn: Callable,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Check ``fn``'s gradients w.r.t. every floating input that requires grad.

    For each output element, backward gives one row of the Jacobian; central differences
    ``(f(x + eps) - f(x - eps)) / 2 eps`` give the same row numerically. Use float64
    inputs. Returns True, or raises (``raise_exception``) naming the input and the worst
    element.
    """
    inputs = _tensors(inputs)
    diff = [i for i, t in enumerate(inputs) if getattr(t, "requires_grad", False)]
    outs = _flat_outputs(fn, inputs)
    for oi, out in enumerate(outs):
        n_out = out._data.size
        analytic = [np.zeros((n_out, inputs[i]._data.size)) for i in diff]
        for k in range(n_out):
            g = np.zeros(out._data.shape, dtype=out._data.dtype)
            g.reshape(-1)[k] = 1
            out_k = _flat_outputs(fn, inputs)[oi]
            if not out_k.requires_grad:
                break
            grads = autograd_grad(out_k, [inputs[i] for i in diff], Tensor._make(g), allow_unused=True)
            for j, gr in enumerate(grads):
                if gr is not None:
                    analytic[j][k] = gr._data.reshape(-1)
        for j, i in enumerate(diff):
            x = inputs[i]._data
            numeric = np.zeros_like(analytic[j])
            flat = x.reshape(-1) if x.flags.c_contiguous else None
            if flat is None:
                raise ValueError("gradcheck needs contiguous inputs")
            for e in range(x.size):
                orig = flat[e]
                with no_grad():
                    flat[e] = orig + eps
                    plus = _flat_outputs(fn, inputs)[oi]._data.astype(np.float64).reshape(-1)
                    flat[e] = orig - eps
                    minus = _flat_outputs(fn, inputs)[oi]._data.astype(np.float64).reshape(-1)
                    flat[e] = orig
                numeric[:, e] = (plus - minus) / (2 * eps)
            bad = ~np.isclose(analytic[j], numeric, atol=atol, rtol=rtol)
            if bad.any():
                if not raise_exception:
                    return False
                o, e = np.argwhere(bad)[0]
                raise RuntimeError(
                    f"Jacobian mismatch for output {oi} with respect to input {i},\n"
                    f"numerical:{numeric[o, e]:.8g}\nanalytical:{analytic[j][o, e]:.8g}\n"
                    f"(at output element {o}, input element {e}; max abs difference "
                    f"{np.abs(analytic[j] - numeric).max():.3g})"
                )
    return True


def gradgradcheck(
    fn: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3
) -> bool:
    """Check second derivatives: gradcheck of the gradient computed with create_graph."""
    inputs = _tensors(inputs)

    def first_grads(*xs: Any) -> tuple:
        with enable_grad():  # gradcheck evaluates the numerical side under no_grad
            out = fn(*xs)
            return autograd_grad(
                out.sum() if out._data.size != 1 else out,
                [x for x in xs if x.requires_grad],
                create_graph=True,
                allow_unused=True,
            )

    return gradcheck(first_grads, inputs, eps=eps, atol=atol, rtol=rtol)
