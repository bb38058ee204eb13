"""nn.functional (activations, linear, dropout, embedding, one_hot, pad, normalize):
closed-form values, float64 gradient checks and PyTorch's error messages."""

import math

import numpy as np
import pytest
from parity_helpers import both, check

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck, gradgradcheck
from disttorch.kernels.vec_exp import compiled_exp
from disttorch.nn import functional as F


def f64(*shape, seed=0, requires_grad=True):
    dt.manual_seed(seed)
    return dt.randn(*shape, dtype=dt.float64, requires_grad=requires_grad)


def values(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------- activations
X = np.array([-3.0, -0.5, 0.0, 0.7, 2.0])


@pytest.mark.parametrize(
    "fn, expected",
    [
        (F.relu, np.maximum(X, 0)),
        (lambda x: F.leaky_relu(x, 0.1), np.where(X > 0, X, 0.1 * X)),
        (lambda x: F.elu(x, 2.0), np.where(X > 0, X, 2.0 * (np.exp(X) - 1))),
        (F.selu, 1.0507009873554805 * np.where(X > 0, X, 1.6732632423543772 * (np.exp(X) - 1))),
        (F.gelu, np.array([x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in X])),
        (
            lambda x: F.gelu(x, approximate="tanh"),
            0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X**3))),
        ),
        (F.silu, X / (1 + np.exp(-X))),
        (F.tanh, np.tanh(X)),
        (F.sigmoid, 1 / (1 + np.exp(-X))),
        (F.softplus, np.log1p(np.exp(X))),
        (
            lambda x: F.softplus(x, beta=2.0, threshold=1.0),
            np.where(2 * X > 1, X, np.log1p(np.exp(2 * X)) / 2),
        ),
    ],
)
def test_activation_values(fn, expected):
    out = fn(dt.tensor(X))
    np.testing.assert_allclose(values(out), expected, rtol=1e-12, atol=1e-12)


def test_activations_keep_float32():
    x = dt.tensor(X.astype(np.float32))
    for fn in (F.relu, F.leaky_relu, F.elu, F.gelu, F.silu, F.softplus, F.selu):
        assert fn(x).dtype == dt.float32
    np.testing.assert_allclose(
        values(F.gelu(x)), [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in X], atol=1e-6
    )


def test_gelu_float32_value_and_gradient_across_blocks():
    """The float32 kernel runs in blocks of 65536 entries: a tensor of several blocks and a
    partial one gets GELU and its derivative to float32 accuracy, with or without grad."""
    xs = np.concatenate([np.linspace(-12, 12, 150001), [0.0, -0.0, 1e-30, -1e-30]])
    phi = 0.5 * (1 + np.vectorize(math.erf)(xs / math.sqrt(2)))
    expected = xs * phi
    slope = phi + xs * np.exp(-xs * xs / 2) / math.sqrt(2 * math.pi)
    x = dt.tensor(xs.astype(np.float32), requires_grad=True)
    out = F.gelu(x)
    out.backward(dt.ones_like(out))
    np.testing.assert_allclose(values(out), expected, atol=6e-7, rtol=2e-7)
    np.testing.assert_allclose(x.grad.numpy(), slope, atol=4e-7, rtol=2e-7)
    with dt.no_grad():
        assert np.array_equal(values(F.gelu(x)), values(out))


