"""``cdist``'s and ``pdist``'s derivatives as PyTorch's: their ``_cdist_forward`` and
``_pdist_forward`` kernels are differentiable once (the gradient's own derivative raises ``the
derivative for '_cdist_backward' is not implemented.``) and have no forward-mode rule; ``cdist``
with ``p=2`` by matrix products (``compute_mode``, or more than 25 rows) is composed of
differentiable ops, so reverse mode of any order works there (forward mode raises, as PyTorch's
``_euclidean_dist`` has no forward rule). ``torch.func``'s nested transforms answer as plain
``create_graph`` does."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(11)
MODES = ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist", "use_mm_for_euclid_dist")


def _outcomes(T, rows: int) -> list:
    """Per ``p`` and compute mode: the double backward's error (class, message) or value."""
    a0, b0 = rng.standard_normal((rows, 2)), rng.standard_normal((rows + 1, 2))
    out = []
    for p in (0.0, 1.0, 2.0, 3.0, float("inf")):
        for mode in MODES:
            a, b = T.tensor(a0, requires_grad=True), T.tensor(b0)
            (g,) = T.autograd.grad(T.cdist(a, b, p=p, compute_mode=mode).sum(), a, create_graph=True)
            try:
                (h,) = T.autograd.grad((g * g).sum(), a)
                out.append((p, mode, g.requires_grad, np.round(h.numpy(), 8).tolist()))
            except NotImplementedError as e:
                out.append((p, mode, g.requires_grad, str(e)))
    return out


def test_double_backward_raises_through_the_cdist_kernel():
    for p, mode, requires_grad, outcome in _outcomes(dt, 3):
        assert requires_grad
        if p == 2 and mode == "use_mm_for_euclid_dist":
            assert isinstance(outcome, list)
        else:
            assert outcome == "the derivative for '_cdist_backward' is not implemented."


def test_cdist_gradients_in_float64():
    a = dt.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = dt.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    for p in (1.0, 1.5, 2.0, float("inf")):
        assert gradcheck(lambda x, y, p=p: dt.cdist(x, y, p=p), (a, b))
    assert gradgradcheck(lambda x, y: dt.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), (a, b))


def test_forward_ad_refused_by_the_cdist_kernel():
    a, b = dt.tensor(rng.standard_normal((3, 2))), dt.tensor(rng.standard_normal((4, 2)))
    with pytest.raises(NotImplementedError, match="forward AD with _cdist_forward"):
        dt.func.jacfwd(lambda x: dt.cdist(x, b, p=1.0))(a)
    # by matrix products: PyTorch's _euclidean_dist, which has no forward rule either
    with pytest.raises(NotImplementedError, match="forward AD with _euclidean_dist"):
        dt.func.jacfwd(lambda x: dt.cdist(x, b, compute_mode="use_mm_for_euclid_dist"))(a)


@pytest.mark.parity
@pytest.mark.parametrize("rows", [3, 30])
def test_cdist_double_backward_as_pytorch(torch, rows):
    state = rng.bit_generator.state
    ours = _outcomes(dt, rows)
    rng.bit_generator.state = state
    theirs = _outcomes(torch, rows)
    for o, t in zip(ours, theirs):
        assert o[:3] == t[:3]
        if isinstance(o[3], str) or isinstance(t[3], str):
            assert o[3] == t[3]
        else:
            np.testing.assert_allclose(o[3], t[3], rtol=1e-6, atol=1e-8)


def _pdist_outcomes(T) -> list:
    x0, out = rng.standard_normal((4, 3)), []
    for p in (1.0, 2.0, 3.0, float("inf")):
        x = T.tensor(x0, requires_grad=True)
        (g,) = T.autograd.grad(T.nn.functional.pdist(x, p).pow(2).sum(), x, create_graph=True)
        with pytest.raises(NotImplementedError) as e:
            T.autograd.grad(g.sum(), x)
        out.append((g.requires_grad, str(e.value)))
    with pytest.raises(NotImplementedError) as e:
        T.func.jacfwd(T.nn.functional.pdist)(T.tensor(x0))
    return [*out, str(e.value)]


def test_pdist_differentiable_once():
    outcomes = _pdist_outcomes(dt)
    assert outcomes[:4] == [(True, "the derivative for '_pdist_backward' is not implemented.")] * 4
    assert "forward AD with _pdist_forward" in outcomes[4]
    assert gradcheck(dt.nn.functional.pdist, (dt.tensor(rng.standard_normal((4, 3)), requires_grad=True),))


@pytest.mark.parity
def test_pdist_derivatives_as_pytorch(torch):
    assert _pdist_outcomes(dt) == _pdist_outcomes(torch)


NESTED = {
    "jacrev(jacrev)": lambda F, f: F.jacrev(F.jacrev(f)),
    "jacrev(jacfwd)": lambda F, f: F.jacrev(F.jacfwd(f)),
    "jacfwd(jacrev)": lambda F, f: F.jacfwd(F.jacrev(f)),
    "hessian": lambda F, f: F.hessian(f),
    "grad(grad)": lambda F, f: F.grad(lambda x: F.grad(f)(x).sum()),
    "vmap(grad(grad))": lambda F, f: F.vmap(F.grad(lambda x: F.grad(f)(x).sum())),
}


def _nested_outcomes(T) -> dict:
    """Second derivatives by ``torch.func``'s nested transforms: the error (class, first line)
    or the sum of the result."""
    local = np.random.default_rng(3)
    x0, y0 = local.standard_normal((4, 3)), local.standard_normal((5, 3))
    y = T.tensor(y0)
    fs = {
        "cdist": lambda x: T.cdist(x, y).sum(),
        "cdist p=1": lambda x: T.cdist(x, y, p=1.0).sum(),
        "cdist mm": lambda x: T.cdist(x, y, compute_mode="use_mm_for_euclid_dist").sum(),
        "pdist": lambda x: T.nn.functional.pdist(x).sum(),
    }
    out = {}
    for fname, f in fs.items():
        for tname, t in NESTED.items():
            x = T.tensor(x0)
            if tname.startswith("vmap"):
                x = x.unsqueeze(0).expand(2, 4, 3)
            try:
                out[fname, tname] = round(float(t(T.func, f)(x).sum()), 8)
            except (RuntimeError, NotImplementedError) as e:
                out[fname, tname] = (type(e).__name__, str(e).split("\n")[0])
    return out


def test_nested_transforms_answer_as_create_graph():
    got = _nested_outcomes(dt)
    for tname in NESTED:
        forward = "jacfwd" in tname or tname == "hessian"
        for fname, kernel in (("cdist", "_cdist"), ("cdist p=1", "_cdist"), ("pdist", "_pdist")):
            if forward:
                assert got[fname, tname][1].startswith(f"Trying to use forward AD with {kernel}_forward")
            else:
                assert got[fname, tname] == (
                    "NotImplementedError",
                    f"the derivative for '{kernel}_backward' is not implemented.",
                )
        if not forward:
            assert isinstance(got["cdist mm", tname], float)


@pytest.mark.parity
def test_nested_transforms_as_pytorch(torch):
    assert _nested_outcomes(dt) == _nested_outcomes(torch)
