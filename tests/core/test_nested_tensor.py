"""torch.nested: construction in both layouts, sizes, unbind, to_padded_tensor, elementwise
ops, linear, matmul/bmm, softmax, transpose, scaled_dot_product_attention, gradients, and
the TransformerEncoder's nested path, against PyTorch."""

import warnings

import numpy as np
import pytest

import disttorch as dt

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors is in prototype")
RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3))
B = RNG.standard_normal((4, 3))


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*nested tensors is in prototype.*")
    return torch


def _nt(lib, layout=None, parts=(A, B), **kw):
    layout = layout or lib.strided
    return lib.nested.nested_tensor([lib.tensor(p) for p in parts], layout=layout, **kw)


def _padded(nt, fill=0.0):
    return nt.to_padded_tensor(fill).detach().numpy()


def test_construction_and_attributes():
    nt = _nt(dt)
    assert nt.is_nested and not dt.tensor(A).is_nested
    assert nt.layout is dt.strided and nt.dim() == 3 and nt.dtype == dt.float64
    assert len(nt) == 2 and nt.size(0) == 2 and nt.size(2) == 3 and nt.size(-1) == 3
    assert nt.numel() == 18
    np.testing.assert_array_equal(nt.unbind()[1].numpy(), B)
    np.testing.assert_array_equal(nt[0].numpy(), A)
    with pytest.raises(RuntimeError, match="Given dimension 1 is irregular and does not have a size"):
        nt.size(1)
    with pytest.raises(RuntimeError, match="has no size"):
        nt.shape
    nj = _nt(dt, dt.jagged)
    assert nj.layout is dt.jagged
    assert repr(nj.shape) == f"disttorch.Size([2, {nj.size(1)!r}, 3])"
    np.testing.assert_array_equal(nj.offsets().numpy(), [0, 2, 6])
    np.testing.assert_array_equal(nj.values().detach().numpy(), np.concatenate([A, B]))
    assert nj.lengths() is None and nj.is_contiguous()
    assert nj.size(1) == (nj * 2).size(1)  # the same ragged size after an elementwise op


def test_construction_errors():
    with pytest.raises(RuntimeError, match="must have the same dimension"):
        dt.nested.nested_tensor([dt.tensor(A), dt.tensor([1.0])])
    with pytest.raises(RuntimeError, match="only allows for a single ragged dimension"):
        dt.nested.nested_tensor([dt.tensor(A), dt.ones(3, 4, dtype=dt.float64)], layout=dt.jagged)
    with pytest.raises(RuntimeError, match="layout is unsupported"):
        dt.nested.nested_tensor([dt.tensor(A)], layout=dt.sparse_coo)
    with pytest.raises(RuntimeError, match="expected a nested tensor"):
        dt.tensor(A).to_padded_tensor(0.0)


@pytest.mark.parity
def test_repr_matches_pytorch(torch):
    parts = (np.array([1.0, 2.0]), np.array([3.0]))
    for kw in ({}, {"requires_grad": True}):
        assert repr(_nt(dt, parts=parts, **kw)).replace("disttorch.", "torch.") == repr(
            _nt(torch, parts=parts, **kw)
        )
    got = repr(_nt(dt, dt.jagged))
    assert got.startswith("NestedTensor(size=(2, j") and got.endswith(
        ", 3), offsets=tensor([0, 2, 6]), contiguous=True)"
    )


@pytest.mark.parity
@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_to_padded_tensor_matches_pytorch(torch, layout):
    got = _nt(dt, getattr(dt, layout))
    want = _nt(torch, getattr(torch, layout))
    np.testing.assert_array_equal(_padded(got, -1.0), want.to_padded_tensor(-1.0).numpy())
    # PyTorch's jagged layout pads only the ragged dim to output_size; ours pads every dim, as strided
    want = _nt(torch, torch.strided)
    np.testing.assert_array_equal(
        dt.nested.to_padded_tensor(got, 0.5, (3, 5, 4)).numpy(),
        torch.nested.to_padded_tensor(want, 0.5, (3, 5, 4)),
    )
    with pytest.raises(RuntimeError, match="Truncation is not supported"):
        got.to_padded_tensor(0.0, (2, 3, 3))


