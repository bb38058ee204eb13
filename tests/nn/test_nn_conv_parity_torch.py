"""Parity with PyTorch (skipped without it) for the convolution, pooling, normalisation and
attention layers: identical weights in both, then outputs, input and parameter gradients,
running statistics after several training steps, and eval mode."""
import numpy as np
import pytest

import disttorch
import disttorch.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def copy_weights(ours, theirs):
    ours.load_state_dict({k: disttorch.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})


def run_both(ours, theirs, x, steps=1):
    """Forward/backward ``steps`` times with the same input and a fixed output gradient;
    compare outputs, input gradients and parameter gradients."""
    rng = np.random.default_rng(0)
    for _ in range(steps):
        xa = disttorch.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        ya, yt = ours(xa), theirs(xt)
        ya, yt = (ya[0], yt[0]) if isinstance(ya, tuple) else (ya, yt)
        np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
        g = rng.standard_normal(yt.shape).astype(x.dtype)
        ya.backward(disttorch.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(),
                                   rtol=1e-4, atol=1e-4, err_msg=name)


def randn(*shape):
    return np.random.default_rng(1).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(padding="same", dilation=2),
                                dict(groups=2, bias=False, padding=(1, 0))])
def test_conv2d_parity(kw):
    theirs = torch.nn.Conv2d(4, 6, 3, **kw)
    ours = disttorch.nn.Conv2d(4, 6, 3, **kw)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 4, 9, 8))


@pytest.mark.parametrize("kw", [dict(padding=1), dict(padding="same", dilation=(2, 1)),
                                dict(groups=2, padding=(0, 2)), dict(stride=2, padding=1)])
def test_wide_conv2d_parity(kw):
    """16 and more input channels per group: stride-1 layers take the shifted products."""
    theirs = torch.nn.Conv2d(32, 24, 3, **kw)
    ours = disttorch.nn.Conv2d(32, 24, 3, **kw)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(3, 32, 10, 9))
    theirs = torch.nn.ConvTranspose2d(32, 16, 3, padding=1)
    ours = disttorch.nn.ConvTranspose2d(32, 16, 3, padding=1)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 32, 6, 7))


def test_conv1d_and_conv3d_parity():
    theirs, ours = torch.nn.Conv1d(3, 5, 3, stride=2, padding=1), disttorch.nn.Conv1d(3, 5, 3, stride=2, padding=1)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 3, 11))
    theirs, ours = torch.nn.Conv3d(2, 3, 2, padding=1), disttorch.nn.Conv3d(2, 3, 2, padding=1)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 2, 3, 4, 3))


@pytest.mark.skipif(not hasattr(F, "pad"), reason="nn.functional.pad not available yet")
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_modes_parity(mode):
    theirs = torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode)
    ours = disttorch.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 2, 5, 6))


def test_conv_default_init_matches_pytorch_distribution():
    conv = disttorch.nn.Conv2d(16, 32, 3)
    bound = 1 / np.sqrt(16 * 9)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), ..)
    w = conv.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound


@pytest.mark.parametrize("make", [
    lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
    lambda nn: nn.MaxPool2d((2, 3), stride=1, dilation=(2, 1)),
    lambda nn: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    lambda nn: nn.AvgPool2d(2),
    lambda nn: nn.AdaptiveAvgPool2d((3, 2)),
    lambda nn: nn.AdaptiveMaxPool2d((3, 2)),
])
def test_pool2d_parity(make):
    run_both(make(disttorch.nn), make(torch.nn), randn(2, 3, 7, 6))


@pytest.mark.parametrize("make", [lambda nn: nn.MaxPool1d(3, 2, 1), lambda nn: nn.AvgPool1d(3, 2, 1),
                                  lambda nn: nn.AdaptiveAvgPool1d(4)])
def test_pool1d_parity(make):
    run_both(make(disttorch.nn), make(torch.nn), randn(2, 3, 9))


