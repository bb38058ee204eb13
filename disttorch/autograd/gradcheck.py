"""``gradcheck``: compare analytical gradients with central finite differences."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._creation import empty
from .._dtype import float64
from .._tensor import Tensor
from . import forward_ad
from .backprop import grad as autograd_grad
from .grad_mode import enable_grad, no_grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A gradient of ``gradcheck``/``gradgradcheck`` disagrees with its finite differences."""


def _tensors(inputs: Any) -> tuple:
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _flat_outputs(fn: Callable, inputs: tuple) -> list:
    out = fn(*inputs)
    outs = [out] if isinstance(out, Tensor) else list(out)
    return [o for o in outs if isinstance(o, Tensor) and o._data.dtype.kind in "fVc"]


def _as_reals(a: np.ndarray) -> np.ndarray:
    """A flat float64 vector of ``a``'s values; a complex element is two (real, imaginary)."""
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], -1).astype(np.float64).reshape(-1)
    return a.astype(np.float64).reshape(-1)


def _reverse_jacobian(fn: Callable, inputs: tuple, diff: list, oi: int, out: Tensor) -> list | None:
    """One row per (real) output element, by backward; None when the output needs no grad."""
    o_cplx = out._data.dtype.kind == "c"
    n_rows = _as_reals(out._data).size
    jac = [np.zeros((n_rows, _as_reals(inputs[i]._data).size)) for i in diff]
    for row in range(n_rows):
        g = np.zeros(out._data.shape, dtype=out._data.dtype)
        g.reshape(-1)[row // 2 if o_cplx else row] = (1j if row % 2 else 1) if o_cplx else 1
        out_k = _flat_outputs(fn, inputs)[oi]
        if not out_k.requires_grad:
            return None
        grads = autograd_grad(out_k, [inputs[i] for i in diff], Tensor._make(g), allow_unused=True)
        for j, gr in enumerate(grads):
            if gr is not None:
                jac[j][row] = _as_reals(gr._data)
    return jac


def _forward_jacobian(fn: Callable, inputs: tuple, diff: list, oi: int, out: Tensor) -> list:
    """One column per input element, by forward-mode AD (real inputs)."""
    n_rows = _as_reals(out._data).size
    jac = []
    for i in diff:
        x = inputs[i]
        if x._data.dtype.kind == "c":
            raise NotImplementedError("gradcheck: check_forward_ad with complex inputs is not supported")
        cols = np.zeros((n_rows, x._data.size))
        for e in range(x._data.size):
            unit = np.zeros(x._data.shape, dtype=x._data.dtype)
            unit.reshape(-1)[e] = 1
            with forward_ad.dual_level():
                duals = [
                    forward_ad.make_dual(t, Tensor._make(unit)) if k == i else t for k, t in enumerate(inputs)
                ]
                tangent = forward_ad.unpack_dual(_flat_outputs(fn, tuple(duals))[oi]).tangent
            if tangent is not None:
                cols[:, e] = _as_reals(tangent._data)
        jac.append(cols)
    return jac


def _numerical_jacobian(fn: Callable, inputs: tuple, i: int, oi: int, n_rows: int, eps: float) -> np.ndarray:
    """Central differences ``(f(x + eps) - f(x - eps)) / 2 eps``, one column per element."""
    x = inputs[i]._data
    if not x.flags.c_contiguous:
        raise ValueError("gradcheck needs contiguous inputs")
    flat = x.reshape(-1)
    steps = (eps, eps * 1j) if x.dtype.kind == "c" else (eps,)
    numeric = np.zeros((n_rows, x.size * len(steps)))
    for e in range(x.size):
        orig = flat[e]
        for s, step in enumerate(steps):
            with no_grad():
                flat[e] = orig + step
                plus = _as_reals(_flat_outputs(fn, inputs)[oi]._data)
                flat[e] = orig - step
                minus = _as_reals(_flat_outputs(fn, inputs)[oi]._data)
                flat[e] = orig
            numeric[:, e * len(steps) + s] = (plus - minus) / (2 * eps)
    return numeric


def gradcheck(
    fn: Callable,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    **accepted: Any,
) -> bool:
    """Check ``fn``'s gradients w.r.t. every floating or complex input that requires grad.

    For each output element, backward gives one row of the Jacobian (``check_backward_ad``);
    with ``check_forward_ad``, forward-mode AD gives it column by column too; central
    differences ``(f(x + eps) - f(x - eps)) / 2 eps`` give it numerically. Complex inputs
    and outputs count as pairs of real numbers (PyTorch's convention: the gradient of a real
    function w.r.t. ``z`` is ``dL/d(re z) + i dL/d(im z)``), so both the real and the
    imaginary parts are perturbed and checked. Use float64/complex128 inputs. Returns True,
    or raises (``raise_exception``) naming the input and the worst element. PyTorch's other
    switches (``nondet_tol``, ``check_undefined_grad``, ``check_batched_grad``,
    ``fast_mode``...) are accepted; the extra checks they select are not run.
    """
    unknown = set(accepted) - _ACCEPTED
    if unknown:
        raise TypeError(f"gradcheck() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    inputs = _tensors(inputs)
    diff = [i for i, t in enumerate(inputs) if getattr(t, "requires_grad", False)]
    for oi, out in enumerate(_flat_outputs(fn, inputs)):
        checks = []
        if check_backward_ad:
            checks.append(("Jacobian", _reverse_jacobian(fn, inputs, diff, oi, out)))
        if check_forward_ad:
            checks.append(
                ("Jacobian computed with forward mode", _forward_jacobian(fn, inputs, diff, oi, out))
            )
        n_rows = _as_reals(out._data).size
        for j, i in enumerate(diff):
            numeric = _numerical_jacobian(fn, inputs, i, oi, n_rows, eps)
            for what, jac in checks:
                analytic = jac[j] if jac is not None else np.zeros_like(numeric)
                bad = ~np.isclose(analytic, numeric, atol=atol, rtol=rtol)
                if not bad.any():
                    continue
                if not raise_exception:
                    return False
                raise GradcheckError(_mismatch(what, oi, i, inputs[i], out, numeric, analytic, bad))
    return True


def _mismatch(
    what: str,
    oi: int,
    i: int,
    x: Tensor,
    out: Tensor,
    numeric: np.ndarray,
    analytic: np.ndarray,
    bad: np.ndarray,
) -> str:
    """GradcheckError's text: for real input and output, PyTorch's (both whole Jacobians, one
    row per input element, in the input's dtype); with complex values, the worst element."""
    head = f"{what} mismatch for output {oi} with respect to input {i},\n"
    if "c" not in (x._data.dtype.kind, out._data.dtype.kind):
        num, ana = (
            str(Tensor._make(np.ascontiguousarray(j.T).astype(x._data.dtype))) for j in (numeric, analytic)
        )
        return f"{head}numerical:{num}\nanalytical:{ana}\n"
    o, e = np.argwhere(bad)[0]
    return (
        f"{head}numerical:{numeric[o, e]:.8g}\nanalytical:{analytic[o, e]:.8g}\n"
        f"(at output element {o}, input element {e}; max abs difference "
        f"{np.abs(analytic - numeric).max():.3g}; complex values count as (real, imaginary) pairs)"
    )


#: PyTorch's gradcheck switches accepted without running their extra checks
_ACCEPTED = frozenset(
    (
        "nondet_tol",
        "check_undefined_grad",
        "check_grad_dtypes",
        "check_batched_grad",
        "check_batched_forward_grad",
        "fast_mode",
        "masked",
    )
)


_GRADGRAD_ACCEPTED = frozenset(("gen_non_contig_grad_outputs", "check_fwd_over_rev", "check_rev_over_rev"))


def _random_grad_output(out: Tensor) -> Tensor:
    """A gradient for ``out`` drawn uniformly from [-1, 1) of the default generator, as
    PyTorch's ``gradgradcheck`` draws it (``testing.make_tensor``), so both consume the same
    random numbers."""
    kind = out._data.dtype.kind
    if kind == "c":
        real = empty(*out.shape, 2, dtype=out.dtype.to_real()).uniform_(-1, 1)
        g = Tensor._make(real._data.view(out._data.dtype).reshape(out._data.shape))
    else:
        g = empty(*out.shape, dtype=out.dtype if kind in "fV" else float64).uniform_(-1, 1)
    return g.requires_grad_()


def gradgradcheck(
    fn: Callable,
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **accepted: Any,
) -> bool:
    """Check second derivatives: :func:`gradcheck` of ``(inputs, grad_outputs) -> the
    gradients of fn's outputs w.r.t. inputs`` (computed with ``create_graph=True``), so
    both the dependence on the inputs and on the output gradients is checked.

    ``grad_outputs`` default to random tensors in [-1, 1), drawn from the default generator
    as PyTorch draws them. PyTorch's other switches (``gen_non_contig_grad_outputs``,
    ``check_fwd_over_rev``, ``check_rev_over_rev``, and :func:`gradcheck`'s) are accepted;
    the extra checks they select are not run.
    """
    unknown = set(accepted) - _ACCEPTED - _GRADGRAD_ACCEPTED
    if unknown:
        raise TypeError(f"gradgradcheck() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    inputs = _tensors(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_grad_output(o) for o in _flat_outputs(fn, inputs) if o.requires_grad)
    else:
        grad_outputs = _tensors(grad_outputs)
    n = len(inputs)

    def first_grads(*args: Any) -> tuple:
        xs, gs = args[:n], args[n:]
        with enable_grad():  # gradcheck evaluates the numerical side under no_grad
            outs = [o for o in _flat_outputs(fn, xs) if o.requires_grad]
            return autograd_grad(
                outs, [x for x in xs if x.requires_grad], list(gs), create_graph=True, allow_unused=True
            )

    return gradcheck(
        first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
