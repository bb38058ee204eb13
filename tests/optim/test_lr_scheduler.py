"""Learning-rate schedulers: values against closed forms and PyTorch, state round trips."""

import math

import numpy as np
import pytest

import disttorch as dt
from disttorch import optim
from disttorch.optim import lr_scheduler as S


def _opt(lr=0.1, cls=optim.SGD, **kw):
    return cls([dt.zeros(2, requires_grad=True)], lr=lr, **kw)


def _lrs(sched, n):
    out = []
    for _ in range(n):
        out.append(sched.get_last_lr()[0])
        sched.optimizer.step()
        sched.step()
    return out


def test_step_lr_and_multistep():
    assert _lrs(S.StepLR(_opt(), step_size=2, gamma=0.5), 5) == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025])
    assert _lrs(S.MultiStepLR(_opt(), [1, 3], gamma=0.1), 4) == pytest.approx([0.1, 0.01, 0.01, 0.001])


def test_cosine_and_linear_and_lambda():
    lrs = _lrs(S.CosineAnnealingLR(_opt(), T_max=4), 5)
    assert lrs == pytest.approx([0.1 * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(5)])
    assert _lrs(S.LinearLR(_opt(), start_factor=0.5, total_iters=2), 4) == pytest.approx(
        [0.05, 0.075, 0.1, 0.1]
    )
    assert _lrs(S.LambdaLR(_opt(), lambda e: 1 / (e + 1)), 3) == pytest.approx([0.1, 0.05, 0.1 / 3])


def test_reduce_on_plateau_after_patience():
    opt = _opt(1.0)
    s = S.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    for m in [1.0, 1.0, 1.0, 1.0]:
        s.step(m)
    assert s.get_last_lr() == [0.5]


def test_state_dict_resumes_schedule():
    s1 = S.StepLR(_opt(), step_size=2)
    _lrs(s1, 3)
    s2 = S.StepLR(_opt(), step_size=2)
    s2.optimizer.load_state_dict(s1.optimizer.state_dict())  # the lr lives in the optimiser, as in PyTorch
    s2.load_state_dict(s1.state_dict())
    assert _lrs(s1, 4) == _lrs(s2, 4)


def _both(torch, make_ours, make_theirs, n):
    p = torch.zeros(2, requires_grad=True)
    theirs = make_theirs(torch.optim.SGD([p], lr=0.1, momentum=0.9))
    ours = make_ours(_opt(0.1, momentum=0.9))
    a = _lrs(ours, n)
    b = []
    for _ in range(n):
        b.append(theirs.get_last_lr()[0])
        theirs.optimizer.step()
        theirs.step()
    return a, b


@pytest.mark.parity
@pytest.mark.parametrize(
    "name,kw",
    [
        ("ExponentialLR", dict(gamma=0.9)),
        ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
        ("LinearLR", dict(start_factor=0.25, total_iters=4)),
        ("OneCycleLR", dict(max_lr=1.0, total_steps=12)),
        ("OneCycleLR", dict(max_lr=1.0, total_steps=12, three_phase=True, anneal_strategy="linear")),
    ],
)
def test_matches_pytorch(name, kw):
    torch = pytest.importorskip("torch")
    n = 12 if name == "OneCycleLR" else 10
    a, b = _both(
        torch,
        lambda o: getattr(S, name)(o, **kw),
        lambda o: getattr(torch.optim.lr_scheduler, name)(o, **kw),
        n,
    )
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parity
def test_sequential_matches_pytorch():
    torch = pytest.importorskip("torch")

    def make(mod):
        return lambda o: mod.SequentialLR(
            o,
            [mod.LinearLR(o, start_factor=0.1, total_iters=3), mod.ExponentialLR(o, gamma=0.9)],
            milestones=[3],
        )

    a, b = _both(torch, make(S), make(torch.optim.lr_scheduler), 8)
    np.testing.assert_allclose(a, b, rtol=1e-9)