@pytest.mark.parametrize(
    ("name", "alpha", "scale", "kwargs"),
    [
        ("elu", 1.0, 1.0, {}),
        ("selu", 1.6732632423543772, 1.0507009873554805, {}),
        ("celu", 1.3, 1.0, {"alpha": 1.3}),
    ],
)
def test_elu_family_values_and_gradient_far_below_zero_are_pytorchs(name, alpha, scale, kwargs):
    """It was ``g * (expm1(x) + alpha)``: zero or digits off below -15 (CELU's, composed of
    ELU, some 20 units off); PyTorch's is ``g * input_scale * alpha * scale * exp(x *
    input_scale)``, with SLEEF's ``exp`` on float32 (within 2 units here); the forward's
    ``expm1`` is SLEEF's too (NumPy's was up to 3 units off)."""
    xs = np.concatenate([np.linspace(-20.0, 2.0, 1021), [0.0, -0.0, -1e-30]]).astype(np.float32)
    x = dt.tensor(xs, requires_grad=True)
    out = getattr(F, name)(x, **kwargs)
    out.sum().backward()
    wide = xs.astype(np.float64) / (alpha if name == "celu" else 1.0)
    exact = np.where(xs > 0, scale, (1.0 if name != "celu" else 1 / alpha) * alpha * scale * np.exp(wide))
    np.testing.assert_allclose(x.grad.numpy(), exact, rtol=2e-6, atol=0)
    torch = pytest.importorskip("torch")
    t = torch.tensor(xs, requires_grad=True)
    ref = getattr(torch.nn.functional, name)(t, **kwargs)
    ref.sum().backward()
    np.testing.assert_array_max_ulp(x.grad.numpy(), t.grad.numpy(), maxulp=2)
    # forward: SLEEF's expm1 on whole 32-element blocks (1024 here), as PyTorch's kernel
    np.testing.assert_array_max_ulp(
        out.detach().numpy(), ref.detach().numpy(), maxulp=0 if compiled_exp() else 3
    )


@pytest.mark.parametrize(
    "fn",
    [
        F.relu,
        lambda x: F.leaky_relu(x, 0.2),
        F.elu,
        F.selu,
        F.gelu,
        lambda x: F.gelu(x, approximate="tanh"),
        F.silu,
        F.tanh,
        F.sigmoid,
        F.softplus,
        lambda x: F.softplus(x, beta=3.0, threshold=2.0),
        lambda x: F.softmax(x, 1),
        lambda x: F.log_softmax(x, 0),
        lambda x: F.softmin(x, -1),
        lambda x: F.softmax(x, 1, dtype=dt.float64),
        lambda x: F.hardtanh(x, -0.5, 0.7),
        F.relu6,
        F.logsigmoid,
        F.mish,
        F.hardsigmoid,
        F.hardswish,
        lambda x: F.glu(x, 1),
    ],
)
def test_activation_gradcheck(fn):
    assert gradcheck(fn, (f64(3, 4),))


def test_logsigmoid_writes_a_contiguous_result_whatever_the_input_layout():
    """PyTorch's kernel writes a contiguous result (a channels-last or transposed input
    included); the gradient keeps the input's layout."""
    x = dt.randn(2, 3, 4, 5).to(memory_format=dt.channels_last).requires_grad_()
    y = F.logsigmoid(x)
    assert y.stride() == (60, 20, 5, 1) and y.grad_fn.name() == "LogSigmoidBackward0"
    y.sum().backward()
    assert x.grad.stride() == (60, 1, 15, 3)
    assert F.logsigmoid(dt.randn(4, 5).t()).stride() == (4, 1)


def test_composite_activation_values_and_errors():
    x = dt.tensor(X)
    np.testing.assert_allclose(F.relu6(x * 3).numpy(), np.clip(X * 3, 0, 6))
    np.testing.assert_allclose(F.logsigmoid(x).numpy(), -np.log1p(np.exp(-X)))
    np.testing.assert_allclose(F.mish(x).numpy(), X * np.tanh(np.log1p(np.exp(X))))
    np.testing.assert_allclose(F.hardswish(x).numpy(), X * np.clip(X + 3, 0, 6) / 6)
    np.testing.assert_allclose(
        F.glu(dt.tensor([[1.0, 2.0, 0.0, 3.0]])).numpy(), [[0.5, 2 / (1 + np.exp(-3.0))]]
    )
    np.testing.assert_allclose(
        F.prelu(x, dt.tensor([0.5], dtype=dt.float64)).numpy(), np.where(X > 0, X, 0.5 * X)
    )
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(dt.ones(2, 3))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(dt.ones(2, 3), dt.ones(4))


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(dt.ones(2), approximate="fast")


