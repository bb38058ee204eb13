"""amp.GradScaler: scaling, unscale_, skipped steps on inf/NaN, scale growth/backoff,
state_dict, the disabled CUDA scaler, errors; step by step against PyTorch's."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn


def _setup(lib, scaler_kwargs):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        model.bias.copy_(lib.tensor([0.01, -0.02]))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    return model, opt, lib.amp.GradScaler("cpu", **scaler_kwargs)


def _run(lib, steps, poison, **scaler_kwargs):
    """Train ``steps`` steps; the gradients of the steps in ``poison`` get an inf."""
    model, opt, scaler = _setup(lib, scaler_kwargs)
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    history = []
    for i in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        if i in poison:
            with lib.no_grad():
                model.weight.grad[0, 0] = float("inf")
        ret = scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), ret, model.weight.detach().clone().numpy().copy()))
    return history, scaler


def test_scale_unscale_and_step():
    model, opt, scaler = _setup(dt, {"init_scale": 8.0})
    x = dt.randn(4, 3)
    loss = model(x).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(8 * loss.item(), rel=1e-6)
    scaled.backward()
    raw = model.weight.grad.clone()
    scaler.unscale_(opt)
    np.testing.assert_allclose(model.weight.grad.numpy(), raw.numpy() / 8, rtol=1e-6)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    before = model.weight.detach().clone()
    scaler.step(opt)
    np.testing.assert_allclose(model.weight.detach().numpy(), (before - 0.1 * raw / 8).numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0 and scaler._get_growth_tracker() == 1


def test_inf_skips_step_and_backs_off_then_grows():
    hist, scaler = _run(dt, 5, poison={1}, init_scale=4.0, growth_interval=2)
    scales = [h[0] for h in hist]
    assert scales == [4.0, 2.0, 2.0, 4.0, 4.0]
    np.testing.assert_array_equal(hist[1][2], hist[0][2])  # the poisoned step was skipped
    assert not np.array_equal(hist[2][2], hist[1][2])
    sd = scaler.state_dict()
    assert sd == {
        "scale": 4.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2,
        "_growth_tracker": 1,
    }
    other = dt.amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.get_scale() == 4.0 and other._get_growth_tracker() == 1
    with pytest.raises(RuntimeError, match="empty"):
        other.load_state_dict({})


@pytest.mark.parity
def test_matches_pytorch_step_by_step():
    torch = pytest.importorskip("torch")
    kwargs = {"init_scale": 2.0**10, "growth_interval": 3, "backoff_factor": 0.25}
    ours, s1 = _run(dt, 9, {2, 3, 7}, **kwargs)
    ref, s2 = _run(torch, 9, {2, 3, 7}, **kwargs)
    for (sa, ra, wa), (sb, rb, wb) in zip(ours, ref):
        assert sa == sb and (ra is None) == (rb is None)
        np.testing.assert_allclose(wa, wb, rtol=1e-6, atol=1e-7)
    assert s1.state_dict() == s2.state_dict()


def test_nan_also_skips():
    model, opt, scaler = _setup(dt, {"init_scale": 2.0})
    scaler.scale(model(dt.ones(1, 3)).sum()).backward()
    model.bias.grad[0] = float("nan")
    before = model.weight.detach().clone()
    assert scaler.step(opt) is None
    scaler.update()
    assert scaler.get_scale() == 1.0
    np.testing.assert_array_equal(model.weight.detach().numpy(), before.numpy())


def test_errors():
    model, opt, scaler = _setup(dt, {})
    with pytest.raises(RuntimeError, match="scaler.scale"):
        scaler.unscale_(opt)
    scaler.scale(model(dt.ones(1, 3)).sum()).backward()
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: None)
    half = nn.Linear(3, 1).half()
    hopt = dt.optim.SGD(half.parameters(), lr=0.1)
    half(dt.ones(1, 3, dtype=dt.float16)).sum().backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.unscale_(hopt)
    with pytest.raises(ValueError, match="growth factor"):
        dt.amp.GradScaler("cpu", growth_factor=1.0)


def test_bfloat16_gradients_unscale():
    pytest.importorskip("ml_dtypes")
    model = nn.Linear(3, 2).bfloat16()
    opt = dt.optim.SGD(model.parameters(), lr=0.1)
    scaler = dt.amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale(model(dt.ones(2, 3, dtype=dt.bfloat16)).sum()).backward()
    raw = model.weight.grad.float().clone()
    scaler.unscale_(opt)
    assert model.weight.grad.dtype is dt.bfloat16
    np.testing.assert_allclose(model.weight.grad.float().numpy(), raw.numpy() / 4)


def test_cuda_scaler_disabled_with_pytorch_warning():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        scaler = dt.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"), pytest.warns(UserWarning):
        legacy = dt.cuda.amp.GradScaler()
    assert not legacy.is_enabled()
    model, opt, _ = _setup(dt, {})
    loss = model(dt.ones(1, 3)).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    before = model.weight.detach().clone()
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(model.weight.detach().numpy(), before.numpy())
    with pytest.warns(FutureWarning, match="torch.cpu.amp.GradScaler"):
        assert dt.cpu.amp.GradScaler().is_enabled()


def test_autocast_float16_training_with_scaler():
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = dt.optim.SGD(model.parameters(), lr=0.1)
    scaler = dt.amp.GradScaler("cpu", init_scale=2.0**8)
    x = dt.randn(32, 8)
    y = (x[:, 0] > 0).long()
    losses = []
    for _ in range(25):
        opt.zero_grad()
        with dt.autocast("cpu", dtype=dt.float16):
            loss = dt.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    assert all(p.dtype is dt.float32 for p in model.parameters())
