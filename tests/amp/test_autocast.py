"""torch.autocast on CPU: per-op dtypes (parity with PyTorch's CPU autocast), gradients in
the parameters' dtype, the state API, cuda/cpu spellings, decorator use, custom_fwd."""

import importlib
import warnings

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F
from disttorch import nn

pytest.importorskip("ml_dtypes")

# PyTorch 2.13's CPU autocast lists (aten/src/ATen/autocast_mode.cpp, checked against the
# installed build): ops cast to the low dtype, and ops run in float32.
LOWER = [
    "conv1d",
    "conv2d",
    "conv3d",
    "bmm",
    "mm",
    "vecdot",
    "baddbmm",
    "addmm",
    "addbmm",
    "linear",
    "matmul",
    "conv_tbc",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "prelu",
    "scaled_dot_product_attention",
]
FP32 = [
    "avg_pool3d",
    "binary_cross_entropy",
    "grid_sample",
    "polar",
    "prod",
    "quantile",
    "nanquantile",
    "stft",
    "cdist",
    "trace",
    "view_as_complex",
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "inverse",
    "lu_solve",
    "orgqr",
    "ormqr",
    "pinverse",
    "max_pool3d",
    "max_unpool2d",
    "max_unpool3d",
    "adaptive_avg_pool3d",
    "mse_loss",
    "cosine_embedding_loss",
    "nll_loss",
    "hinge_embedding_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "cross_entropy",
    "l1_loss",
    "huber_loss",
    "margin_ranking_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "ctc_loss",
    "kl_div",
    "multilabel_margin_loss",
    "binary_cross_entropy_with_logits",
]


def _lookup(name):
    """Every public disttorch callable called ``name`` (top level, nn.functional, linalg)."""
    found = []
    for mod in ("disttorch", "disttorch.nn.functional", "disttorch.linalg"):
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        fn = getattr(m, name, None)
        if callable(fn) and not isinstance(fn, type):
            found.append((mod, fn))
    return found


@pytest.mark.parametrize("name,policy", [(n, "lower") for n in LOWER] + [(n, "fp32") for n in FP32])
def test_every_listed_op_that_exists_has_its_policy(name, policy):
    for mod, fn in _lookup(name):
        assert getattr(fn, "autocast_policy", None) == policy, f"{mod}.{name} lacks @autocast_op('{policy}')"


