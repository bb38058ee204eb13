"""LBFGS (with and without strong-Wolfe line search), Muon and SparseAdam against PyTorch."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import optim

RNG = np.random.default_rng(1)
X = RNG.standard_normal((16, 3))
Y = RNG.standard_normal((16, 4))
W0 = RNG.standard_normal((4, 3)) * 0.5
B0 = RNG.standard_normal(4) * 0.5


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _params(lib, w=W0, b=B0):
    return [
        lib.tensor(np.array(w), dtype=lib.float64, requires_grad=True),
        lib.tensor(np.array(b), dtype=lib.float64, requires_grad=True),
    ]


def _closure(lib, opt, w, b):
    def closure():
        opt.zero_grad()
        loss = ((lib.tanh(lib.tensor(X) @ w.T + b) - lib.tensor(Y)) ** 2).mean()
        loss.backward()
        return loss

    return closure


def _rosenbrock(lib, xy):
    return (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2


LBFGS_CASES = [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"lr": 0.5, "history_size": 3, "max_iter": 7},
    {"history_size": 2, "max_iter": 10, "max_eval": 12, "line_search_fn": "strong_wolfe"},
    {"tolerance_grad": 1e-3, "tolerance_change": 1e-4},
]


@pytest.mark.parity
@pytest.mark.parametrize("kwargs", LBFGS_CASES)
def test_lbfgs_matches_pytorch(torch, kwargs):
    runs = []
    for lib, mod in ((dt, optim), (torch, torch.optim)):
        params = _params(lib)
        opt = mod.LBFGS(params, **kwargs)
        losses = [opt.step(_closure(lib, opt, *params)).item() for _ in range(4)]
        state = opt.state[params[0]]
        runs.append((params, losses, state["func_evals"], state["n_iter"]))
    (ours, l1, fe1, it1), (theirs, l2, fe2, it2) = runs
    assert (fe1, it1) == (fe2, it2)
    np.testing.assert_allclose(l1, l2, rtol=1e-6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_rosenbrock_matches_pytorch_and_converges(torch, line_search_fn):
    out = []
    for lib, mod in ((dt, optim), (torch, torch.optim)):
        xy = lib.tensor([-1.5, 2.0], dtype=lib.float64, requires_grad=True)
        opt = mod.LBFGS([xy], lr=1 if line_search_fn else 0.1, max_iter=50, line_search_fn=line_search_fn)

        def closure(xy=xy, opt=opt, lib=lib):
            opt.zero_grad()
            loss = _rosenbrock(lib, xy)
            loss.backward()
            return loss

        for _ in range(5):
            opt.step(closure)
        out.append(xy.detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6)
    if line_search_fn:
        np.testing.assert_allclose(out[0], [1.0, 1.0], atol=1e-5)


def test_lbfgs_state_holds_pytorchs_keys_and_scalar_tensors():
    w, b = _params(dt)
    opt = optim.LBFGS([w, b], history_size=4, max_iter=3)
    for _ in range(2):
        opt.step(_closure(dt, opt, w, b))
    state = opt.state_dict()["state"][0]
    keys = {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "al"}
    assert keys | {"prev_flat_grad", "prev_loss"} == set(state)
    assert len(state["al"]) == 4 and state["al"][len(state["old_dirs"]) - 1] is not None
    assert all(v.dim() == 0 and v.dtype == dt.float64 for v in state["ro"] + [state["H_diag"]])
    fresh = optim.LBFGS([w, b], history_size=4, max_iter=3)
    fresh.load_state_dict(opt.state_dict())  # and its own state loads back and steps on
    fresh.step(_closure(dt, fresh, w, b))


@pytest.mark.parity
@pytest.mark.parametrize("max_iter", [1, 3])
def test_lbfgs_state_keys_come_in_pytorchs_order(torch, max_iter):
    """``al`` joins the state at the second iteration, after ``n_iter`` (one-iteration steps never
    hold it), so printed or saved state dicts list the keys as PyTorch's do."""
    orders = []
    for lib in (torch, dt):
        w, b = _params(lib)
        opt = lib.optim.LBFGS([w, b], history_size=4, max_iter=max_iter)
        for _ in range(2):
            opt.step(_closure(lib, opt, w, b))
        orders.append(list(opt.state_dict()["state"][0]))
    assert orders[1] == orders[0]


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_reads_its_losses_under_no_grad_without_warning(monkeypatch, line_search_fn):
    # the style-transfer tutorial's closure returns a loss that requires grad: PyTorch's step
    # (under no_grad) reads it quietly, and runs the closure with grad mode on
    import warnings

    from disttorch import _tensor

    monkeypatch.setattr(_tensor, "_scalar_warning", [True])
    w, b = _params(dt)
    opt = optim.LBFGS([w, b], max_iter=4, line_search_fn=line_search_fn)
    closure = _closure(dt, opt, w, b)
    modes = []

    def watched():
        modes.append(dt.is_grad_enabled())
        return closure()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = opt.step(watched)
    assert loss.requires_grad and modes and all(modes)


