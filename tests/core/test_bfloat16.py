"""bfloat16 tensors (via ml_dtypes): creation, conversion, printing, promotion, arithmetic,
autograd, a training step that tracks float32, finfo/iinfo."""

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F
from disttorch import nn

pytest.importorskip("ml_dtypes")


def test_creation_and_conversion():
    x = dt.tensor([1.001, 3.14159, -2.5])
    b = x.bfloat16()
    assert b.dtype is dt.bfloat16 and b.is_floating_point() and b.element_size() == 2
    assert b.tolist() == [1.0, 3.140625, -2.5]
    assert x.to(dt.bfloat16).dtype is dt.bfloat16 and x.to(dtype=dt.bfloat16).dtype is dt.bfloat16
    assert dt.zeros(2, 3, dtype=dt.bfloat16).dtype is dt.bfloat16
    assert dt.randn(4, dtype=dt.bfloat16).dtype is dt.bfloat16
    assert dt.tensor([1.5], dtype=dt.bfloat16).float().dtype is dt.float32
    assert b.type() == "torch.BFloat16Tensor"  # PyTorch's legacy type name
    assert b.float().tolist() == [1.0, 3.140625, -2.5]
    assert dt.from_numpy(b.numpy()).dtype is dt.bfloat16


def test_printing():
    b = dt.tensor([1.5, 2.25], dtype=dt.bfloat16)
    assert repr(b) == "tensor([1.5000, 2.2500], dtype=disttorch.bfloat16)"
    assert repr(dt.bfloat16) == "disttorch.bfloat16"


def test_promotion_like_pytorch():
    b = dt.tensor([1.0, 2.0], dtype=dt.bfloat16)
    assert (b + b).dtype is dt.bfloat16
    assert (b * 2.5).dtype is dt.bfloat16
    assert (b + dt.tensor([1.0], dtype=dt.float16)).dtype is dt.float32
    assert (b + dt.tensor([1.0])).dtype is dt.float32
    assert (b + dt.tensor([1.0], dtype=dt.float64)).dtype is dt.float64
    assert (b * dt.tensor(2.0)).dtype is dt.bfloat16  # a 0-dim tensor of the same category
    assert (dt.arange(3) + b[0]).dtype is dt.bfloat16
    assert dt.promote_types(dt.bfloat16, dt.float16) is dt.float32
    assert dt.promote_types(dt.bfloat16, dt.int64) is dt.bfloat16


def test_ops_round_to_bfloat16():
    x = dt.randn(5, 7)
    b = x.bfloat16()
    for out, ref in (
        (b.exp(), x.bfloat16().float().exp()),
        (b.sum(1), x.bfloat16().float().sum(1)),
        (b @ b.t(), x.bfloat16().float() @ x.bfloat16().float().t()),
    ):
        assert out.dtype is dt.bfloat16
        np.testing.assert_allclose(out.float().numpy(), ref.bfloat16().float().numpy(), rtol=1e-2)
    assert b.view(35).dtype is dt.bfloat16 and b.mean(dtype=dt.float32).dtype is dt.float32
    v = b.view(35)
    v[0] = 4.0  # a view of bfloat16 memory stays a view
    assert b[0, 0].item() == 4.0


def test_autograd_gradients_in_bfloat16():
    x = dt.randn(3, 4).bfloat16()
    w = dt.randn(4, 2, dtype=dt.bfloat16, requires_grad=True)
    y = (x @ w).tanh().sum()
    assert y.dtype is dt.bfloat16
    y.backward()
    assert w.grad.dtype is dt.bfloat16
    w32 = w.detach().float().requires_grad_()
    (x.float() @ w32).tanh().sum().backward()
    np.testing.assert_allclose(w.grad.float().numpy(), w32.grad.numpy(), rtol=3e-2, atol=3e-2)


def test_mixed_bfloat16_float32_gradient_dtypes():
    a = dt.randn(3, dtype=dt.bfloat16, requires_grad=True)
    b = dt.randn(3, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is dt.bfloat16 and b.grad.dtype is dt.float32


def _train(dtype, steps=30):
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    data = dt.randn(64, 10)
    target = (data[:, 0] > 0).long() + (data[:, 1] > 0).long()
    model.to(dtype)
    opt = dt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(data.to(dtype)), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def test_bfloat16_training_tracks_float32():
    l32, _ = _train(dt.float32)
    l16, model = _train(dt.bfloat16)
    assert all(p.dtype is dt.bfloat16 and p.grad.dtype is dt.bfloat16 for p in model.parameters())
    assert l16[-1] < 0.6 * l16[0]
    np.testing.assert_allclose(l16, l32, atol=0.08)
    assert model.bfloat16() is model


def test_finfo_iinfo():
    fb = dt.finfo(dt.bfloat16)
    assert (fb.bits, fb.eps, fb.resolution) == (16, 0.0078125, 0.01)
    assert fb.max == pytest.approx(3.38953e38, rel=1e-5) and fb.tiny == pytest.approx(1.17549e-38, rel=1e-5)
    assert dt.finfo().dtype == "float32" and dt.finfo(dt.float16).max == 65504
    assert dt.finfo(dt.float64).eps == np.finfo(np.float64).eps
    ii = dt.iinfo(dt.int8)
    assert (ii.min, ii.max, ii.bits, ii.dtype) == (-128, 127, 8, "int8")
    with pytest.raises(TypeError, match="iinfo"):
        dt.finfo(dt.int32)
    with pytest.raises(TypeError, match="finfo"):
        dt.iinfo(dt.float32)
    with pytest.raises(TypeError, match="bool"):
        dt.iinfo(dt.bool)


@pytest.mark.parity
def test_finfo_iinfo_parity():
    torch = pytest.importorskip("torch")
    for name in ("bfloat16", "float16", "float32", "float64"):
        a, b = dt.finfo(getattr(dt, name)), torch.finfo(getattr(torch, name))
        assert (a.bits, a.eps, a.max, a.min, a.tiny, a.smallest_normal, a.resolution) == (
            b.bits,
            b.eps,
            b.max,
            b.min,
            b.tiny,
            b.smallest_normal,
            b.resolution,
        )
        assert repr(a) == repr(b)
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        a, b = dt.iinfo(getattr(dt, name)), torch.iinfo(getattr(torch, name))
        assert (a.bits, a.max, a.min, a.dtype) == (b.bits, b.max, b.min, b.dtype)
        assert repr(a) == repr(b)


@pytest.mark.parity
def test_bfloat16_matmul_parity():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    ours = (dt.tensor(x).bfloat16() @ dt.tensor(x).bfloat16().t()).float().numpy()
    ref = (torch.tensor(x).bfloat16() @ torch.tensor(x).bfloat16().t()).float().numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-2, atol=1e-2)