def test_softmax_is_stable_for_large_inputs():
    x = dt.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]])
    out = values(F.softmax(x, dim=1))
    e = np.exp([0.0, 1.0, 2.0])
    np.testing.assert_allclose(out[0], e / e.sum(), rtol=1e-6)
    np.testing.assert_allclose(out[1], [1 / 3] * 3, rtol=1e-6)
    ls = values(F.log_softmax(x, dim=1))
    np.testing.assert_allclose(ls[0], np.log(e / e.sum()), rtol=1e-5)
    assert np.isfinite(ls).all()


def test_softmax_sums_to_one_and_dim_errors():
    x = f64(2, 3, 4, requires_grad=False)
    for d in range(3):
        np.testing.assert_allclose(values(F.softmax(x, d)).sum(axis=d), 1.0)
    with pytest.raises(
        IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"
    ):
        F.softmax(x, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice") as caught:
        out = F.softmax(dt.ones(2, 4))
    np.testing.assert_allclose(values(out), 0.25)
    assert caught[0].filename == __file__  # the caller's line, as PyTorch's warning names it

    class Passing(dt.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Passing(), pytest.warns(UserWarning, match="Implicit dimension choice") as caught:
        F.log_softmax(dt.ones(2, 4))  # dispatch wrappers in between are not the caller
    assert caught[0].filename == __file__


def test_log_softmax_backward_is_softmax_minus_upstream():
    x = f64(2, 5)
    F.log_softmax(x, 1)[:, 0].sum().backward()
    p = np.exp(values(x)) / np.exp(values(x)).sum(1, keepdims=True)
    expected = -p
    expected[:, 0] += 1
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


# ---------------------------------------------------------------------- linear, bilinear
def test_linear_matches_numpy_and_gradcheck():
    x, w, b = f64(4, 3, seed=1), f64(5, 3, seed=2), f64(5, seed=3)
    np.testing.assert_allclose(values(F.linear(x, w, b)), values(x) @ values(w).T + values(b))
    assert gradcheck(F.linear, (x, w, b))
    assert gradcheck(F.linear, (f64(2, 3, 3, seed=4), w, None))
    assert gradcheck(F.linear, (f64(3, seed=5), w, b))


def test_linear_backward_array_path_equals_recorded_path():
    """Backward runs on the arrays unless it is itself recorded (create_graph): both paths
    give the same gradients, and the recorded one differentiates again."""
    x, w, b = f64(2, 4, 3, seed=1), f64(5, 3, seed=2), f64(5, seed=3)
    g = f64(2, 4, 5, seed=4, requires_grad=False)
    plain = dt.autograd.grad(F.linear(x, w, b), (x, w, b), g)
    recorded = dt.autograd.grad(F.linear(x, w, b), (x, w, b), g, create_graph=True)
    assert recorded[0].requires_grad and recorded[1].requires_grad  # dx needs w, dW needs x
    for p, r in zip(plain, recorded):
        np.testing.assert_allclose(values(p), values(r), rtol=1e-12)
    np.testing.assert_allclose(values(plain[2]), values(g).sum((0, 1)), rtol=1e-12)
    assert gradgradcheck(F.linear, (x, w, b))


def test_linear_errors_name_both_shapes_and_dtypes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x5\)"):
        F.linear(dt.randn(3, 4), dt.randn(5, 3))
    with pytest.raises(
        RuntimeError, match="expected m1 and m2 to have the same dtype, but got: double != float"
    ):
        F.linear(dt.randn(3, 4, dtype=dt.float64), dt.randn(5, 4))


def test_bilinear_matches_einsum_and_gradcheck():
    x1, x2, w, b = f64(4, 2, seed=1), f64(4, 3, seed=2), f64(5, 2, 3, seed=3), f64(5, seed=4)
    expected = np.einsum("ni,oij,nj->no", values(x1), values(w), values(x2)) + values(b)
    np.testing.assert_allclose(values(F.bilinear(x1, x2, w, b)), expected)
    assert gradcheck(F.bilinear, (x1, x2, w, b))


# ---------------------------------------------------------------------- dropout
def test_dropout_scales_kept_entries_and_is_identity_in_eval():
    dt.manual_seed(0)
    x = dt.ones(20000)
    out = values(F.dropout(x, 0.25))
    kept = out != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert F.dropout(x, 0.25, training=False) is x
    assert (values(F.dropout(x, 1.0)) == 0).all()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


def test_dropout_gradient_uses_the_same_mask():
    x = dt.ones(1000, requires_grad=True)
    out = F.dropout(x, 0.5)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values(out))