def test_lbfgs_needs_a_closure_and_one_group():
    p = dt.zeros(2, requires_grad=True)
    opt = optim.LBFGS([p])
    with pytest.raises(RuntimeError, match="closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [p]}, {"params": [dt.zeros(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        optim.LBFGS([p], line_search_fn="armijo")


@pytest.mark.parity
@pytest.mark.parametrize(
    "kwargs",
    [
        {"lr": 0.02},
        {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
        {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw", "momentum": 0.8},
    ],
)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_muon_matches_pytorch(torch, kwargs, shape):
    rng = np.random.default_rng(3)
    w0, target = rng.standard_normal(shape), rng.standard_normal(shape)
    out = []
    for lib, mod in ((dt, optim), (torch, torch.optim)):
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
        opt = mod.Muon([w], **kwargs)
        for _ in range(20):
            opt.zero_grad()
            ((lib.tanh(w) - lib.tensor(target)) ** 2).sum().backward()
            opt.step()
        out.append(w.detach().numpy())
    # the Newton-Schulz iteration runs in bfloat16 (8-bit mantissa), so updates agree to ~1%
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=0.02 * 20 * kwargs["lr"] * 2)
    assert not np.allclose(out[0], w0)


def test_muon_orthogonalises_and_rejects_non_matrices():
    from disttorch.optim.muon import zeropower_via_newtonschulz

    g = np.random.default_rng(0).standard_normal((6, 4))
    o = zeropower_via_newtonschulz(g, (3.4445, -4.775, 2.0315), 5, 1e-7)
    s = np.linalg.svd(o.astype(np.float64), compute_uv=False)
    assert o.shape == g.shape and np.all((s > 0.5) & (s < 1.5))
    with pytest.raises(ValueError, match="2D parameters"):
        optim.Muon([dt.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="not supported"):
        optim.Muon([dt.zeros(3, 3, requires_grad=True)], adjust_lr_fn="other")


@pytest.mark.parity
def test_sparse_adam_with_dense_embedding_grads_matches_pytorch_sparse(torch):
    rng = np.random.default_rng(4)
    table = rng.standard_normal((10, 3))
    batches = [rng.integers(0, 5, size=4) for _ in range(10)]
    t_emb = torch.nn.Embedding(10, 3, sparse=True, dtype=torch.float64)
    with torch.no_grad():
        t_emb.weight.copy_(torch.tensor(table))
    d_w = dt.tensor(table, dtype=dt.float64, requires_grad=True)
    t_opt = torch.optim.SparseAdam(t_emb.parameters(), lr=0.1)
    d_opt = optim.SparseAdam([d_w], lr=0.1)
    for idx in batches:
        t_opt.zero_grad()
        (t_emb(torch.tensor(idx)) ** 3).sum().backward()
        t_opt.step()
        d_opt.zero_grad()
        (d_w[dt.tensor(idx)] ** 3).sum().backward()
        d_opt.step()
    np.testing.assert_allclose(d_w.detach().numpy(), t_emb.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(d_w.detach().numpy()[5:], table[5:])  # rows never looked up
    assert d_opt.state[d_w]["step"] == t_opt.state[t_emb.weight]["step"] == 10


@pytest.mark.parity
@pytest.mark.parametrize(
    "kwargs", [{"history_size": 4, "max_iter": 5}, {"line_search_fn": "strong_wolfe", "max_iter": 5}]
)
def test_lbfgs_state_dict_moves_between_libraries(torch, kwargs):
    theirs = _params(torch)
    t_opt = torch.optim.LBFGS(theirs, **kwargs)
    for _ in range(2):
        t_opt.step(_closure(torch, t_opt, *theirs))
    ours = _params(dt, *(p.detach().numpy() for p in theirs))
    d_opt = optim.LBFGS(ours, **kwargs)

    def convert(v, make):
        if hasattr(v, "detach"):
            return make(v.detach().numpy().copy())
        if isinstance(v, dict):
            return {k: convert(x, make) for k, x in v.items()}
        if isinstance(v, list):
            return [convert(x, make) for x in v]
        return v

    d_opt.load_state_dict(convert(t_opt.state_dict(), dt.tensor))
    for _ in range(2):
        t_opt.step(_closure(torch, t_opt, *theirs))
        d_opt.step(_closure(dt, d_opt, *ours))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-10)
    # and back: disttorch's state loads in PyTorch
    ours_state, their_state = d_opt.state_dict()["state"][0], t_opt.state_dict()["state"][0]
    assert sorted(ours_state) == sorted(their_state)
    for key in ("al", "ro"):  # the same scratch, entry by entry (None where never computed)
        assert [v is None for v in ours_state[key]] == [v is None for v in their_state[key]]
        for a, b in zip(ours_state[key], their_state[key]):
            if a is not None:
                assert a.dtype == dt.float64 and a.dim() == 0
                np.testing.assert_allclose(a.item(), b.item(), rtol=1e-6, atol=1e-10)
    theirs2 = _params(torch, *(p.detach().numpy() for p in ours))
    t_opt2 = torch.optim.LBFGS(theirs2, **kwargs)
    t_opt2.load_state_dict(convert(d_opt.state_dict(), torch.tensor))
    t_opt2.step(_closure(torch, t_opt2, *theirs2))
    d_opt.step(_closure(dt, d_opt, *ours))
    for a, b in zip(ours, theirs2):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-10)
