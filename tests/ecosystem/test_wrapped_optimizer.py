"""An ``Optimizer`` subclass that wraps another without running ``Optimizer.__init__``
(accelerate's ``AcceleratedOptimizer``) steps without hooks of its own, as in PyTorch."""

from __future__ import annotations

import disttorch as dt


class Wrapper(dt.optim.Optimizer):
    def __init__(self, optimizer):
        self.optimizer = optimizer

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def step(self, closure=None):
        self.optimizer.step(closure)


def test_wrapper_steps_and_the_inner_optimizer_runs_its_hooks():
    p = dt.nn.Parameter(dt.ones(2))
    inner = dt.optim.SGD([p], lr=0.5)
    seen = []
    inner.register_step_post_hook(lambda opt, args, kwargs: seen.append(type(opt).__name__))
    p.grad = dt.ones(2)
    Wrapper(inner).step()
    assert p.tolist() == [0.5, 0.5] and seen == ["SGD"]