OPS = {
    "mul_add": lambda t, x: x * 2 + x,
    "relu_exp": lambda t, x: t.relu(x).exp(),
    "scalar": lambda t, x: 1 - x / 3,
    "tanh": lambda t, x: x.tanh(),
    "softmax_last": lambda t, x: t.softmax(x, -1),
    "softmax_ragged": lambda t, x: t.softmax(x, 1),
    "log_softmax": lambda t, x: t.nn.functional.log_softmax(x, 2),
    "gelu": lambda t, x: t.nn.functional.gelu(x),
    "cast": lambda t, x: x.to(t.float32),
}


@pytest.mark.parity
@pytest.mark.parametrize("layout", ["strided", "jagged"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_elementwise_and_softmax_match_pytorch(torch, layout, name):
    got = OPS[name](dt, _nt(dt, getattr(dt, layout)))
    try:
        want = OPS[name](torch, _nt(torch, getattr(torch, layout)))
    except (NotImplementedError, RuntimeError):  # not in PyTorch's strided layout: its jagged values
        want = OPS[name](torch, _nt(torch, torch.jagged))
    assert got.is_nested and got.layout is getattr(dt, layout)
    np.testing.assert_allclose(_padded(got), want.to_padded_tensor(0.0).numpy(), rtol=1e-6, atol=1e-6)


def test_batch_dim_is_an_error():
    nt = _nt(dt)
    with pytest.raises(RuntimeError, match="across the batch dimension"):
        dt.softmax(nt, 0)
    with pytest.raises(RuntimeError, match="dimension 0 cannot be transposed"):
        nt.transpose(0, 1)
    with pytest.raises(NotImplementedError, match="Flip is not supported on nested tensors"):
        dt.flip(nt, [1])


@pytest.mark.parity
@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_linear_transpose_matmul_bmm_match_pytorch(torch, layout):
    lin_t = torch.nn.Linear(3, 5).double()
    lin_d = dt.nn.Linear(3, 5).double()
    lin_d.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in lin_t.state_dict().items()})
    nt_d, nt_t = _nt(dt, getattr(dt, layout)), _nt(torch, getattr(torch, layout))
    got, want = lin_d(nt_d), lin_t(nt_t)
    np.testing.assert_allclose(_padded(got), want.to_padded_tensor(0.0).detach().numpy(), rtol=1e-6)
    tr_d, tr_t = nt_d.transpose(1, 2), nt_t.transpose(1, 2)
    for g, w in zip(tr_d.unbind(), tr_t.unbind()):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    if layout == "jagged":
        assert tr_d.shape[2] == nt_d.shape[1] and not tr_d.is_contiguous()
    other = [RNG.standard_normal((3, 2)), RNG.standard_normal((3, 6))]
    oth_d = dt.nested.nested_tensor([dt.tensor(o) for o in other])
    oth_t = torch.nested.nested_tensor([torch.tensor(o) for o in other])
    nt_d, nt_t = _nt(dt), _nt(torch)
    for op in ("bmm", "matmul"):
        got, want = getattr(dt, op)(nt_d, oth_d), getattr(torch, op)(nt_t, oth_t)
        for g, w in zip(got.unbind(), want.unbind()):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.parity
def test_scaled_dot_product_attention_on_jagged(torch):
    parts = [RNG.standard_normal((n, 4, 8)) for n in (2, 5)]
    q_d = _nt(dt, dt.jagged, parts).transpose(1, 2)
    q_t = _nt(torch, torch.jagged, parts).transpose(1, 2)
    got = dt.nn.functional.scaled_dot_product_attention(q_d, q_d * 0.5, q_d)
    want = torch.nn.functional.scaled_dot_product_attention(q_t, q_t * 0.5, q_t)
    assert got.is_nested and got.dim() == 4
    for g, w in zip(got.transpose(1, 2).unbind(), want.transpose(1, 2).unbind()):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-9)
    with pytest.raises(NotImplementedError, match="takes no attn_mask"):
        dt.nn.functional.scaled_dot_product_attention(q_d, q_d, q_d, attn_mask=dt.ones(4, 4, dtype=dt.bool))


