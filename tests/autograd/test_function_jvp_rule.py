"""Forward-mode AD through a user ``autograd.Function`` calls its ``jvp`` (dual tensors,
``torch.func.jvp``/``jacfwd``/``linearize``, ``jacobian(strategy="forward-mode")``), even when
it also has a ``backward``; the double-backward trick of ``autograd.functional.jvp``
differentiates its ``backward``; a Function without ``jvp`` refuses forward mode."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt


def _functions(torch) -> tuple:
    class SteRound(torch.autograd.Function):
        """Rounding with a straight-through backward and a forward rule of zero (two rules that
        differ, so the answers say which one ran)."""

        @staticmethod
        def forward(x):
            return x.round()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return t * 0

    class Scale(torch.autograd.Function):  # ctx in forward, both rules
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

        @staticmethod
        def jvp(ctx, t, _):
            return t * (ctx.k + 1)

    class BackwardOnly(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return SteRound, Scale, BackwardOnly


def _outcome(fn) -> object:
    try:
        return [round(v, 10) for v in fn().reshape(-1).tolist()]
    except Exception as e:  # noqa: BLE001 - the error is the answer compared
        return type(e).__name__, str(e)


def _answers(torch) -> dict:
    fw = importlib.import_module(f"{torch.__name__}.autograd.forward_ad")
    af = importlib.import_module(f"{torch.__name__}.autograd.functional")
    ste, scale, only = _functions(torch)
    x = torch.tensor([0.4, 1.7, -2.2], dtype=torch.float64)
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)

    def dual(f):
        with fw.dual_level():
            return fw.unpack_dual(f(fw.make_dual(x, t))).tangent

    out = {}
    for name, f in (("ste", ste.apply), ("scale", lambda v: scale.apply(v, 3.0)), ("only", only.apply)):
        out[name, "dual"] = _outcome(lambda: dual(f))
        out[name, "func.jvp"] = _outcome(lambda: torch.func.jvp(f, (x,), (t,))[1])
        out[name, "linearize"] = _outcome(lambda: torch.func.linearize(f, x)[1](t))
        out[name, "jacobian fwd"] = _outcome(
            lambda: af.jacobian(f, x, strategy="forward-mode", vectorize=True)
        )
        out[name, "functional.jvp"] = _outcome(lambda: af.jvp(f, x, t)[1])
        out[name, "jacrev"] = _outcome(lambda: torch.func.jacrev(f)(x))
    out["ste", "jacfwd"] = _outcome(lambda: torch.func.jacfwd(ste.apply)(x))
    return out


def test_forward_mode_calls_jvp_and_reverse_mode_backward():
    got = _answers(dt)
    for how in ("dual", "func.jvp", "linearize"):
        assert got["ste", how] == [0.0, 0.0, 0.0]
        assert got["scale", how] == [4.0, 8.0, 12.0]
    assert got["ste", "jacobian fwd"] == [0.0] * 9
    assert got["ste", "jacfwd"] == [0.0] * 9
    assert got["ste", "functional.jvp"] == [1.0, 2.0, 3.0]  # the double-backward trick
    assert got["scale", "functional.jvp"] == [3.0, 6.0, 9.0]
    assert got["ste", "jacrev"] == [1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0]


def test_function_without_jvp_refuses_forward_mode():
    got = _answers(dt)
    message = (
        "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
    )
    for how in ("dual", "func.jvp", "linearize", "jacobian fwd"):
        assert got["only", how] == ("NotImplementedError", message)
    assert got["only", "functional.jvp"] == [2.0, 4.0, 6.0]


def test_gradcheck_forward_ad_through_jvp():
    class Exp(dt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            ctx.save_for_forward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[0]

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.saved_tensors[0]

    x = dt.randn(4, dtype=dt.float64, requires_grad=True)
    assert dt.autograd.gradcheck(Exp.apply, (x,), check_forward_ad=True)


# torch.func's transforms refuse, in PyTorch, a Function without setup_context (Scale) and
# vmap one without a vmap rule (jacfwd of SteRound); disttorch runs them
_FUNCTORCH_ONLY = {("scale", "func.jvp"), ("scale", "jacrev"), ("ste", "jacfwd")}


@pytest.mark.parity
def test_function_forward_rules_as_pytorch(torch):
    ours, theirs = _answers(dt), _answers(torch)
    assert {k: v for k, v in ours.items() if k not in _FUNCTORCH_ONLY} == {
        k: v for k, v in theirs.items() if k not in _FUNCTORCH_ONLY
    }
