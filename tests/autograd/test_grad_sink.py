"""autograd.grad_sink: a backward pass whose leaf gradients go to a sink instead of ``.grad``
(what distributed autograd does), with the leaves' hooks still running around it."""

from __future__ import annotations

import numpy as np

import disttorch as dt
from disttorch.autograd import grad_sink


class _DictSink:
    def __init__(self) -> None:
        self.grads: dict = {}

    def accumulate(self, leaf, grad) -> None:
        self.grads[leaf] = grad if leaf not in self.grads else self.grads[leaf] + grad

    def get(self, leaf):
        return self.grads.get(leaf)

    def set(self, leaf, grad) -> None:
        self.grads[leaf] = grad


def test_a_redirected_pass_leaves_grad_alone_and_runs_the_hooks():
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_hook(lambda g: g * 10)
    w.register_post_accumulate_grad_hook(lambda p: seen.append(grad_sink.grad_of(p).tolist()))
    sink = _DictSink()
    with grad_sink.redirect_to(sink):
        (w * w).sum().backward()
        grad_sink.set_grad(w, dt.zeros(2))
    assert w.grad is None
    assert seen == [[20.0, 40.0]]  # the post hook reads the sink's gradient, after the tensor hook
    np.testing.assert_array_equal(sink.grads[w].numpy(), [0.0, 0.0])
    assert grad_sink.current() is None
    (w * w).sum().backward()  # outside the block: .grad again
    np.testing.assert_array_equal(w.grad.numpy(), [20.0, 40.0])
