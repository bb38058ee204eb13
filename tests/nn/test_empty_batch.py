"""Layers and functions on an empty batch (N = 0: no boxes left after a filter, say) answer
as PyTorch: an empty result of the right shape, and a backward that gives zero gradients to
the weights (NumPy cannot infer a ``-1`` dim of an empty array, so these once raised)."""

import numpy as np
import pytest

import disttorch as dt


def _module(L, cls, *args, **kw):
    L.manual_seed(0)
    return getattr(L.nn, cls)(*args, **kw)


CASES = {
    "conv2d": lambda L: _module(L, "Conv2d", 3, 4, 3, padding=1)(L.zeros(0, 3, 5, 5, requires_grad=True)),
    "conv1d": lambda L: _module(L, "Conv1d", 3, 4, 3)(L.zeros(0, 3, 5, requires_grad=True)),
    "conv_transpose2d": lambda L: _module(L, "ConvTranspose2d", 3, 4, 2, stride=2)(L.zeros(0, 3, 5, 5)),
    "batch_norm_eval": lambda L: _module(L, "BatchNorm2d", 3).eval()(L.zeros(0, 3, 2, 2, requires_grad=True)),
    "batch_norm_train": lambda L: _module(L, "BatchNorm1d", 3)(L.zeros(0, 3, requires_grad=True)),
    "group_norm": lambda L: _module(L, "GroupNorm", 2, 4)(L.zeros(0, 4, 3, requires_grad=True)),
    "embedding": lambda L: _module(L, "Embedding", 5, 3)(L.zeros(0, 2, dtype=L.int64)),
    "grid_sample": lambda L: L.nn.functional.grid_sample(
        L.zeros(0, 2, 4, 4, requires_grad=True), L.zeros(0, 3, 3, 2), align_corners=False
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_empty_batch_forward_and_backward_match_pytorch(torch, name):
    outs = []
    for L in (dt, torch):
        out = CASES[name](L)
        out.sum().backward()  # an empty sum: zero gradients everywhere
        outs.append((tuple(out.shape), str(out.dtype).split(".")[-1]))
    assert outs[0] == outs[1]


def test_empty_batch_gives_zero_weight_gradients():
    conv = dt.nn.Conv2d(3, 4, 3)
    conv(dt.zeros(0, 3, 5, 5)).sum().backward()
    assert not conv.weight.grad.numpy().any() and conv.bias.grad.shape == (4,)
    assert np.array_equal(conv.bias.grad.numpy(), np.zeros(4))


def test_training_batch_norm_leaves_its_statistics_on_an_empty_batch():
    bn = dt.nn.BatchNorm1d(3)
    assert bn(dt.zeros(0, 3)).shape == (0, 3)
    assert bn.running_mean.tolist() == [0.0] * 3 and bn.running_var.tolist() == [1.0] * 3
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        bn(dt.zeros(1, 3))
