"""``nn.utils._per_sample_grad.call_for_per_sample_grads`` (PyTorch's expanded weights, Opacus's
``grad_sample_mode="ew"``): per-sample gradients in ``grad_sample``, the parameters' ``.grad``
untouched, the batch read from the inputs, PyTorch's errors, and parity with PyTorch."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.nn.utils._per_sample_grad import call_for_per_sample_grads


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Conv1d(2, 3, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(12, 2), lib.nn.LayerNorm(2)
    )


def test_grad_sample_is_each_samples_gradient():
    model = _model(dt)
    model[4].bias.requires_grad_(False)
    x = dt.randn(4, 2, 6, dtype=dt.float32)
    target = dt.tensor([0, 1, 1, 0])
    out = call_for_per_sample_grads(model, loss_reduction="mean")(x)
    np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(), rtol=1e-6, atol=1e-6)
    nn.functional.cross_entropy(out, target).backward()
    for name, p in model.named_parameters():
        assert p.grad is None, name
        if not p.requires_grad:
            assert getattr(p, "grad_sample", None) is None
            continue
        assert p.grad_sample.shape == (4, *p.shape)
        for i in range(4):  # 'mean': scaled by the batch size, so each row is a sample's own loss gradient
            (g,) = dt.autograd.grad(nn.functional.cross_entropy(model(x[i : i + 1]), target[i : i + 1]), [p])
            np.testing.assert_allclose(
                p.grad_sample[i].numpy(), g.numpy(), rtol=1e-5, atol=1e-6, err_msg=name
            )


def test_accumulates_reads_the_batch_and_raises_as_pytorch():
    emb = nn.Embedding(10, 3)
    ids = dt.tensor([[1, 2], [3, 3], [1, 1]])
    forward = call_for_per_sample_grads(emb)
    forward(ids).sum().backward()
    forward(ids).sum().backward()  # a second backward adds to grad_sample
    assert emb.weight.grad_sample.shape == (3, 10, 3) and emb.weight.grad_sample[1, 3].tolist() == [4.0] * 3
    with pytest.raises(RuntimeError, match="Please clear out the grad_sample"):
        call_for_per_sample_grads(emb)
    emb.weight.grad_sample = None
    rnn_like = nn.Linear(3, 1)
    call_for_per_sample_grads(rnn_like, batch_first=False)(dt.ones(5, 2, 3)).sum().backward()
    assert rnn_like.weight.grad_sample.shape == (2, 1, 3)
    with pytest.raises(
        RuntimeError, match="found at least one input with batch size 2 and one with batch size 3"
    ):
        call_for_per_sample_grads(emb)(dt.zeros(2, 1, dtype=dt.int64), dt.zeros(3))
    with pytest.raises(RuntimeError, match="Expected loss_reduction argument to be sum or mean, got max"):
        call_for_per_sample_grads(emb, loss_reduction="max")
    with pytest.raises(RuntimeError, match="Batch size must be positive"):
        call_for_per_sample_grads(emb, batch_size=0)


@pytest.mark.parity
def test_matches_pytorchs_expanded_weights(torch):
    from torch.nn.utils._per_sample_grad import call_for_per_sample_grads as theirs

    # float64: a layer norm over two features amplifies float32 rounding (either library's
    # float32 answer is 1e-4 from the float64 one, and PyTorch's own rounding varies by CPU)
    x = np.random.default_rng(1).normal(size=(5, 2, 6))
    models = {}
    for lib, call in ((dt, call_for_per_sample_grads), (torch, theirs)):
        model = models[lib] = _model(lib).double()
        out = call(model, loss_reduction="mean")(lib.tensor(x))
        lib.nn.functional.cross_entropy(out, lib.tensor([0, 1, 1, 0, 1])).backward()
    for (name, ours), (_, their) in zip(models[dt].named_parameters(), models[torch].named_parameters()):
        np.testing.assert_allclose(
            ours.grad_sample.numpy(), their.grad_sample.numpy(), rtol=1e-10, atol=1e-12, err_msg=name
        )