@pytest.mark.parity
def test_gradients_to_leaf_nested_tensor(torch):
    def loss(lib, nt):
        return (lib.nested.to_padded_tensor(lib.softmax(nt * 2, -1), 0.0) ** 2).sum()

    nt_d = _nt(dt, requires_grad=True)
    nt_t = _nt(torch, requires_grad=True)
    loss(dt, nt_d).backward()
    loss(torch, nt_t).backward()
    assert nt_d.grad.is_nested
    for g, w in zip(nt_d.grad.unbind(), nt_t.grad.unbind()):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


def test_as_nested_tensor_passes_gradients_to_constituents():
    a, b = dt.tensor(A, requires_grad=True), dt.tensor(B, requires_grad=True)
    nt = dt.nested.as_nested_tensor([a, b], layout=dt.jagged)
    (dt.nn.functional.relu(nt) * 3).to_padded_tensor(0.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 3.0 * (A > 0))
    np.testing.assert_allclose(b.grad.numpy(), 3.0 * (B > 0))
    dense = dt.tensor(RNG.standard_normal((3, 4, 2)), requires_grad=True)
    dt.nested.as_nested_tensor(dense).to_padded_tensor(0.0).sum().backward()
    np.testing.assert_array_equal(dense.grad.numpy(), np.ones((3, 4, 2)))


def test_gradcheck_through_nested_ops():
    w = dt.tensor(RNG.standard_normal((3, 2)))

    def f(a, b):
        nt = dt.nested.as_nested_tensor([a, b], layout=dt.jagged)
        return dt.nested.to_padded_tensor(dt.softmax(dt.matmul(nt, w).tanh(), 1), 0.0)

    a = dt.tensor(A, requires_grad=True)
    b = dt.tensor(B, requires_grad=True)
    assert dt.autograd.gradcheck(f, (a, b))


@pytest.mark.parity
def test_from_jagged_narrow_masked_select_match_pytorch(torch):
    values = RNG.standard_normal((10, 3))
    got = dt.nested.nested_tensor_from_jagged(dt.tensor(values), dt.tensor([0, 3, 10]))
    want = torch.nested.nested_tensor_from_jagged(torch.tensor(values), torch.tensor([0, 3, 10]))
    for g, w in zip(got.unbind(), want.unbind()):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    dense = RNG.standard_normal((3, 6, 4))
    start, length = [0, 1, 2], [2, 3, 4]
    got = dt.nested.narrow(dt.tensor(dense), 1, dt.tensor(start), dt.tensor(length), layout=dt.jagged)
    want = torch.nested.narrow(
        torch.tensor(dense), 1, torch.tensor(start), torch.tensor(length), layout=torch.jagged
    )
    for g, w in zip(got.unbind(), want.unbind()):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    t = np.arange(24.0).reshape(2, 3, 4)
    got = dt.nested.masked_select(dt.tensor(t), dt.tensor(t % 5 == 0))
    want = torch.nested.masked_select(torch.tensor(t), torch.tensor(t % 5 == 0))
    np.testing.assert_array_equal(got.offsets().numpy(), want.offsets().numpy())
    np.testing.assert_array_equal(got.values().numpy(), want.values().numpy())


