"""jacrev and a vjp_fn under vmap run the function once (one batched backward pass of the
recorded graph), as PyTorch's: side effects happen once and a random draw is the one the
Jacobian describes."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import func

X = np.linspace(0.5, 2.0, 8)


def _counted(lib, calls):
    def f(x, w):
        calls.append(1)
        return (x.sin() * w).cumsum(0), (x * w).tanh().sum()

    return f


@pytest.mark.parametrize("outer_vmap", [False, True])
def test_jacrev_calls_the_function_once(outer_vmap):
    calls = []
    jac = func.jacrev(_counted(dt, calls), argnums=(0, 1))
    x, w = dt.tensor(X), dt.tensor(X[::-1].copy())
    if outer_vmap:
        got = func.vmap(jac, in_dims=(0, None))(dt.stack([x, 2 * x]), w)
    else:
        got = jac(x, w)
    assert len(calls) == 1
    rows = [(x, w)] if not outer_vmap else [(x, w), (2 * x, w)]
    for k, (xi, wi) in enumerate(rows):  # against the per-sample jacobians of autograd.functional
        want = dt.autograd.functional.jacobian(lambda a, b: _counted(dt, [])(a, b), (xi, wi))
        for o in range(2):
            for i in range(2):
                g = got[o][i] if not outer_vmap else got[o][i][k]
                np.testing.assert_allclose(g.numpy(), want[o][i].numpy(), rtol=1e-12, atol=1e-14)


def test_vjp_fn_under_vmap_does_not_rerun_the_function():
    calls = []
    out, vjp_fn = func.vjp(lambda x: (calls.append(1), x.exp() * x)[1], dt.tensor(X))
    cts = dt.eye(8, dtype=dt.float64)[:3]
    (rows,) = func.vmap(vjp_fn)(cts)
    assert len(calls) == 1
    np.testing.assert_allclose(rows.numpy(), np.diag(np.exp(X) * (1 + X))[:3], rtol=1e-12)


def _dropout(lib):
    def f(x):
        y = lib.nn.functional.dropout(x, 0.5, training=True)
        return y * x, y

    return f


def test_jacrev_of_dropout_describes_the_mask_drawn_as_pytorch(torch):
    dt.manual_seed(3)
    jac, aux = func.jacrev(_dropout(dt), has_aux=True)(dt.tensor(X))
    torch.manual_seed(3)
    tjac, taux = torch.func.jacrev(_dropout(torch), has_aux=True)(torch.tensor(X))
    np.testing.assert_array_equal(aux.numpy(), taux.numpy())
    np.testing.assert_allclose(jac.numpy(), tjac.numpy(), rtol=1e-15)
    mask = aux.numpy() != 0  # the Jacobian is the drawn mask's: d(y*x)/dx = 2y on the diagonal
    np.testing.assert_allclose(np.diag(jac.numpy()), 2 * aux.numpy())
    assert mask.any() and not mask.all()


# ------------------------------------------------- forward mode: only the tangents are batched


def test_jacfwd_hessian_and_linearize_under_vmap_run_the_function_once():
    calls = []
    f = _counted(dt, calls)
    x, w = dt.tensor(X), dt.tensor(X[::-1].copy())
    jac = func.jacfwd(f, argnums=(0, 1))(x, w)
    assert len(calls) == 1
    want = dt.autograd.functional.jacobian(lambda a, b: _counted(dt, [])(a, b), (x, w))
    for o in range(2):
        for i in range(2):
            np.testing.assert_allclose(jac[o][i].numpy(), want[o][i].numpy(), rtol=1e-12, atol=1e-14)
    func.hessian(lambda v: f(v, w)[1])(x)
    func.jacfwd(func.jacfwd(lambda v: f(v, w)[1]))(x)
    assert len(calls) == 3  # the inner transform's function runs once, unbatched at the outer level
    _, jvp_fn = func.linearize(lambda v: f(v, w)[0], x)
    cols = func.vmap(jvp_fn)(dt.eye(8, dtype=dt.float64))
    assert len(calls) == 4  # linearize's own call, and none for the batch of tangents
    np.testing.assert_allclose(cols.numpy().T, want[0][0].numpy(), rtol=1e-12, atol=1e-14)


def _mixed(lib):
    def f(x, w):
        return lib.nn.functional.linear(x, w).tanh().softmax(-1).exp().sum()

    return f


def test_nested_forward_mode_matches_pytorch(torch):
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(2, 4)), rng.normal(size=(3, 4))
    for outer in ("jacfwd", "jacrev"):
        ours = getattr(func, outer)(func.jacfwd(_mixed(dt), argnums=1), argnums=1)(dt.tensor(x), dt.tensor(w))
        theirs = getattr(torch.func, outer)(torch.func.jacfwd(_mixed(torch), argnums=1), argnums=1)(
            torch.tensor(x), torch.tensor(w)
        )
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    ts = rng.normal(size=(5, 4))  # a function closing over the tangents' batch: tracked there
    ours = func.vmap(lambda t: func.jvp(lambda v: v * t.sin(), (dt.tensor(x[0]),), (t,))[1])(dt.tensor(ts))
    theirs = torch.func.vmap(lambda t: torch.func.jvp(lambda v: v * t.sin(), (torch.tensor(x[0]),), (t,))[1])(
        torch.tensor(ts)
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)

    def per(lib, inner):  # transforms inside, closing over a value batched with the tangents
        F = lib.func

        def run(t, c):
            if inner == "grad":
                g = lambda v: F.grad(lambda y: (y.sin() * c).sum())(v)  # noqa: E731
            else:
                g = lambda v: F.jvp(lambda y: y.sin() * c, (v,), (v.cos(),))[1]  # noqa: E731
            return F.jvp(g, (lib.tensor(x[0]),), (t,))[1]

        return F.vmap(run)(lib.tensor(ts), lib.tensor(ts[::-1].copy()))

    for inner in ("grad", "jvp"):
        np.testing.assert_allclose(per(dt, inner).numpy(), per(torch, inner).numpy(), rtol=1e-12, atol=1e-15)