def _cases(lib):
    """(name, thunk) pairs building float32 inputs (bfloat16 for the fp32-list ops) in ``lib``."""
    rng = np.random.default_rng(0)

    def a(*s):
        return lib.tensor(rng.standard_normal(s).astype(np.float32))

    Fn = lib.nn.functional
    x, b3, im, w = a(4, 4), a(2, 4, 4), a(1, 2, 5, 5), a(3, 2, 3, 3)
    v, idx = a(4), lib.tensor([0, 1, 2, 3])

    def lo(t):
        return t.bfloat16()

    return [
        ("mm", lambda: lib.mm(x, x)),
        ("matmul", lambda: x @ x),
        ("bmm", lambda: lib.bmm(b3, b3)),
        ("addmm", lambda: lib.addmm(x, x, x)),
        ("linear", lambda: Fn.linear(x, x, v)),
        ("einsum", lambda: lib.einsum("ij,jk->ik", x, x)),
        ("conv2d", lambda: Fn.conv2d(im, w)),
        ("conv1d", lambda: Fn.conv1d(a(1, 2, 6), a(3, 2, 3))),
        ("conv_transpose2d", lambda: Fn.conv_transpose2d(im, a(2, 3, 3, 3))),
        ("prelu", lambda: Fn.prelu(x, lib.tensor([0.1]))),
        ("sdpa", lambda: Fn.scaled_dot_product_attention(b3, b3, b3)),
        ("mv", lambda: lib.mv(x, v)),
        ("dot", lambda: lib.dot(v, v)),
        ("add", lambda: x + x),
        ("exp", lambda: x.exp()),
        ("softmax", lambda: Fn.softmax(x, -1)),
        ("cross_entropy", lambda: Fn.cross_entropy(lo(x), idx)),
        ("nll_loss", lambda: Fn.nll_loss(lo(x), idx)),
        ("mse_loss", lambda: Fn.mse_loss(lo(x), lo(x))),
        ("l1_loss", lambda: Fn.l1_loss(lo(x), lo(x))),
        ("huber", lambda: Fn.huber_loss(lo(x), lo(x))),
        ("smooth_l1", lambda: Fn.smooth_l1_loss(lo(x), lo(x))),
        ("bce", lambda: Fn.binary_cross_entropy(lo(x.sigmoid()), lo(x.sigmoid()))),
        ("bce_logits", lambda: Fn.binary_cross_entropy_with_logits(lo(x), lo(x.sigmoid()))),
        ("prod", lambda: lo(x).prod()),
        ("trace", lambda: lib.trace(lo(x))),
        ("sum_bf16", lambda: lo(x).sum()),
        ("float64_mm", lambda: lib.mm(x.double(), x.double())),
        ("tensordot", lambda: lib.tensordot(x, x, dims=([1], [0]))),  # (PyTorch's mm inside)
        ("lstsq", lambda: lib.linalg.lstsq(lo(x) + lo(lib.eye(4)) * 4, lo(x)).solution),
        ("index_copy", lambda: x.index_copy(0, idx[:2], lo(x[:2]))),  # promoted to float32
    ]


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_output_dtypes_and_values_match_pytorch(low):
    torch = pytest.importorskip("torch")
    ours, theirs = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with dt.autocast("cpu", dtype=getattr(dt, low)):
            for name, fn in _cases(dt):
                ours[name] = fn()
        with torch.autocast("cpu", dtype=getattr(torch, low)):
            for name, fn in _cases(torch):
                theirs[name] = fn()
    for name, t in theirs.items():
        assert ours[name].dtype.name == str(t.dtype).replace("torch.", ""), name
        tol = 2e-2 if t.dtype in (torch.bfloat16, torch.float16) else 1e-4
        expected = t.float().numpy()
        scale = max(1.0, float(np.abs(expected).max()))  # a 16-bit sum that cancels errs by its terms' ulp
        np.testing.assert_allclose(
            ours[name].float().numpy(), expected, rtol=tol, atol=tol * scale, err_msg=name
        )


def test_gradients_come_back_in_parameter_dtype():
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    x, y = dt.randn(5, 6), dt.tensor([0, 1, 2, 0, 1])
    with dt.autocast("cpu", dtype=dt.bfloat16):
        out = model(x)
        loss = F.cross_entropy(out, y)
    assert out.dtype is dt.bfloat16 and loss.dtype is dt.float32
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    assert all(g.dtype is dt.float32 for g in grads)
    ref = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ref.load_state_dict(model.state_dict())
    F.cross_entropy(ref(x), y).backward()
    for g, p in zip(grads, ref.parameters()):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=0.05, atol=0.02)


def test_conv_model_under_float16_autocast():
    conv = nn.Conv2d(2, 3, 3)
    with dt.autocast("cpu", dtype=dt.float16):
        out = conv(dt.randn(1, 2, 5, 5))
    assert out.dtype is dt.float16
    out.float().sum().backward()
    assert conv.weight.grad.dtype is dt.float32