@pytest.mark.parity
def test_transformer_encoder_nested_path_matches_pytorch(torch):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    enc_t = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).eval()
    enc_d = dt.nn.TransformerEncoder(
        dt.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2, enable_nested_tensor=True
    ).eval()
    enc_d.load_state_dict({k: dt.tensor(v.numpy()) for k, v in enc_t.state_dict().items()})
    x = RNG.standard_normal((3, 5, 8)).astype(np.float32)
    pad = np.array([[False] * 5, [False] * 3 + [True] * 2, [False] * 2 + [True] * 3])
    with torch.no_grad():
        want = enc_t(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)).numpy()
    with dt.no_grad():
        got = enc_d(dt.tensor(x), src_key_padding_mask=dt.tensor(pad)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert not got[1, 3:].any()  # the nested path leaves padded positions zero
    # with grad enabled PyTorch runs the ordinary path (padded positions computed)
    want = enc_t(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)).detach().numpy()
    got = enc_d(dt.tensor(x), src_key_padding_mask=dt.tensor(pad)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_in_place_ops_act_on_each_constituent():
    nt = _nt(dt, dt.jagged)
    assert nt.add_(1).mul_(nt) is nt
    np.testing.assert_allclose(nt.unbind()[1].numpy(), (B + 1) ** 2)
    nt.zero_()
    assert not _padded(nt).any()
    leaf = _nt(dt, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.add_(1)  # a leaf that requires grad, as any tensor


@pytest.mark.parity
def test_functional_in_place_activations_on_jagged_match_pytorch(torch):
    # F.leaky_relu(nt, inplace=True) wrote the result into the placeholder array and raised
    def run(lib) -> list:
        F = lib.nn.functional
        out = []
        for act in (
            lambda x: F.leaky_relu(x, 0.1, inplace=True),
            lambda x: F.hardtanh(x, inplace=True),
            lambda x: F.relu(x, inplace=True),
            lambda x: F.silu(x, inplace=True),
        ):
            nt = _nt(lib, lib.jagged)
            out += [act(nt) is nt, *(p.numpy() for p in nt.unbind())]
        return out

    for got, want in zip(run(dt), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


REDUCTIONS = {
    "sum_last": lambda t, x: x.sum(-1),
    "sum_last_keepdim": lambda t, x: x.sum(-1, keepdim=True),
    "mean_last": lambda t, x: x.mean(-1),
    "amax_last": lambda t, x: x.amax(-1),
    "sum_ragged": lambda t, x: x.sum(1),
    "mean_ragged": lambda t, x: x.mean(1),
    "sum_all": lambda t, x: x.sum(),
    "layer_norm": lambda t, x: t.nn.functional.layer_norm(x, (3,)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_jagged_reductions_and_layer_norm_match_pytorch(torch, name):
    got = REDUCTIONS[name](dt, _nt(dt, dt.jagged))
    want = REDUCTIONS[name](torch, _nt(torch, torch.jagged))
    assert got.is_nested == want.is_nested
    if want.is_nested:
        for g, w in zip(got.unbind(), want.unbind()):
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-6)
    else:
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)


def test_reductions_errors_and_dropout():
    nt = _nt(dt, dt.jagged)
    with pytest.raises(RuntimeError, match="across the batch dimension"):
        nt.sum(0)
    np.testing.assert_allclose(nt.mean().item(), np.concatenate([A, B]).mean())
    dropped = dt.nn.functional.dropout(_nt(dt, dt.jagged, (np.ones((2, 3)), np.ones((40, 3)))), 0.5)
    values = dropped.values().numpy()
    assert set(np.unique(values)) <= {0.0, 2.0} and 0.3 < (values == 0).mean() < 0.7
    with pytest.raises(NotImplementedError, match="channel-wise dropout"):
        dt.nn.functional.dropout1d(nt, 0.5)


def test_gradcheck_through_nested_reductions_and_layer_norm():
    def f(a, b):
        nt = dt.nested.as_nested_tensor([a, b], layout=dt.jagged)
        normed = dt.nn.functional.layer_norm(nt, (3,))
        return normed.amax(-1).sum(1) + nt.mean(1).sum(-1) + (nt * nt).sum()

    a = dt.tensor(A, requires_grad=True)
    b = dt.tensor(B, requires_grad=True)
    assert dt.autograd.gradcheck(f, (a, b))


def _heads(lib, x, n):
    """A self-attention block as the SDPA tutorial writes it: chunk, view to heads, attend."""
    q, k, v = x.chunk(3, -1)
    q, k, v = (t.view(n, -1, 2, t.size(-1) // 2).transpose(1, 2) for t in (q, k, v))
    y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    return y.transpose(1, 2).reshape(n, -1, x.size(-1) // 3)


@pytest.mark.parity
def test_chunk_view_reshape_of_strided_nested_match_pytorch(torch):
    parts = [RNG.standard_normal((n, 12)) for n in (3, 5)]
    nt = _nt(dt, parts=parts)
    got = _heads(dt, nt, 2)
    assert got.is_nested and [tuple(p.shape) for p in got.unbind()] == [(3, 4), (5, 4)]
    for g, p in zip(got.unbind(), parts):  # PyTorch's: each sequence as a batch of one
        want = _heads(torch, torch.tensor(p)[None], 1)[0]
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-6, atol=1e-12)
    for lib in (dt, torch):
        with pytest.raises(RuntimeError, match="cannot change or infer the implicit batch dimension"):
            _nt(lib, parts=parts).view(-1, 4, 12)
    with pytest.raises(RuntimeError, match="along a regular non-batch dim"):
        nt.chunk(2, 1)

    def f(a, b):
        return _heads(dt, dt.nested.as_nested_tensor([a, b]), 2).to_padded_tensor(0.0)

    args = [dt.tensor(p[:, :6] if i else p[:2, :6], requires_grad=True) for i, p in enumerate(parts)]
    assert dt.autograd.gradcheck(f, args)


def test_strided_nested_tensor_warns_once_as_pytorch():
    from disttorch import _native_warnings
    from disttorch._native_warnings import NESTED_PROTOTYPE as _STRIDED_PROTOTYPE

    _native_warnings._warned_once.discard(_STRIDED_PROTOTYPE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _nt(dt)
        _nt(dt)
        _nt(dt, dt.jagged)
    assert [str(w.message) for w in caught] == [_STRIDED_PROTOTYPE]
    assert caught[0].filename == __file__  # at the program's line


def _split_heads_attention(lib, nt):
    """NaViT's attention over a jagged batch: unflatten the features into heads, attend,
    flatten them back."""
    q = nt.unflatten(-1, (2, 3)).transpose(1, 2)
    out = lib.nn.functional.scaled_dot_product_attention(q, q * 0.5, q)
    return out.transpose(1, 2).flatten(-2) + nt


@pytest.mark.parity
def test_jagged_unflatten_flatten_of_regular_dims_match_pytorch(torch):
    parts = [RNG.standard_normal((n, 6)) for n in (2, 4)]
    got = _split_heads_attention(dt, _nt(dt, dt.jagged, parts))
    want = _split_heads_attention(torch, _nt(torch, torch.jagged, parts))
    assert got.is_nested and got._ragged_idx == 1
    for g, w in zip(got.unbind(), want.unbind()):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-12)
    with pytest.raises(RuntimeError, match="only the dims after the batch dim and its ragged/irregular dims"):
        _nt(dt, dt.jagged, parts).unflatten(1, (1, -1))


def test_gradcheck_through_jagged_unflatten_flatten():
    def f(a, b):
        return _split_heads_attention(dt, dt.nested.as_nested_tensor([a, b], layout=dt.jagged)).values()

    args = [dt.tensor(RNG.standard_normal((n, 6)), requires_grad=True) for n in (2, 3)]
    assert dt.autograd.gradcheck(f, args)


def test_elementwise_ops_run_under_published_module_names(monkeypatch):
    """Under the alias the op classes carry ``torch.`` module paths (``torch.ops.elementwise``)."""
    from disttorch.ops import elementwise

    monkeypatch.setattr(elementwise.Add, "__module__", "torch.ops.elementwise")
    nt = _nt(dt, dt.jagged)
    np.testing.assert_array_equal((nt + nt).unbind()[1].numpy(), 2 * B)
