"""Ops PyTorch has no forward-mode rule for (``multi_margin_loss``, ``multilabel_margin_loss``):
forward AD and ``torch.func``'s forward transforms raise its ``NotImplementedError`` when an
input (the class weights too) carries a tangent, while reverse mode differentiates them."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import disttorch as dt

X = np.random.default_rng(3).standard_normal((3, 4))
W = np.array([0.5, 1.0, 1.5, 2.0])

CASES = {
    "multi_margin_loss": ("x", lambda T, x, w: T.nn.functional.multi_margin_loss(x, T.tensor([0, 2, 1]))),
    "multi_margin_loss/weight": (
        "w",
        lambda T, x, w: T.nn.functional.multi_margin_loss(x, T.tensor([0, 2, 1]), weight=w),
    ),
    "multilabel_margin_loss": (
        "x",
        lambda T, x, w: T.nn.functional.multilabel_margin_loss(x, T.tensor([[0, 1, -1, 0]] * 3)),
    ),
}


def _outcomes(T) -> list:
    """Per case and way of asking for a tangent: the error's class and message, or the value."""
    fw = importlib.import_module(f"{T.__name__}.autograd.forward_ad")
    out = []
    for which, f in CASES.values():
        x, w = T.tensor(X), T.tensor(W)
        arg = x if which == "x" else w

        def g(a, f=f, which=which, x=x, w=w):
            return f(T, a, w) if which == "x" else f(T, x, a)

        def dual(a, g=g):
            with fw.dual_level():
                return fw.unpack_dual(g(fw.make_dual(a, T.ones_like(a)))).tangent

        for way in (dual, lambda a, g=g: T.func.jvp(g, (a,), (T.ones_like(a),))[1], T.func.jacfwd(g)):
            try:
                out.append(way(arg).tolist())
            except Exception as e:  # noqa: BLE001 - the outcome compared
                out.append((type(e).__name__, str(e)))
    return out


def test_forward_ad_raises_without_a_forward_rule():
    for outcome in _outcomes(dt):
        assert outcome[0] == "NotImplementedError" and "Trying to use forward AD with" in outcome[1]
    x = dt.tensor(X, requires_grad=True)  # a dual of a primal with history of its own
    with dt.autograd.forward_ad.dual_level():
        d = dt.autograd.forward_ad.make_dual(x * 2, dt.ones_like(x))
        with pytest.raises(NotImplementedError, match="multilabel_margin_loss_forward"):
            CASES["multilabel_margin_loss"][1](dt, d.sin(), None)
        CASES["multilabel_margin_loss"][1](dt, x, None).backward()  # no tangent: no error
    assert dt.func.jacrev(lambda a: CASES["multi_margin_loss"][1](dt, a, None))(x).shape == (3, 4)


@pytest.mark.parity
def test_forward_ad_without_a_forward_rule_as_pytorch(torch):
    assert _outcomes(dt) == _outcomes(torch)
