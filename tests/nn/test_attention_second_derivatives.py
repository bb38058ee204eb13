"""Second derivatives through attention where PyTorch's CPU build gives them: a mask that
requires grad sends ``scaled_dot_product_attention`` down the math path (flash has no mask
gradient), and ``nn.MultiheadAttention``'s returned weights may carry a gradient of their own."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradgradcheck

rng = np.random.default_rng(5)
Q, K, V = (rng.standard_normal((1, 1, 2, 3)) for _ in range(3))
MASK = rng.standard_normal((2, 2))
X = rng.standard_normal((3, 1, 4))


def test_a_mask_that_requires_grad_takes_the_math_path():
    q, k, v = (dt.tensor(a, requires_grad=True) for a in (Q, K, V))
    mask = dt.tensor(MASK, requires_grad=True)
    f = dt.nn.functional.scaled_dot_product_attention
    assert f(q, k, v, attn_mask=mask).grad_fn.name() == "UnsafeViewBackward0"
    assert (
        f(q, k, v, attn_mask=mask.detach()).grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    )
    assert gradgradcheck(lambda *a: f(*a[:3], attn_mask=a[3]), (q, k, v, mask))


def _mha(T, x):
    T.manual_seed(0)
    m = T.nn.MultiheadAttention(4, 2, dtype=T.float64)
    return m(x, x, x)


def test_multihead_attention_weights_differentiable_twice():
    x = dt.tensor(X, requires_grad=True)
    assert gradgradcheck(lambda a: _mha(dt, a)[1], (x,))
    assert gradgradcheck(lambda a: tuple(_mha(dt, a)), (x,))


def _second_derivatives(T) -> list:
    out = []
    f = T.nn.functional.scaled_dot_product_attention
    q, k, v, mask = (T.tensor(a, requires_grad=True) for a in (Q, K, V, MASK))
    g = T.autograd.grad(f(q, k, v, attn_mask=mask).pow(2).sum(), (q, k, v, mask), create_graph=True)
    out += T.autograd.grad(sum((t * t).sum() for t in g), (q, k, v, mask))
    for use_output in (True, False):
        x = T.tensor(X, requires_grad=True)
        o, w = _mha(T, x)
        loss = (w * w).sum() + ((o * o).sum() if use_output else 0)
        (g,) = T.autograd.grad(loss, x, create_graph=True)
        out += list(T.autograd.grad((g * g).sum(), x))
    return [t.numpy() for t in out]


@pytest.mark.parity
def test_attention_second_derivatives_as_pytorch(torch):
    for ours, theirs in zip(_second_derivatives(dt), _second_derivatives(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def _flash_answers(T) -> dict:
    """Where PyTorch's CPU build routes ``scaled_dot_product_attention`` to its flash kernel
    (4-d inputs, no dropout), a second derivative and forward-mode AD raise; the math path
    (3-d inputs, dropout, a value of another width) computes both."""
    import importlib

    fw = importlib.import_module(f"{T.__name__}.autograd.forward_ad")
    f = T.nn.functional.scaled_dot_product_attention
    out = {}
    for name, shape, vdim in (
        ("flash", (1, 2, 3, 4), 4),
        ("math 3-d", (2, 3, 4), 4),
        ("math vdim", (1, 2, 3, 4), 5),
    ):
        q, k = (T.tensor(rng.standard_normal(shape), requires_grad=True) for _ in range(2))
        v = T.tensor(rng.standard_normal(shape[:-1] + (vdim,)), requires_grad=True)
        res = [type(f(q, k, v).grad_fn).__name__]
        for how in ("double backward", "forward AD", "functional.jvp"):
            try:
                if how == "double backward":
                    (g,) = T.autograd.grad(f(q, k, v).sum(), q, create_graph=True)
                    T.autograd.grad((g * g).sum(), k)
                elif how == "forward AD":
                    with fw.dual_level():
                        fw.unpack_dual(f(fw.make_dual(q.detach(), T.ones_like(q)), k, v))
                else:
                    T.autograd.functional.jvp(lambda x: f(x, k, v), q.detach(), T.ones_like(q))
                res.append("computes")
            except (RuntimeError, NotImplementedError) as e:
                res.append((type(e).__name__, str(e).split("\n")[0]))
        out[name] = res
    return out


def test_flash_path_refuses_second_derivatives_and_forward_mode():
    got = _flash_answers(dt)
    assert got["flash"] == [
        "ScaledDotProductFlashAttentionForCpuBackward0",
        (
            "RuntimeError",
            "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented",
        ),
        (
            "NotImplementedError",
            "Trying to use forward AD with _scaled_dot_product_flash_attention_for_cpu that does not support it "
            "because it has not been implemented yet.",
        ),
        (
            "RuntimeError",
            "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented",
        ),
    ]
    assert got["math 3-d"][1:] == got["math vdim"][1:] == ["computes"] * 3


@pytest.mark.parity
def test_flash_path_answers_as_pytorch(torch):
    assert _flash_answers(dt) == _flash_answers(torch)