def test_state_api_and_nesting():
    assert not dt.is_autocast_enabled("cpu") and dt.get_autocast_dtype("cpu") is dt.bfloat16
    assert dt.get_autocast_dtype("cuda") is dt.float16
    with dt.autocast("cpu"):
        assert dt.is_autocast_enabled("cpu") and dt.is_autocast_cpu_enabled()
        assert not dt.is_autocast_enabled()  # no argument: cuda, as PyTorch
        with dt.autocast("cpu", enabled=False):
            assert not dt.is_autocast_enabled("cpu")
            assert (dt.randn(2, 2) @ dt.randn(2, 2)).dtype is dt.float32
        with dt.autocast("cpu", dtype=dt.float16):
            assert dt.get_autocast_cpu_dtype() is dt.float16
        assert dt.get_autocast_dtype("cpu") is dt.bfloat16
    assert not dt.is_autocast_enabled("cpu")
    with pytest.raises(RuntimeError, match="device_type"):
        dt.autocast("tpu9")
    with pytest.raises(ValueError, match="str"):
        dt.autocast(0)


def test_unsupported_dtype_and_cuda_warn_and_disable():
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        ctx = dt.autocast("cpu", dtype=dt.float64)
    with ctx:
        assert not dt.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ctx = dt.autocast("cuda")
    with ctx:
        assert not dt.is_autocast_enabled("cuda")
        assert (dt.randn(2, 2) @ dt.randn(2, 2)).dtype is dt.float32
    with (
        pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"),
        pytest.warns(UserWarning, match="CUDA is not available"),
    ):
        ctx = dt.cuda.amp.autocast()
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
        ctx = dt.cpu.amp.autocast()
    with ctx:
        assert dt.is_autocast_enabled("cpu") and dt.get_autocast_dtype("cpu") is dt.bfloat16


def test_decorator_and_backward_not_autocast():
    @dt.autocast("cpu")
    def f(a, b):
        assert dt.is_autocast_enabled("cpu")
        return a @ b

    a = dt.randn(3, 3, requires_grad=True)
    out = f(a, dt.randn(3, 3))
    assert out.dtype is dt.bfloat16 and not dt.is_autocast_enabled("cpu")
    with dt.autocast("cpu"):
        out.float().sum().backward()  # backward inside the region: grads stay float32
    assert a.grad.dtype is dt.float32


def test_weight_cast_cache():
    lin = nn.Linear(4, 4)
    with dt.autocast("cpu"):
        a = lin(dt.randn(2, 4))
        cached = {k: v[1] for k, v in dt.autograd.autocast_state._state.cache.items()}
        b = lin(dt.randn(2, 4))
        assert len(cached) == 2  # weight and bias, each cast once
        assert all(dt.autograd.autocast_state._state.cache[k][1] is v for k, v in cached.items())
    assert len(dt.autograd.autocast_state._state.cache) == 0
    (a.sum() + b.sum()).backward()  # both uses reach the parameters through the cached casts
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(4, 4.0))


