"""``nn.modules.module.register_module_full_backward_hook`` and ``..._pre_hook``: backward
hooks of every module, run before each module's own, removable."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt


def _run(torch) -> list:
    module = importlib.import_module(f"{torch.__name__}.nn.modules.module")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    log = []

    def pre(m, grad_output):
        log.append(("pre", type(m).__name__, [tuple(g.shape) for g in grad_output]))

    def full(m, grad_input, grad_output):
        log.append(("full", type(m).__name__, [None if g is None else tuple(g.shape) for g in grad_input]))

    def own_pre(m, grad_output):
        log.append(("own pre", type(m).__name__))
        return (grad_output[0] * 2,)

    net[2].register_full_backward_pre_hook(own_pre)
    handles = [
        module.register_module_full_backward_pre_hook(pre),
        module.register_module_full_backward_hook(full),
    ]
    x = torch.ones(5, 3, requires_grad=True)
    try:
        net(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    first, grad = list(log), x.grad.clone()
    log.clear()
    net(x).sum().backward()  # removed: only the module's own hook runs
    return [first, log, grad.reshape(-1).tolist(), (x.grad - 2 * grad).abs().max().item()]


def test_global_backward_hooks_run_for_every_module():
    first, second, _, rest = _run(dt)
    assert [entry[:2] for entry in first] == [
        ("pre", "Sequential"),
        ("pre", "Linear"),
        ("own pre", "Linear"),
        ("full", "Linear"),
        ("pre", "ReLU"),
        ("full", "ReLU"),
        ("pre", "Linear"),
        ("full", "Linear"),
        ("full", "Sequential"),
    ]
    assert second == [("own pre", "Linear")] and rest == 0.0


@pytest.mark.parity
def test_global_backward_hooks_as_pytorch(torch):
    ours, theirs = _run(dt), _run(torch)
    assert ours[:2] == theirs[:2] and ours[2] == pytest.approx(theirs[2])
