"""swa_utils against PyTorch: AveragedModel (SWA, EMA, custom avg_fn/multi_avg_fn,
use_buffers), SWALR's lr sequence and state dict, update_bn."""

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn, optim
from disttorch.optim import swa_utils

RNG = np.random.default_rng(5)
SNAPSHOTS = [RNG.standard_normal((3, 4)) for _ in range(5)]
BIASES = [RNG.standard_normal(3) for _ in range(5)]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _averaged(lib, nnmod, swa, **kwargs):
    model = nnmod.Sequential(nnmod.Linear(4, 3), nnmod.BatchNorm1d(3)).double()
    avg = swa.AveragedModel(model, **kwargs)
    for w, b in zip(SNAPSHOTS, BIASES):
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(w))
            model[0].bias.copy_(lib.tensor(b))
            model[1].running_mean.copy_(lib.tensor(b))
        avg.update_parameters(model)
    return avg


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["swa", "ema", "ema_multi", "swa_multi", "custom", "buffers"])
def test_averaged_model_matches_pytorch(torch, kind):
    def kwargs(swa):
        return {
            "swa": {},
            "ema": {"avg_fn": swa.get_ema_avg_fn(0.9)},
            "ema_multi": {"multi_avg_fn": swa.get_ema_multi_avg_fn(0.8)},
            "swa_multi": {"multi_avg_fn": swa.get_swa_multi_avg_fn()},
            "custom": {"avg_fn": lambda a, p, n: 0.5 * a + 0.5 * p},
            "buffers": {"use_buffers": True, "multi_avg_fn": swa.get_ema_multi_avg_fn(0.5)},
        }[kind]

    ours = _averaged(dt, nn, swa_utils, **kwargs(swa_utils))
    theirs = _averaged(torch, torch.nn, torch.optim.swa_utils, **kwargs(torch.optim.swa_utils))
    assert int(ours.n_averaged.item()) == int(theirs.n_averaged.item()) == 5
    for (k1, a), (k2, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert k1 == k2
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=k1)
    if kind == "swa":
        np.testing.assert_allclose(ours.module[0].weight.detach().numpy(), np.mean(SNAPSHOTS, axis=0))


def test_averaged_model_forward_and_errors():
    model = nn.Linear(2, 1)
    avg = swa_utils.AveragedModel(model)
    x = dt.ones(3, 2)
    np.testing.assert_allclose(avg(x).detach().numpy(), model(x).detach().numpy())
    assert avg.module is not model and avg.n_averaged.dtype == dt.int64
    with pytest.raises(AssertionError, match="Only one of"):
        swa_utils.AveragedModel(
            model, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn()
        )
    with pytest.raises(ValueError, match="Invalid decay"):
        swa_utils.get_ema_avg_fn(1.5)


@pytest.mark.parity
@pytest.mark.parametrize(
    "kwargs",
    [
        {"swa_lr": 0.01},
        {"swa_lr": [0.01, 0.02], "anneal_epochs": 3, "anneal_strategy": "linear"},
        {"swa_lr": 0.05, "anneal_epochs": 0},
    ],
)
def test_swalr_matches_pytorch(torch, kwargs):
    def run(lib, mod, sd=None, steps=14):
        opt = mod.SGD(
            [
                {"params": [lib.zeros(1, requires_grad=True)]},
                {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.3},
            ],
            lr=0.5,
        )
        sched = mod.swa_utils.SWALR(opt, **kwargs)
        out = []
        for i in range(steps):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
            if i == 5:
                sd = sched.state_dict() if sd is None else sd
        return out, sd, sched

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, d_sd, _ = run(dt, optim)
        theirs, t_sd, _ = run(torch, torch.optim)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
        assert d_sd.keys() == t_sd.keys()


@pytest.mark.parity
def test_update_bn_matches_pytorch(torch):
    data = [RNG.standard_normal((6, 3)) * 2 + 1 for _ in range(4)]
    out = []
    for lib, nnmod, swa in ((dt, nn, swa_utils), (torch, torch.nn, torch.optim.swa_utils)):
        model = nnmod.Sequential(nnmod.Linear(3, 3), nnmod.BatchNorm1d(3, momentum=0.3)).double()
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(np.eye(3)))
            model[0].bias.zero_()
        model.eval()
        swa.update_bn([(lib.tensor(x), 0) for x in data], model)
        assert not model.training and model[1].momentum == 0.3
        out.append((model[1].running_mean.numpy().copy(), model[1].running_var.numpy().copy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-10)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-10)
    np.testing.assert_allclose(out[0][0], np.concatenate(data).mean(0), rtol=1e-10)