def test_missing_ml_dtypes_error(monkeypatch):
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import disttorch as dt\n"
        "assert repr(dt.bfloat16) == 'disttorch.bfloat16'\n"
        "try:\n    dt.zeros(2, dtype=dt.bfloat16)\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "pip install" in out.stdout and "ml_dtypes" in out.stdout, out.stderr


def test_half_matmul_in_float32_and_float64_untouched():
    import subprocess
    import sys

    # a fresh process: ml_dtypes not loaded yet, float64 must stay float64 math
    code = (
        "import numpy as np, disttorch as dt\n"
        "a = np.random.default_rng(0).standard_normal((30, 30))\n"
        "assert np.array_equal((dt.tensor(a) @ dt.tensor(a)).numpy(), a @ a)\n"
        "h = a.astype(np.float16)\n"
        "out = (dt.tensor(h) @ dt.tensor(h)).numpy()\n"
        "assert out.dtype == np.float16\n"
        "assert np.array_equal(out, (h.astype(np.float32) @ h.astype(np.float32)).astype(np.float16))\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.stdout.strip() == "ok", out.stderr


def test_save_load_and_pickle_keep_bfloat16(tmp_path):
    import pickle

    t = dt.tensor([1.5, -2.25, 3.0], dtype=dt.bfloat16)
    dt.save({"w": t, "dtype": dt.bfloat16}, tmp_path / "ckpt.pt")
    back = dt.load(tmp_path / "ckpt.pt")
    assert back["w"].dtype is dt.bfloat16 and back["w"].tolist() == [1.5, -2.25, 3.0]
    assert back["dtype"] is dt.bfloat16
    assert pickle.loads(pickle.dumps(t)).tolist() == t.tolist()
    assert pickle.loads(pickle.dumps(dt.bfloat16)) is dt.bfloat16


def test_double_backward_through_bfloat16_ops():
    w = dt.randn(3, dtype=dt.bfloat16, requires_grad=True)
    x = dt.randn(3, dtype=dt.bfloat16)
    (g,) = dt.autograd.grad((w * w * x).sum(), [w], create_graph=True)
    assert g.dtype is dt.bfloat16 and g.requires_grad
    g.sum().backward()  # d/dw sum(2 w x) = 2 x
    np.testing.assert_allclose(w.grad.float().numpy(), (2 * x).float().numpy())
    lin = nn.Linear(3, 2).bfloat16()
    inp = dt.randn(4, 3, dtype=dt.bfloat16, requires_grad=True)
    (gx,) = dt.autograd.grad(lin(inp).tanh().sum(), [inp], create_graph=True)
    (gx**2).sum().backward()
    assert lin.weight.grad is not None and lin.weight.grad.dtype is dt.bfloat16


def test_norms_clipping_and_state_accept_bfloat16():
    x = dt.tensor([[3.0, 4.0], [0.0, 1.0]], dtype=dt.bfloat16, requires_grad=True)
    assert dt.linalg.vector_norm(x).dtype is dt.bfloat16 and x.norm().float().item() == pytest.approx(
        26**0.5, rel=1e-2
    )
    assert dt.dist(x, 2 * x).dtype is dt.bfloat16 and F.normalize(x, dim=1).dtype is dt.bfloat16
    net = nn.Linear(2, 3).to(dt.bfloat16)
    net(x.detach()).sum().backward()
    total = nn.utils.clip_grad_norm_(net.parameters(), 0.1)
    assert total.dtype is dt.bfloat16 and total.float().item() > 0.1
    assert float(dt.linalg.vector_norm(dt.cat([p.grad.float().flatten() for p in net.parameters()]))) <= 0.101
    # a loaded floating state takes the parameter's dtype, bfloat16 included
    p = nn.Parameter(dt.ones(2))
    opt = dt.optim.Adam([p])
    p.grad = dt.ones(2)
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].bfloat16()
    opt.load_state_dict(sd)
    assert opt.state[p]["exp_avg"].dtype is dt.float32


def test_reduce_op_avg_accepts_bfloat16():
    from disttorch.distributed import ReduceOp

    assert ReduceOp.AVG.ufunc(dt.bfloat16.numpy, "all_reduce") is np.add
