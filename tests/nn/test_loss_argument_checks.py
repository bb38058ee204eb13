"""Losses' argument checks as PyTorch's (found by differential fuzzing): the old
``'elementwise_mean'`` spelling, ``label_smoothing`` out of range, class weights of the wrong
size or dtype, ``binary_cross_entropy``'s target dtype and range, integer ``kl_div`` inputs,
shapes that do not broadcast, and the promoted result of probability targets."""

import warnings

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck


def _x():
    return dt.tensor(np.linspace(-1.2, 1.7, 12).reshape(4, 3), dtype=dt.float32)


def test_elementwise_mean_is_mean_with_a_warning():
    x, y = _x(), _x().flip(0)
    with pytest.warns(UserWarning, match="elementwise_mean' is deprecated"):
        assert F.mse_loss(x, y, reduction="elementwise_mean").item() == F.mse_loss(x, y).item()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert F.cross_entropy(x, dt.tensor([0, 2, 1, 2]), reduction="elementwise_mean").shape == ()
    with pytest.raises(ValueError, match="elementwise_mean is not a valid value"):
        F.poisson_nll_loss(x, x.abs(), reduction="elementwise_mean")  # (written in Python in PyTorch)


def test_label_smoothing_range_as_pytorch():
    x, t = _x(), dt.tensor([0, 2, 1, 2])
    assert F.cross_entropy(x, t, label_smoothing=-0.1).item() == F.cross_entropy(x, t).item()
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(x, t, label_smoothing=1.5)


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss])
def test_class_weight_size_and_dtype(loss):
    x, t = _x(), dt.tensor([0, 2, 1, 2])
    for w in (dt.ones(2), dt.ones(1, 3)):
        with pytest.raises(RuntimeError, match="should be defined either for all 3 classes or no classes"):
            loss(x, t, weight=w)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Long"):
        loss(x, t, weight=dt.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target batch_size \(2\)"):
        loss(x, dt.tensor([0, 1]), weight=dt.ones(2))  # the batch sizes are checked first
    with pytest.raises(RuntimeError, match="^cross_entropy: weight tensor should be defined"):
        F.cross_entropy(x, x.softmax(1), weight=dt.ones(2))


def test_probability_targets_promote(torch):
    x = _x().requires_grad_()
    target = _x().flip(0).softmax(1).double()
    loss = F.cross_entropy(x, target)
    assert loss.dtype == dt.float64
    loss.backward()
    assert x.grad.dtype == dt.float32
    want = torch.nn.functional.cross_entropy(torch.tensor(x.detach().numpy()), torch.tensor(target.numpy()))
    assert loss.item() == pytest.approx(want.item(), rel=1e-6)
    x64 = _x().double().requires_grad_()
    assert gradcheck(lambda a: F.cross_entropy(a, target, label_smoothing=0.2), (x64,))


def test_binary_cross_entropy_checks():
    p = _x().sigmoid()
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        F.binary_cross_entropy(p, p.double())
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(p, p * 2)
    with pytest.raises(RuntimeError, match="Attempting to broadcast a dimension of length 2"):
        F.binary_cross_entropy(p, p, weight=dt.ones(2))
    with pytest.raises(RuntimeError, match="must match the size of tensor"):
        F.binary_cross_entropy_with_logits(_x(), p, pos_weight=dt.ones(2))


def test_kl_div_and_multi_margin_checks():
    x = _x().log_softmax(1)
    with pytest.raises(RuntimeError, match="kl_div: Integral inputs not supported."):
        F.kl_div(x, dt.ones(4, 3, dtype=dt.int64), reduction="batchmean")
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match the size of tensor b \(3\)"):
        F.kl_div(x, dt.ones(4, 2), reduction="batchmean")  # (a: the target, as PyTorch's log(target) - input)
    with pytest.raises(RuntimeError, match=r"inconsistent weight size, expected 3 but got \[2\]"):
        F.multi_margin_loss(_x(), dt.tensor([0, 2, 1, 2]), weight=dt.ones(2))


def test_bce_with_logits_follows_the_targets_dtype():
    x = _x()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        F.binary_cross_entropy_with_logits(x, dt.ones(4, 3, dtype=dt.int64))
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
        F.binary_cross_entropy_with_logits(x, dt.ones(4, 3, dtype=dt.bool))
    assert F.binary_cross_entropy_with_logits(x, dt.ones(4, 3, dtype=dt.float64)).dtype == dt.float64
    x = _x().requires_grad_()
    F.binary_cross_entropy_with_logits(x, dt.full((4, 3), 0.3, dtype=dt.float64)).backward()
    assert x.grad.dtype == dt.float32  # through the cast to the target's dtype
    want = (1 / (1 + np.exp(-_x().double().numpy())) - 0.3) / 12
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize(
    "target, error, message",
    [
        (
            dt.tensor(0),
            RuntimeError,
            "Expected floating point type for target with class probabilities, got Long",
        ),
        (dt.tensor(0.5), IndexError, "Dimension specified as 1 but tensor has no dimensions"),
        (
            dt.tensor([0]),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)",
        ),
    ],
)
def test_cross_entropy_of_a_0d_input_is_pytorchs_error(target, error, message):
    with pytest.raises(error, match=message):
        F.cross_entropy(dt.tensor(1.0), target)