def test_custom_fwd_cast_inputs():
    class Square(dt.autograd.Function):
        @staticmethod
        @dt.amp.custom_fwd(device_type="cpu", cast_inputs=dt.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            assert not dt.is_autocast_enabled("cpu")
            return x * x

        @staticmethod
        @dt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = dt.randn(3, dtype=dt.bfloat16, requires_grad=True)
    with dt.autocast("cpu"):
        y = Square.apply(x)
    assert y.dtype is dt.float32
    y.sum().backward()
    assert x.grad.dtype is dt.bfloat16


def test_cast_leaves_float64_integers_and_other_devices_alone():
    """``torch.amp.autocast_mode._cast`` (and so ``custom_fwd(cast_inputs=)``): PyTorch's
    eligibility rule, through nested containers."""
    from disttorch.amp.autocast_mode import _cast

    half, double, ints = (
        dt.ones(2, dtype=dt.float16),
        dt.ones(2, dtype=dt.float64),
        dt.ones(2, dtype=dt.int64),
    )
    out = _cast({"a": [half, (double, ints)], "s": "text"}, "cpu", dt.bfloat16)
    assert out["a"][0].dtype is dt.bfloat16 and out["a"][1][0] is double and out["a"][1][1] is ints
    assert out["s"] == "text" and isinstance(out["a"][1], tuple)
    assert _cast(half, "cuda", dt.float32) is half
    assert [t.dtype for t in _cast(iter([half]), "cpu", dt.float32)] == [dt.float32]  # a generator


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_promote_policy_refuses_a_third_floating_type_as_pytorch(low):
    """``index_copy`` (autocast's ``promote`` list): float32 wins over the autocast type, a
    floating tensor of neither type raises PyTorch's error unless float32 came first."""
    other = dt.float16 if low == "bfloat16" else dt.bfloat16
    x = dt.zeros(3, 2)
    with dt.autocast("cpu", dtype=getattr(dt, low)):
        assert x.index_copy(0, dt.tensor([1]), dt.ones(1, 2).to(getattr(dt, low))).dtype is dt.float32
        with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in at::autocast::prioritize"):
            x.to(other).index_copy(0, dt.tensor([1]), x[:1].to(other))


@pytest.mark.parametrize("op", ["cat", "stack"])
def test_cat_and_stack_follow_the_promote_policy_as_pytorch(op):
    """They returned float16 under bfloat16 autocast: PyTorch raises its prioritize error;
    float32 first wins, and an autocast-type tensor is cast to it (``ToCopyBackward0``)."""
    join = getattr(dt, op)
    low, f32 = dt.ones(2, dtype=dt.bfloat16, requires_grad=True), dt.ones(2, requires_grad=True)
    with dt.autocast("cpu", dtype=dt.bfloat16):
        out = join((low, f32))
        assert out.dtype is dt.float32 and out.grad_fn.next_functions[0][0].name() == "ToCopyBackward0"
        assert join((f32, dt.ones(2, dtype=dt.float16))).dtype is dt.float32
        with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in at::autocast::prioritize"):
            join((dt.ones(2, dtype=dt.float16),) * 2)


def _step_dtypes(lib, low):
    """The dtype of every intermediate of a small GPT block step and CNN step under autocast."""
    lib.manual_seed(0)
    nn_, Fn = lib.nn, lib.nn.functional
    seen = []

    def see(t):
        seen.append(str(t.dtype).rsplit(".", 1)[-1])
        return t

    ln, qkv, proj, fc = nn_.LayerNorm(16), nn_.Linear(16, 48), nn_.Linear(16, 16), nn_.Linear(16, 50)
    cnn = nn_.Sequential(
        nn_.Conv2d(3, 4, 3, padding=1), nn_.BatchNorm2d(4), nn_.ReLU(), nn_.MaxPool2d(2),
        nn_.GroupNorm(2, 4), nn_.SiLU(), nn_.AdaptiveAvgPool2d(1), nn_.Flatten(), nn_.Linear(4, 10),
    )  # fmt: skip
    with lib.autocast("cpu", dtype=getattr(lib, low)):
        x = see(nn_.Embedding(50, 16)(lib.arange(12).reshape(2, 6) % 50))
        q, k, v = (t.view(2, 6, 2, 8).transpose(1, 2) for t in see(qkv(see(ln(x)))).split(16, 2))
        att = see(see(see(q @ k.transpose(-2, -1)) * 0.35).softmax(-1))
        y = see(see(att @ v) + see(Fn.scaled_dot_product_attention(q, k, v, is_causal=True)))
        x = see(x + see(proj(y.transpose(1, 2).reshape(2, 6, 16))))
        logits = see(fc(see(Fn.gelu(see(ln(x))))))
        see(Fn.cross_entropy(logits.view(-1, 50), lib.arange(12) % 50))
        for t in (logits.log_softmax(-1), logits.sum(), logits.norm(), lib.cat([x, x.float()])):
            see(t)
        h = lib.randn(2, 3, 6, 6)
        for m in cnn:
            h = see(m(h))
    return seen


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_gpt_and_cnn_step_intermediate_dtypes_match_pytorch(torch, low):
    assert _step_dtypes(dt, low) == _step_dtypes(torch, low)
