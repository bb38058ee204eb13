"""Every lr scheduler against PyTorch: the lr (and cycled momentum) sequence, a state dict
moved between the libraries mid-way, chained/sequential composition, step(epoch)."""

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch import optim
from disttorch.optim import lr_scheduler as S

CASES = {
    "LambdaLR": lambda L, o: L.LambdaLR(o, lambda e: 0.95**e),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda L, o: L.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=4),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.8),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=8, power=2.0),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=5, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=1e-3
    ),
    "CyclicLR": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5),
    "CyclicLR-triangular2": lambda L, o: L.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=2, mode="triangular2"),
    "CyclicLR-exp_range": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range", gamma=0.9),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=25),
    "OneCycleLR-3phase-linear": lambda L, o: L.OneCycleLR(
        o, max_lr=[0.5, 0.2], epochs=5, steps_per_epoch=5, three_phase=True, anneal_strategy="linear"
    ),
    "SequentialLR": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=4), L.ExponentialLR(o, 0.9)], milestones=[4]
    ),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.5, total_iters=3), L.ExponentialLR(o, 0.9)]
    ),
    "ChainedScheduler-cosine-step": lambda L, o: L.ChainedScheduler(
        [L.CosineAnnealingLR(o, T_max=4), L.StepLR(o, 2, 0.5)]
    ),
}


def _optimizer(lib, mod):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    return mod.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)


def _run(sched, steps):
    lrs = []
    for _ in range(steps):
        sched.optimizer.step()
        sched.step()
        lrs.append(list(sched.get_last_lr()) + [g["momentum"] for g in sched.optimizer.param_groups])
    return lrs


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CASES))
def test_lr_sequence_and_state_dict_round_trip_match_pytorch(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = CASES[name](S, _optimizer(dt, optim))
        theirs = CASES[name](torch.optim.lr_scheduler, _optimizer(torch, torch.optim))
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
        np.testing.assert_allclose(_run(ours, 12), _run(theirs, 12), rtol=1e-12)
        # move the state (scheduler's and optimiser's) each way and continue both
        t_sd, d_sd = theirs.state_dict(), ours.state_dict()
        ours2 = CASES[name](S, _optimizer(dt, optim))
        ours2.optimizer.load_state_dict(theirs.optimizer.state_dict())
        ours2.load_state_dict(t_sd)
        theirs2 = CASES[name](torch.optim.lr_scheduler, _optimizer(torch, torch.optim))
        theirs2.optimizer.load_state_dict(ours.optimizer.state_dict())
        theirs2.load_state_dict(d_sd)
        expected = _run(theirs, 10)
        np.testing.assert_allclose(_run(ours2, 10), expected, rtol=1e-12)
        np.testing.assert_allclose(_run(theirs2, 10), expected, rtol=1e-12)


@pytest.mark.parity
def test_state_dict_keys_equal_pytorchs(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in CASES.items():
            ours = make(S, _optimizer(dt, optim))
            theirs = make(torch.optim.lr_scheduler, _optimizer(torch, torch.optim))
            assert ours.state_dict().keys() == theirs.state_dict().keys(), name


@pytest.mark.parity
@pytest.mark.parametrize(
    "name",
    [
        "StepLR",
        "MultiStepLR",
        "ConstantLR",
        "LinearLR",
        "ExponentialLR",
        "PolynomialLR",
        "CosineAnnealingLR",
        "CosineAnnealingWarmRestarts",
    ],
)
def test_step_with_epoch_uses_the_closed_form_like_pytorch(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = CASES[name](S, _optimizer(dt, optim))
        theirs = CASES[name](torch.optim.lr_scheduler, _optimizer(torch, torch.optim))
        for epoch in [3, 7, 2, 11, 4.5 if name == "CosineAnnealingWarmRestarts" else 4]:
            ours.step(epoch)
            theirs.step(epoch)
            assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)


@pytest.mark.parity
def test_step_with_epoch_warns_in_pytorch_words(torch):
    messages = []
    for lib, opt in ((S, optim), (torch.optim.lr_scheduler, torch.optim)):
        sched = lib.StepLR(_optimizer(dt if lib is S else torch, opt), step_size=2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step(3)
        messages.append([str(w.message) for w in caught if "epoch parameter" in str(w.message)])
    assert messages[0] == messages[1] and len(messages[0]) == 1


@pytest.mark.parity
def test_reduce_lr_on_plateau_matches_pytorch(torch):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
    for kwargs in [
        {"patience": 1},
        {"mode": "max", "factor": 0.5, "patience": 0, "cooldown": 2, "min_lr": [0.01, 0.04]},
        {"threshold_mode": "abs", "threshold": 0.1, "patience": 1, "eps": 0.02},
    ]:
        ours = S.ReduceLROnPlateau(_optimizer(dt, optim), **kwargs)
        theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(torch, torch.optim), **kwargs)
        for i, m in enumerate(metrics):
            ours.step(m)
            theirs.step(m)
            assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr()), (kwargs, i)
            if i == 6:
                assert ours.state_dict() == theirs.state_dict()


def test_warns_when_stepped_before_the_optimizer_and_on_direct_get_lr():
    opt = _optimizer(dt, optim)
    sched = S.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_errors():
    opt = _optimizer(dt, optim)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), 2)
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(opt, 2, last_epoch=3)
    with pytest.raises(ValueError, match="T_0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        S.OneCycleLR(opt, 0.1)
    with pytest.raises(ValueError, match="same length as optimizer.param_groups"):
        S.CyclicLR(opt, 0.01, [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        S.SequentialLR(opt, [S.ConstantLR(opt)], milestones=[3])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        S.ChainedScheduler([S.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="momentum or beta1"):
        S.OneCycleLR(optim.Adagrad([dt.zeros(1, requires_grad=True)]), 0.1, total_steps=3)
    with pytest.raises(ValueError, match="Tried to step"):
        s = S.OneCycleLR(opt, 0.1, total_steps=2)
        for _ in range(3):
            opt.step()
            s.step()


def test_tensor_lr_stays_a_tensor():
    p = dt.zeros(1, requires_grad=True)
    opt = optim.Adam([p], lr=dt.tensor(0.1))
    sched = S.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    assert isinstance(opt.param_groups[0]["lr"], dt.Tensor)
    assert opt.param_groups[0]["lr"].item() == pytest.approx(0.05)