@pytest.mark.parametrize("cls,shape,kw", [
    ("BatchNorm1d", (8, 3), dict()), ("BatchNorm1d", (4, 3, 5), dict(momentum=None)),
    ("BatchNorm2d", (4, 3, 5, 5), dict(momentum=0.3)), ("BatchNorm2d", (4, 3, 2, 2), dict(affine=False)),
])
def test_batchnorm_parity_running_stats_and_eval(cls, shape, kw):
    theirs, ours = getattr(torch.nn, cls)(3, **kw), getattr(disttorch.nn, cls)(3, **kw)
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(0.5, 1.5)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(*shape) * 3 + 1, steps=4)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    ours.eval(), theirs.eval()
    x = randn(*shape)
    np.testing.assert_allclose(ours(disttorch.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.LayerNorm(6), (4, 5, 6)), (lambda nn: nn.LayerNorm((5, 6), bias=False), (4, 5, 6)),
    (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5, 2)),
])
def test_layer_and_group_norm_parity(make, shape):
    theirs, ours = make(torch.nn), make(disttorch.nn)
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(0.5, 1.5)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(*shape) * 2 + 1)


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True), dict(kdim=4, vdim=6),
                                dict(add_bias_kv=True, add_zero_attn=True)])
def test_multihead_attention_parity_with_masks(kw):
    theirs = torch.nn.MultiheadAttention(8, 2, **kw)
    ours = disttorch.nn.MultiheadAttention(8, 2, **kw)
    copy_weights(ours, theirs)
    rng = np.random.default_rng(2)
    L, S, N = 3, 5, 2
    first = (N, L) if kw.get("batch_first") else (L, N)
    kv_first = (N, S) if kw.get("batch_first") else (S, N)
    q = rng.standard_normal((*first, 8)).astype(np.float32)
    k = rng.standard_normal((*kv_first, kw.get("kdim", 8))).astype(np.float32)
    v = rng.standard_normal((*kv_first, kw.get("vdim", 8))).astype(np.float32)
    am = rng.random((L, S)) > 0.7
    am[:, 0] = False
    kpm = rng.random((N, S)) > 0.7
    kpm[:, 0] = False
    qa, qt = disttorch.tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
    oa, wa = ours(qa, disttorch.tensor(k), disttorch.tensor(v), attn_mask=disttorch.tensor(am),
                  key_padding_mask=disttorch.tensor(kpm))
    ot, wt = theirs(qt, torch.tensor(k), torch.tensor(v), attn_mask=torch.tensor(am),
                    key_padding_mask=torch.tensor(kpm))
    np.testing.assert_allclose(oa.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wa.detach().numpy(), wt.detach().numpy(), rtol=1e-4, atol=1e-5)
    oa.sum().backward()
    ot.sum().backward()
    np.testing.assert_allclose(qa.grad.numpy(), qt.grad.numpy(), rtol=1e-4, atol=1e-5)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(),
                                   rtol=1e-4, atol=1e-4, err_msg=name)


def test_sdpa_parity_causal():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 4, 6, 8)).astype(np.float32) for _ in range(3))
    ours = F.scaled_dot_product_attention(*(disttorch.tensor(a) for a in (q, k, v)), is_causal=True)
    theirs = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)),
                                                              is_causal=True)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_sdpa_parity_grouped_query_attention_and_bool_mask():
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 4, 5, 8)).astype(np.float32)
    k, v = (rng.standard_normal((2, 2, 6, 8)).astype(np.float32) for _ in range(2))
    mask = rng.random((5, 6)) > 0.3
    mask[:, 0] = True
    ours = F.scaled_dot_product_attention(*(disttorch.tensor(a) for a in (q, k, v)),
                                          attn_mask=disttorch.tensor(mask), enable_gqa=True)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), attn_mask=torch.tensor(mask), enable_gqa=True)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(stride=(2, 1), groups=2, dilation=(1, 2), bias=False)])
def test_conv_transpose2d_parity(kw):
    theirs = torch.nn.ConvTranspose2d(4, 6, 3, **kw)
    ours = disttorch.nn.ConvTranspose2d(4, 6, 3, **kw)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 4, 5, 6))


def test_conv_transpose1d_parity():
    theirs, ours = torch.nn.ConvTranspose1d(3, 2, 4, stride=3), disttorch.nn.ConvTranspose1d(3, 2, 4, stride=3)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 3, 7))
