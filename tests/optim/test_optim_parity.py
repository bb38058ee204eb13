"""Every optimiser against PyTorch: 20 steps from the same float64 weights give the same
parameters (rtol 1e-6), and a state dict moves between the libraries mid-way (both ways)
with training continuing identically."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import optim

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 3))
Y = RNG.standard_normal((8, 4))
W0 = RNG.standard_normal((4, 3)) * 0.5
B0 = RNG.standard_normal(4) * 0.5

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "foreach": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adam", {"lr": 0.01, "fused": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.3}),
    ("Adamax", {"lr": 0.01}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.2}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 1.0)}),
    ("Rprop", {"lr": 0.01, "step_sizes": (1e-4, 0.02), "maximize": True}),
    ("NAdam", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "betas": (0.8, 0.9)}),
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.05}),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "d": 1.5, "beta2_decay": -0.5, "eps": (1e-20, 1e-3)}),
    ("Adafactor", {"lr": 0.05, "maximize": True}),
]


def _ids(cases):
    return [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}" for n, kw in cases]


def _loss(lib, w, b):
    x, y = lib.tensor(X), lib.tensor(Y)
    return ((lib.tanh(x @ w.T + b) - y) ** 2).mean()


def _params(lib, w=W0, b=B0):
    return [
        lib.tensor(np.array(w), dtype=lib.float64, requires_grad=True),
        lib.tensor(np.array(b), dtype=lib.float64, requires_grad=True),
    ]


def _train(lib, opt, params, steps):
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, *params).backward()
        opt.step()


def _convert(value, make):
    if hasattr(value, "detach"):
        return make(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _convert(v, make) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v, make) for v in value]
    return value


def _numpy(params):
    return [p.detach().numpy() for p in params]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", CASES, ids=_ids(CASES))
def test_twenty_steps_match_pytorch(torch, name, kwargs):
    ours, theirs = _params(dt), _params(torch)
    _train(dt, getattr(optim, name)(ours, **kwargs), ours, 20)
    _train(torch, getattr(torch.optim, name)(theirs, **kwargs), theirs, 20)
    for a, b in zip(_numpy(ours), _numpy(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", CASES, ids=_ids(CASES))
def test_state_dict_moves_between_libraries(torch, name, kwargs):
    # torch -> disttorch
    theirs = _params(torch)
    t_opt = getattr(torch.optim, name)(theirs, **kwargs)
    _train(torch, t_opt, theirs, 10)
    sd = t_opt.state_dict()
    ours = _params(dt, *_numpy(theirs))
    d_opt = getattr(optim, name)(ours, **kwargs)
    d_opt.load_state_dict(_convert(sd, dt.tensor))
    assert d_opt.state_dict()["param_groups"] == sd["param_groups"]
    _train(torch, t_opt, theirs, 10)
    _train(dt, d_opt, ours, 10)
    for a, b in zip(_numpy(ours), _numpy(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)
    # disttorch -> torch: the layout (keys, step as a 0-d tensor, dtypes) is PyTorch's
    ours_sd, theirs_sd = d_opt.state_dict(), t_opt.state_dict()
    assert ours_sd["state"].keys() == theirs_sd["state"].keys()
    for i, st in theirs_sd["state"].items():
        assert st.keys() == ours_sd["state"][i].keys()
        for k, v in st.items():
            if hasattr(v, "shape"):
                assert tuple(ours_sd["state"][i][k].shape) == tuple(v.shape), k
                if k == "step" or v.ndim:  # (loading casts other 0-d state to the param dtype in both)
                    assert str(ours_sd["state"][i][k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
    theirs2 = _params(torch, *_numpy(ours))
    t_opt2 = getattr(torch.optim, name)(theirs2, **kwargs)
    t_opt2.load_state_dict(_convert(ours_sd, lambda a: torch.tensor(a)))
    _train(torch, t_opt2, theirs2, 5)
    _train(dt, d_opt, ours, 5)
    for a, b in zip(_numpy(ours), _numpy(theirs2)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)