def test_dropout2d_drops_whole_channels():
    dt.manual_seed(1)
    out = values(F.dropout2d(dt.ones(4, 8, 3, 3), 0.5))
    per_channel = out.reshape(4, 8, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1)).all()
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):  # as PyTorch: warns
        assert F.dropout2d(dt.ones(2, 2), 0.5).shape == (2, 2)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"), pytest.warns(UserWarning):
        F.dropout2d(dt.ones(2), 0.5)


# ---------------------------------------------------------------------- embedding, one_hot
def test_embedding_rows_gradcheck_and_padding():
    w = f64(5, 3)
    idx = dt.tensor([[0, 2, 2], [4, 1, 0]])
    np.testing.assert_array_equal(values(F.embedding(idx, w)), values(w)[idx.numpy()])
    assert gradcheck(lambda ww: F.embedding(idx, ww), (w,))
    F.embedding(idx, w, padding_idx=2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [2, 1, 0, 0, 1])
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(dt.tensor([5]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(dt.tensor([-1]), w)


def test_embedding_max_norm_renormalises_rows_read():
    w = dt.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    F.embedding(dt.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(np.linalg.norm(w.numpy(), axis=1), [1.0, 0.5, 10.0], rtol=1e-5)


def test_one_hot():
    out = F.one_hot(dt.tensor([[0, 2], [1, 1]]))
    assert out.dtype == dt.int64 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy()[0], [[1, 0, 0], [0, 0, 1]])
    assert F.one_hot(dt.tensor([1]), 4).shape == (1, 4)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(dt.tensor([1, 5]), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(dt.tensor([1, -1]), 3)


# ---------------------------------------------------------------------- pad, normalize
@pytest.mark.parametrize(
    "mode, np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")]
)
def test_pad_index_modes_match_numpy(mode, np_mode):
    x = f64(2, 3, 4)
    out = F.pad(x, (1, 2, 2, 1), mode=mode)
    expected = np.pad(values(x), ((0, 0), (2, 1), (1, 2)), mode=np_mode)
    np.testing.assert_array_equal(values(out), expected)
    assert gradcheck(lambda a: F.pad(a, (1, 2, 2, 1), mode=mode), (x,))


def test_pad_constant_with_value_and_negative_crop():
    x = f64(2, 3, 4)
    out = F.pad(x, (1, 1), value=7.0)
    assert out.shape == (2, 3, 6) and (values(out)[..., 0] == 7.0).all()
    cropped = F.pad(x, (-1, 2, 1, -1))
    assert cropped.shape == (2, 3, 5)
    np.testing.assert_array_equal(values(cropped)[:, 1:, :3], values(x)[:, :2, 1:])
    assert gradcheck(lambda a: F.pad(a, (-1, 2, 1, -1), value=3.0), (x,))


def test_pad_errors():
    with pytest.raises(
        RuntimeError,
        match=r"Padding size should be less than the corresponding "
        r"input dimension, but got: padding \(4, 4\) at dimension 2",
    ):
        F.pad(dt.randn(1, 2, 3), (4, 4), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(dt.randn(2, 2), (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times"):
        F.pad(dt.randn(2, 2), (1,) * 6)
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D input tensor"):
        nn.ReflectionPad2d((1, 1))(dt.randn(1, 1, 2, 2))  # the pad's length, not the layer, decides
    assert nn.ReplicationPad1d((1, 1, 1, 1))(dt.zeros(1, 2, 2)).shape == (1, 4, 4)
    assert nn.ConstantPad2d((1, 2), 3.5)(dt.zeros(1, 2, 2)).shape == (1, 2, 5)


@pytest.mark.parity
def test_pad_errors_as_pytorch(torch):
    def errors(lib):
        got = []
        for x, p, mode in [
            ((2, 2), (1,), "reflect"),
            ((2,), (1, 1), "reflect"),
            ((2, 3), (1,) * 4, "replicate"),
        ]:
            try:
                lib.nn.functional.pad(lib.zeros(x), p, mode=mode)
            except Exception as e:  # noqa: BLE001 - the type and text are what is compared
                got.append((type(e).__name__, str(e)))
        return got

    assert errors(dt) == errors(torch) and len(errors(dt)) == 3


def test_normalize_unit_norm_and_gradcheck():
    x = f64(3, 4)
    out = values(F.normalize(x, dim=1))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0)
    np.testing.assert_allclose(values(F.normalize(dt.zeros(2, 3))), 0.0)
    assert gradcheck(lambda a: F.normalize(a, dim=0), (x,))
    assert gradcheck(lambda a: F.normalize(a, p=3, dim=-1), (x,))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.leaky_relu(x, 0.2),
        F.elu,
        F.selu,
        F.gelu,
        lambda x: F.gelu(x, approximate="tanh"),
        F.silu,
        F.softplus,
        lambda x: F.softplus(x, beta=3.0, threshold=2.0),
        lambda x: F.softmax(x, 1),
        lambda x: F.log_softmax(x, 0),
        lambda x: F.softmin(x, -1),
    ],
)
def test_activation_gradgradcheck(fn):
    from disttorch.autograd import gradgradcheck

    assert gradgradcheck(fn, (f64(3, 4),))


def test_cosine_similarity_and_pairwise_distance():
    a = dt.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=dt.float64)
    b = dt.tensor([[0.0, 2.0], [2.0, 2.0]], dtype=dt.float64)
    np.testing.assert_allclose(F.cosine_similarity(a, b).numpy(), [0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(F.pairwise_distance(a, b, eps=0.0).numpy(), [math.sqrt(5), math.sqrt(2)])
    assert gradcheck(lambda x, y: F.cosine_similarity(x, y, dim=0), (f64(3, 4), f64(3, 4, seed=1)))
    assert gradcheck(F.pairwise_distance, (f64(3, 4), f64(3, 4, seed=1)))
    from disttorch import nn

    assert nn.CosineSimilarity(dim=0)(a, b).shape == (2,) and nn.PairwiseDistance()(a, b).shape == (2,)


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_parity(torch, mode):
    dx, tx = both((2, 3, 5, 4), 18)
    check(
        F.pad(dx, (1, 2, 3, 1), mode=mode), torch.nn.functional.pad(tx, (1, 2, 3, 1), mode=mode), [dx], [tx]
    )


@pytest.mark.parity
def test_normalize_and_one_hot_parity(torch):
    dx, tx = both((3, 4), 19)
    check(F.normalize(dx, p=3, dim=0), torch.nn.functional.normalize(tx, p=3, dim=0), [dx], [tx])
    idx = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(
        F.one_hot(dt.tensor(idx), 5).numpy(), torch.nn.functional.one_hot(torch.tensor(idx), 5).numpy()
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("cosine_similarity", {}),
        ("cosine_similarity", {"dim": 0}),
        ("pairwise_distance", {}),
        ("pairwise_distance", {"p": 1.0, "keepdim": True}),
    ],
)
def test_distance_parity(torch, name, kwargs):
    dx1, tx1 = both((4, 5), 22)
    dx2, tx2 = both((1, 5), 23)
    check(
        getattr(F, name)(dx1, dx2, **kwargs),
        getattr(torch.nn.functional, name)(tx1, tx2, **kwargs),
        [dx1, dx2],
        [tx1, tx2],
    )


# ---------------------------------------------------------------------- higher-order gradients
def test_linear_double_backward_with_some_inputs_constant():
    """``LinearGrad``'s own backward, reached through create_graph, for every subset of inputs."""
    rng = np.random.default_rng(3)
    x, w, b = (dt.tensor(rng.normal(size=s), requires_grad=True) for s in ((2, 3, 4), (5, 4), (5,)))
    assert gradgradcheck(lambda x, w: F.linear(x, w, b.detach()) ** 2, (x, w))
    assert gradgradcheck(lambda w, b: F.linear(x.detach(), w, b) ** 2, (w, b))
    assert gradgradcheck(lambda x: F.linear(x, w.detach()) ** 2, (x,))
    assert gradgradcheck(lambda x, w, b: F.linear(x, w, b).tanh(), (x, w, b))


@pytest.mark.parity
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_third_derivative_matches_torch(approximate, torch):
    """``GeluDerivative``'s backward is tensor ops: third derivatives are recorded and right."""
    x = np.random.default_rng(4).normal(size=(3, 4)) * 2

    def derivatives(lib):
        v = lib.tensor(x, requires_grad=True)
        out, grads = lib.nn.functional.gelu(v, approximate=approximate).sum(), []
        for create in (True, True, False):
            (out,) = lib.autograd.grad(out.sum(), v, create_graph=create)
            grads.append(out.detach().numpy())
        return grads

    for ours, theirs in zip(derivatives(dt), derivatives(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_pad_index_modes_large_and_negative_amounts():
    """``replicate`` repeats the edge any number of times; ``circular`` wraps at most once
    (what is left after cropping); negative amounts crop in every mode; gradients sum the
    copies back."""
    x = dt.arange(6.0, dtype=dt.float64).reshape(1, 2, 3)
    assert F.pad(x, (5, 5), mode="replicate")[0, 0].tolist() == [0.0] * 6 + [1.0] + [2.0] * 6
    assert F.pad(x, (-1, 2), mode="reflect")[0, 0].tolist() == [1.0, 2.0, 1.0, 0.0]
    assert F.pad(x, (-1, 2), mode="replicate")[0, 0].tolist() == [1.0, 2.0, 2.0, 2.0]
    assert F.pad(x, (3, 3), mode="circular")[0, 0].tolist() == [0.0, 1.0, 2.0] * 3
    assert F.pad(x, (-1, 2), mode="circular")[0, 0].tolist() == [1.0, 2.0, 1.0, 2.0]
    assert F.pad(x, (0, -3), mode="circular").shape == (1, 2, 0)
    assert dt.nn.ReplicationPad2d(4)(dt.ones(2, 3, 4)).shape == (2, 11, 12)
    y = dt.tensor(np.arange(12.0).reshape(1, 1, 3, 4), requires_grad=True)
    for mode, amounts in (
        ("replicate", (5, -1, 2, 6)),
        ("circular", (-1, 3, 2, -1)),
        ("reflect", (-1, 2, 2, 0)),
    ):
        assert gradcheck(lambda a, m=mode, p=amounts: F.pad(a, p, mode=m), (y,))
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(RuntimeError, match="Negative padding value is resulting in an empty dimension"):
        F.pad(x, (-2, -2), mode="circular")
    with pytest.raises(RuntimeError, match=r"input \(W: 3\) is too small. Calculated output W: 0"):
        F.pad(x, (0, -3), mode="replicate")
    with pytest.raises(RuntimeError, match="Expected 3D or 4D .* but got: \\[1, 2, 0, 4\\]"):
        F.pad(dt.ones(1, 2, 0, 4), (1, 1, 1, 1), mode="replicate")


def test_prelu_takes_an_integer_init():
    assert dt.nn.PReLU(4, 4).weight.tolist() == [4.0] * 4


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_dropout3d_of_other_ranks_warns_and_drops_along_the_first_dim(shape):
    dt.manual_seed(0)
    with pytest.warns(UserWarning, match="Received a .*-D input to dropout3d, which is deprecated"):
        out = F.dropout3d(dt.ones(*shape), 0.5).numpy()
    rows = out.reshape(shape[0], -1) if len(shape) > 1 else out.reshape(-1, 1)
    assert all(len(set(r.tolist())) == 1 for r in rows)  # one draw per leading index
    assert set(np.unique(out).tolist()) <= {0.0, 2.0}


@pytest.mark.parity
def test_dropout3d_of_other_ranks_matches_pytorch(torch):
    for shape in [(4,), (3, 4), (2, 3, 4)]:
        outs = []
        for lib in (dt, torch):
            lib.manual_seed(3)
            with pytest.warns(UserWarning):
                outs.append(lib.nn.functional.dropout3d(lib.ones(*shape), 0.5).numpy())
        np.testing.assert_array_equal(*outs)


FUNCTIONAL_ERRORS = {  # argument errors with PyTorch's type and message
    "pad_circular_value": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1), mode="circular", value=1.0),
    "max_pool1d_padding": lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 6), 3, 1, 2, dilation=2),
    "max_pool2d_padding": lambda L: L.nn.functional.max_pool2d(L.ones(1, 2, 4, 4), 2, 1, 2),
    "batch_norm_eval_without_mean": lambda L: L.nn.functional.batch_norm(L.ones(2, 3), None, None),
    "batch_norm_eval_without_var": lambda L: L.nn.functional.batch_norm(L.ones(2, 3), L.zeros(3), None),
    "softshrink_negative": lambda L: L.nn.functional.softshrink(L.ones(2), -1.0),
    "softshrink_negative_double": lambda L: L.nn.functional.softshrink(L.ones(2, dtype=L.float64), -0.5),
    "celu_zero_alpha": lambda L: L.nn.functional.celu(L.ones(2), 0.0),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(FUNCTIONAL_ERRORS))
