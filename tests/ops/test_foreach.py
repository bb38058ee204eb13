"""``torch._foreach_*``: the per-tensor op over a list, its operand forms and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


def _lists(lib):
    g = lib.Generator().manual_seed(0)
    a = [lib.rand(3, generator=g) + 0.5, lib.rand(2, 2, generator=g) + 0.5]
    b = [lib.rand(3, generator=g) + 0.5, lib.rand(2, 2, generator=g) + 0.5]
    return a, b


def _values(ts):
    return [t.tolist() for t in ts]


def _cases(lib):
    """(label, result) of each call, the same calls in either library."""
    a, b = _lists(lib)
    c = [t.clone() for t in a]
    yield "add scalar", lib._foreach_add(a, 2)
    yield "add list alpha", lib._foreach_add(a, b, alpha=-0.5)
    yield "add 0-dim tensor", lib._foreach_add(a, lib.tensor(0.25), alpha=2)
    yield "sub list alpha", lib._foreach_sub(a, b, alpha=2)
    yield "mul scalars", lib._foreach_mul(a, [2.0, -1.0])
    yield "div tensors", lib._foreach_div(a, b)
    yield "div int", lib._foreach_div([lib.arange(4)], 2)
    yield "maximum", lib._foreach_maximum(a, b)
    yield "clamp_min", lib._foreach_clamp_min(a, 0.9)
    yield "pow scalar base", lib._foreach_pow(2.0, a)
    yield "pow list", lib._foreach_pow(a, [2, 3])
    yield "sqrt", lib._foreach_sqrt(a)
    yield "neg", lib._foreach_neg(a)
    yield "norm", lib._foreach_norm(a)
    yield "norm inf", lib._foreach_norm(a, math.inf, dtype=lib.float64)
    yield "max", lib._foreach_max(a)
    yield "addcdiv value", lib._foreach_addcdiv(a, a, b, 0.5)
    yield "addcmul values tensor", lib._foreach_addcmul(a, a, b, lib.tensor([0.5, 2.0]))
    yield "lerp scalar", lib._foreach_lerp(a, b, 0.3)
    yield "lerp tensors", lib._foreach_lerp(a, b, b)
    yield "in-place chain", (lib._foreach_mul_(c, 0.9), lib._foreach_add_(c, b, alpha=0.1))[1]
    yield "copy_", lib._foreach_copy_([lib.zeros(3), lib.zeros(2, 2)], b)
    yield "zero_", lib._foreach_zero_([t.clone() for t in a])


def test_foreach_is_the_per_tensor_op():
    a, b = _lists(dt)
    out = dt._foreach_add(a, b, alpha=2)
    assert isinstance(out, tuple) and len(out) == 2
    for o, x, y in zip(out, a, b, strict=True):
        np.testing.assert_allclose(o.numpy(), (x + 2 * y).numpy())
    np.testing.assert_allclose(dt._foreach_norm(a)[1].item(), a[1].norm().item(), rtol=1e-6)
    np.testing.assert_allclose(dt._foreach_pow(2.0, a)[0].numpy(), (2.0 ** a[0]).numpy(), rtol=1e-6)


def test_inplace_forms_update_and_return_the_list():
    a, b = _lists(dt)
    expected = [(x * 0.5 + y).numpy() for x, y in zip(a, b, strict=True)]
    ids = [id(t) for t in a]
    assert dt._foreach_mul_(a, 0.5) is a
    assert dt._foreach_add_(a, b) is a and [id(t) for t in a] == ids
    for t, e in zip(a, expected, strict=True):
        np.testing.assert_allclose(t.numpy(), e, rtol=1e-6)
    dt._foreach_zero_(a)
    assert all(not t.any() for t in a)


def test_out_of_place_forms_are_differentiable():
    a = [
        dt.rand(3, dtype=dt.float64, requires_grad=True) + 0.5,
        dt.rand(2, dtype=dt.float64, requires_grad=True) + 0.5,
    ]
    a = [t.detach().requires_grad_() for t in a]
    b = [dt.rand(3, dtype=dt.float64), dt.rand(2, dtype=dt.float64)]

    def f(x, y):
        s = dt._foreach_addcdiv([x, y], [x, y], b, 0.5)
        s = dt._foreach_lerp(s, b, 0.25)
        return sum(n for n in dt._foreach_norm(dt._foreach_mul(s, [x, y])))

    assert gradcheck(f, tuple(a))


def test_bad_arguments_are_named():
    a, b = _lists(dt)
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        dt._foreach_sqrt(a[0])
    with pytest.raises(RuntimeError, match="at least one tensor"):
        dt._foreach_add([], 1)
    with pytest.raises(RuntimeError, match="same number of tensors, got 2 and 1"):
        dt._foreach_add(a, b[:1])
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        dt._foreach_mul(a, [1.0])
    with pytest.raises(RuntimeError, match="scalar tensor expected to be 0 dim"):
        dt._foreach_mul(a, dt.ones(2))
    with pytest.raises(TypeError, match="alpha"):
        dt._foreach_add(a, 1, alpha=2)
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        dt._foreach_maximum(a, [b[0], 3])
    with pytest.raises(AttributeError, match="module 'disttorch' has no attribute '_foreach_nope'"):
        dt._foreach_nope  # noqa: B018


@pytest.mark.parity
def test_foreach_as_pytorch(torch):
    for (label, ours), (_, theirs) in zip(_cases(dt), _cases(torch), strict=True):
        assert type(ours) is type(theirs), label
        for o, t in zip(ours, theirs, strict=True):
            assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], label
            np.testing.assert_allclose(
                np.asarray(o.tolist()), np.asarray(t.tolist()), rtol=1e-6, err_msg=label
            )