def test_functional_argument_errors_as_pytorch(torch, name):
    with pytest.raises(Exception) as theirs:
        FUNCTIONAL_ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        FUNCTIONAL_ERRORS[name](dt)
    assert str(ours.value) == str(theirs.value)


def _linear_after_in_place(lib) -> list:
    """``linear`` keeps the input only for the weight's gradient and the weight only for the
    input's (PyTorch's ``addmm``): changing the other in place before backward is no error,
    and the saved fields say what was kept."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 2)
    out = layer(lib.randn(4, 3))  # the input needs no gradient: the weight is not kept
    kept = [out.grad_fn._saved_mat1 is not None, out.grad_fn._saved_mat2 is None]
    with lib.no_grad():
        layer.weight.mul_(2)
    out.sum().backward()
    x = lib.randn(4, 3, requires_grad=True)
    layer.weight.requires_grad_(False)
    out = layer(x)  # the weight needs no gradient: the input is not kept
    kept += [out.grad_fn._saved_mat1 is None, tuple(out.grad_fn._saved_mat2.shape)]
    with lib.no_grad():
        x.mul_(3)
    out.sum().backward()
    return kept + [layer.weight.grad.tolist(), x.grad.tolist()]


def test_linear_keeps_only_what_each_gradient_needs():
    assert _linear_after_in_place(dt)[:4] == [True, True, True, (3, 2)]


@pytest.mark.parity
def test_linear_keeps_what_pytorchs_addmm_keeps(torch):
    ours, theirs = _linear_after_in_place(dt), _linear_after_in_place(torch)
    assert ours[:4] == theirs[:4]
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-6)
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-6)


def test_linear_gradgradcheck_with_one_operand_constant():
    w = dt.randn(2, 3, dtype=dt.float64, requires_grad=True)
    x = dt.randn(4, 3, dtype=dt.float64, requires_grad=True)
    assert gradgradcheck(lambda a: F.linear(a, w.detach()), (x,))
    assert gradgradcheck(lambda v: F.linear(x.detach(), v), (w,))
    assert gradgradcheck(lambda a, v: F.linear(a, v).pow(2).sum(), (x[0].detach().requires_grad_(), w))


def _linear_saved_geometry(lib) -> list:
    out = []
    for x_grad, w_grad in ((False, True), (True, False), (True, True)):
        layer = lib.nn.Linear(3, 2)
        layer.weight.requires_grad_(w_grad)
        node = layer(lib.randn(4, 3, requires_grad=x_grad)).grad_fn
        fields = ("mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")
        out.append([tuple(getattr(node, "_saved_" + f)) for f in fields])
    return out


def test_linear_saved_sizes_and_strides_where_an_operand_is_not_kept():
    assert _linear_saved_geometry(dt)[0] == [(4, 3), (), (3, 2), (1, 3)]


@pytest.mark.parity
def test_linear_saved_sizes_and_strides_as_pytorchs(torch):
    assert _linear_saved_geometry(dt) == _linear_saved_geometry(torch)
