"""Recurrent layers (RNN, LSTM, GRU, cells), their sequence Function and nn.utils.rnn:
gradients against finite differences, outputs and gradients against PyTorch with copied
weights, PyTorch's parameter layout and errors."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck
from disttorch.nn.functional._recurrent import recurrent_layer
from disttorch.nn.utils import rnn as R


def _np(t):
    return t.detach().numpy()


def _t(rng, *shape, grad=True):
    return dt.tensor(rng.standard_normal(shape) * 0.5, dtype=dt.float64, requires_grad=grad)


# ------------------------------------------------------------------ the sequence Function
@pytest.mark.parametrize("mode", ["RNN_TANH", "RNN_RELU", "GRU", "LSTM", "LSTM_PROJ"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(
    "batch_sizes", [[3, 3, 2, 1], [3, 2, 2, 2, 1, 1, 1, 1, 1]], ids=["short", "prepared-weights"]
)
def test_sequence_function_gradcheck_packed(mode, reverse, batch_sizes):
    rng = np.random.default_rng(1)
    n, i_sz, h_sz, p_sz = sum(batch_sizes), 3, 4, 2
    kind = "LSTM" if mode == "LSTM_PROJ" else mode
    gates = {"LSTM": 4, "GRU": 3}.get(kind, 1) * h_sz
    out_sz = p_sz if mode == "LSTM_PROJ" else h_sz
    args = [
        _t(rng, n, i_sz),
        _t(rng, 3, out_sz),
        _t(rng, 3, h_sz) if kind == "LSTM" else None,
        _t(rng, gates, i_sz),
        _t(rng, gates, out_sz),
        _t(rng, gates),
        _t(rng, gates),
        _t(rng, p_sz, h_sz) if mode == "LSTM_PROJ" else None,
    ]
    where = [k for k, a in enumerate(args) if a is not None]

    def fn(*ts):
        full = list(args)
        for k, t in zip(where, ts):
            full[k] = t
        return recurrent_layer(kind, *full, batch_sizes, reverse)

    assert gradcheck(fn, tuple(args[k] for k in where))


def test_sequence_function_is_one_graph_node():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    out, (_h, _c) = lstm(dt.randn(5, 2, 3))
    # two directions per layer: 4 layer-direction nodes, not a graph of per-step ops
    names = set()
    stack = [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in names:
            continue
        names.add(node)
        stack.extend(n for n, _ in node.next_functions)
    assert sum(n.name() == "RecurrentLayerFunctionBackward0" for n in names) == 4


def test_double_backward_raises_clearly():
    lstm = nn.LSTM(2, 3)
    x = dt.randn(4, 1, 2, requires_grad=True)
    (g,) = dt.autograd.grad(lstm(x)[0].sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="double backward through lstm layer is not supported"):
        g.sum().backward()


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("LSTM", {"num_layers": 2, "bidirectional": True}),
        ("LSTM", {"proj_size": 2, "bidirectional": True}),
        ("GRU", {"num_layers": 2, "bidirectional": True}),
        ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
        ("RNN", {"bias": False, "batch_first": True}),
    ],
)
def test_module_gradcheck_input_and_states(cls, kw):
    dt.manual_seed(0)
    m = getattr(nn, cls)(3, 4, **kw).double()
    rng = np.random.default_rng(2)
    x = _t(rng, 2, 4, 3) if kw.get("batch_first") else _t(rng, 4, 2, 3)
    d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    h0 = _t(rng, d, 2, kw.get("proj_size") or 4)
    if cls == "LSTM":
        c0 = _t(rng, d, 2, 4)
        assert gradcheck(lambda a, b, c: m(a, (b, c))[0], (x, h0, c0))
    else:
        assert gradcheck(lambda a, b: m(a, b), (x, h0))


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradcheck(cls):
    dt.manual_seed(0)
    cell = getattr(nn, cls)(3, 4).double()
    rng = np.random.default_rng(3)
    x, h = _t(rng, 2, 3), _t(rng, 2, 4)
    if cls == "LSTMCell":
        c = _t(rng, 2, 4)
        assert gradcheck(lambda a, b, cc: cell(a, (b, cc)), (x, h, c))
    else:
        assert gradcheck(lambda a, b: cell(a, b), (x, h))


# ------------------------------------------------------------------ layout and init
def test_parameter_names_shapes_and_init():
    lstm = nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5)
    shapes = {k: tuple(v.shape) for k, v in lstm.state_dict().items()}
    assert list(shapes)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert shapes["weight_ih_l0"] == (80, 10) and shapes["weight_hh_l0"] == (80, 5)
    assert shapes["weight_hr_l0_reverse"] == (5, 20)
    assert shapes["weight_ih_l1"] == (80, 10) and shapes["weight_ih_l1_reverse"] == (80, 10)
    assert len(shapes) == 20
    bound = 1 / np.sqrt(20)
    for p in lstm.parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.8 * bound
    gru = nn.GRU(3, 6, bias=False)
    assert [k for k, _ in gru.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(gru.weight_ih_l0.shape) == (18, 3)
    assert len(lstm.all_weights) == 4 and len(lstm.all_weights[0]) == 5
    lstm.flatten_parameters()
    assert repr(lstm) == "LSTM(10, 20, proj_size=5, num_layers=2, bidirectional=True)"
    assert repr(nn.RNNCell(2, 3, nonlinearity="relu")) == "RNNCell(2, 3, nonlinearity=relu)"
    cell = nn.LSTMCell(3, 5)
    assert tuple(cell.weight_ih.shape) == (20, 3) and tuple(cell.bias_hh.shape) == (20,)


def test_module_paths():
    from disttorch.nn.modules import rnn, transformer
    from disttorch.nn.modules.activation import MultiheadAttention
    from disttorch.nn.modules.linear import NonDynamicallyQuantizableLinear

    assert rnn.LSTM is nn.LSTM and rnn.RNNBase is nn.RNNBase and rnn.GRUCell is nn.GRUCell
    assert transformer.Transformer is nn.Transformer
    assert MultiheadAttention is nn.MultiheadAttention
    assert isinstance(nn.MultiheadAttention(4, 2).out_proj, NonDynamicallyQuantizableLinear)


# ------------------------------------------------------------------ behaviour
def test_unbatched_batch_first_and_default_states_agree():
    dt.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2)
    x = dt.randn(5, 3)
    out, (h, c) = lstm(x)
    assert tuple(out.shape) == (5, 4) and tuple(h.shape) == (2, 4) and tuple(c.shape) == (2, 4)
    out_b, (_h_b, _) = lstm(x.unsqueeze(1))
    np.testing.assert_allclose(_np(out), _np(out_b.squeeze(1)), rtol=1e-6)
    lstm_bf = nn.LSTM(3, 4, num_layers=2, batch_first=True)
    lstm_bf.load_state_dict(lstm.state_dict())
    xb = dt.randn(5, 2, 3)
    o1, _ = lstm(xb)
    o2, _ = lstm_bf(xb.transpose(0, 1))
    np.testing.assert_allclose(_np(o1), _np(o2.transpose(0, 1)), rtol=1e-6)


def test_packed_output_matches_per_sequence_runs():
    dt.manual_seed(0)
    gru = nn.GRU(3, 4, bidirectional=True)
    seqs = [dt.randn(n, 3) for n in (2, 5, 3)]
    packed = R.pack_sequence(seqs, enforce_sorted=False)
    out, h = gru(packed)
    assert isinstance(out, R.PackedSequence)
    for k, (seq, o) in enumerate(zip(seqs, R.unpack_sequence(out))):
        o_alone, h_alone = gru(seq)
        np.testing.assert_allclose(_np(o), _np(o_alone), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(h[:, k]), _np(h_alone), rtol=1e-5, atol=1e-6)


def test_dropout_between_layers_only_in_training():
    dt.manual_seed(0)
    rnn = nn.RNN(3, 8, num_layers=2, dropout=0.5)
    x = dt.randn(4, 2, 3)
    rnn.eval()
    a, b = _np(rnn(x)[0]), _np(rnn(x)[0])
    np.testing.assert_array_equal(a, b)
    rnn.train()
    assert not np.allclose(_np(rnn(x)[0]), a)
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


def test_errors_as_pytorch():
    lstm = nn.LSTM(4, 5)
    with pytest.raises(
        RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 4, got 3"
    ):
        lstm(dt.randn(3, 2, 3))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 5\), got \[1, 3, 5\]"):
        lstm(dt.randn(3, 2, 4), (dt.zeros(1, 2, 5), dt.zeros(1, 3, 5)))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 5\), got \[1, 3, 5\]"):
        nn.GRU(4, 5)(dt.randn(3, 2, 4), dt.zeros(1, 3, 5))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D tensor instead"):
        nn.RNN(4, 5)(dt.randn(3, 2, 4, 1))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        nn.GRU(4, 5)(dt.randn(3, 2, 4, dtype=dt.float64))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D"):
        nn.GRU(4, 5)(dt.randn(3, 2, 4), dt.zeros(2, 5))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx and cx should also be 2-D"):
        lstm(dt.randn(3, 4), (dt.zeros(1, 1, 5), dt.zeros(1, 1, 5)))
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(4, 5, proj_size=5)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(4, 5, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(4, 5, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(4, 5, dropout=1.5)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 3 expected 4"):
        nn.LSTMCell(4, 5)(dt.randn(2, 3))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        nn.GRUCell(4, 5)(dt.randn(2, 4), dt.zeros(3, 5))
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.LSTMCell(4, 5)(dt.randn(1, 2, 4))


# ------------------------------------------------------------------ nn.utils.rnn
def test_pad_sequence_sides_and_layout():
    a, b = dt.tensor([1.0, 2.0, 3.0]), dt.tensor([4.0])
    np.testing.assert_array_equal(R.pad_sequence([a, b]).numpy(), [[1, 4], [2, 0], [3, 0]])
    np.testing.assert_array_equal(
        R.pad_sequence([a, b], batch_first=True, padding_value=-1).numpy(), [[1, 2, 3], [4, -1, -1]]
    )
    np.testing.assert_array_equal(
        R.pad_sequence([a, b], batch_first=True, padding_side="left").numpy(), [[1, 2, 3], [0, 0, 4]]
    )
    with pytest.raises(ValueError, match="padding_side"):
        R.pad_sequence([a, b], padding_side="middle")


def test_pack_pad_roundtrip_and_gradient():
    x = dt.randn(4, 3, 2, requires_grad=True)
    lengths = [2, 4, 1]
    packed = R.pack_padded_sequence(x, lengths, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 0, 2] and packed.unsorted_indices.tolist() == [1, 0, 2]
    padded, lens = R.pad_packed_sequence(packed, total_length=5)
    assert lens.tolist() == lengths and tuple(padded.shape) == (5, 3, 2)
    mask = (np.arange(5)[:, None] < np.array(lengths)[None, :])[..., None]
    np.testing.assert_array_equal(_np(padded)[:4], np.where(mask[:4], _np(x), 0))
    padded.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(mask[:4], (4, 3, 2)).astype(np.float32))
    seqs = [dt.randn(n, 2) for n in (3, 1, 2)]
    for s, u in zip(seqs, R.unpack_sequence(R.pack_sequence(seqs, enforce_sorted=False))):
        np.testing.assert_array_equal(s.numpy(), u.numpy())
    for s, u in zip(seqs, R.unpad_sequence(R.pad_sequence(seqs), dt.tensor([3, 1, 2]))):
        np.testing.assert_array_equal(s.numpy(), u.numpy())
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        R.pack_padded_sequence(x, lengths)
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        R.pack_padded_sequence(x, [3, 0, 1], enforce_sorted=False)
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        R.pad_packed_sequence(packed, total_length=2)
    assert packed.to(dt.float64).data.dtype == dt.float64 and packed.double().sorted_indices is not None


# ------------------------------------------------------------------ parity with PyTorch
def _copy_weights(tm, dm):
    assert list(tm.state_dict()) == list(dm.state_dict())
    dm.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize(
    "cls,kw",
    [
        ("LSTM", {"num_layers": 2, "bidirectional": True}),
        ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}),
        ("GRU", {"num_layers": 2, "bidirectional": True}),
        ("RNN", {"num_layers": 2, "bidirectional": True, "nonlinearity": "relu"}),
        ("RNN", {"num_layers": 1}),
    ],
)
def test_packed_unsorted_parity_with_pytorch(cls, kw):
    torch = pytest.importorskip("torch")
    from torch.nn.utils import rnn as TR

    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 5, **kw).double()
    dm = getattr(nn, cls)(4, 5, **kw).double()
    _copy_weights(tm, dm)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((10, 3, 4))
    lengths = [7, 10, 2]
    d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    h0 = rng.standard_normal((d, 3, kw.get("proj_size") or 5))
    c0 = rng.standard_normal((d, 3, 5))
    results = []
    for lib, utils in ((torch, TR), (dt, R)):
        xt = lib.tensor(x, requires_grad=True)
        h = lib.tensor(h0, requires_grad=True)
        c = lib.tensor(c0, requires_grad=True)
        model = tm if lib is torch else dm
        packed = utils.pack_padded_sequence(xt, lengths, enforce_sorted=False)
        out, hn = model(packed, (h, c) if cls == "LSTM" else h)
        padded, lens = utils.pad_packed_sequence(out, batch_first=True)
        weights = lib.tensor(np.linspace(-1, 1, padded.numel()).reshape(tuple(padded.shape)))
        loss = (padded * weights).sum()
        states = hn if cls == "LSTM" else (hn,)
        for k, s in enumerate(states):
            loss = loss + (s * (k + 1.5)).sum() + (s * s).sum()
        loss.backward()
        results.append(
            (
                padded.detach().numpy(),
                [s.detach().numpy() for s in states],
                lens.tolist(),
                xt.grad.numpy(),
                h.grad.numpy(),
                c.grad.numpy() if cls == "LSTM" else 0,
                [p.grad.numpy() for p in model.parameters()],
            )
        )
    (tp, ts, tl, tgx, tgh, tgc, tgp), (dp, ds, dl, dgx, dgh, dgc, dgp) = results
    assert tl == dl
    _close(tp, dp)
    for a, b in zip(ts, ds):
        _close(a, b)
    _close(tgx, dgx)
    _close(tgh, dgh)
    _close(tgc, dgc)
    for a, b in zip(tgp, dgp):
        _close(a, b)


@pytest.mark.parity
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("batched", ["unbatched", "batch_first"])
def test_unbatched_and_batch_first_parity_float32(cls, batched):
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    kw = {"num_layers": 2, "batch_first": batched == "batch_first"}
    tm, dm = getattr(torch.nn, cls)(3, 6, **kw), getattr(nn, cls)(3, 6, **kw)
    _copy_weights(tm, dm)
    x = np.random.default_rng(1).standard_normal((5, 3) if batched == "unbatched" else (2, 5, 3))
    x = x.astype(np.float32)
    to, th = tm(torch.tensor(x))
    do, dh = dm(dt.tensor(x))
    np.testing.assert_allclose(to.detach().numpy(), _np(do), rtol=1e-5, atol=1e-6)
    th, dh = (th, dh) if cls == "LSTM" else ((th,), (dh,))
    for a, b in zip(th, dh):
        np.testing.assert_allclose(a.detach().numpy(), _np(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_parity(cls):
    torch = pytest.importorskip("torch")
    torch.manual_seed(2)
    tc, dc = getattr(torch.nn, cls)(3, 4).double(), getattr(nn, cls)(3, 4).double()
    _copy_weights(tc, dc)
    rng = np.random.default_rng(2)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    outs = []
    for lib, cell in ((torch, tc), (dt, dc)):
        xt = lib.tensor(x, requires_grad=True)
        hx = (lib.tensor(h), lib.tensor(c)) if cls == "LSTMCell" else lib.tensor(h)
        out = cell(xt, hx)
        first = out[0] if cls == "LSTMCell" else out
        (first.sum() + (out[1].sum() * 2 if cls == "LSTMCell" else 0)).backward()
        unb = cell(lib.tensor(x[0]))
        outs.append(
            (
                first.detach().numpy(),
                xt.grad.numpy(),
                [p.grad.numpy() for p in cell.parameters()],
                (unb[0] if cls == "LSTMCell" else unb).detach().numpy(),
            )
        )
    for a, b in zip(outs[0][:2], outs[1][:2]):
        _close(a, b)
    for a, b in zip(outs[0][2], outs[1][2]):
        _close(a, b)
    _close(outs[0][3], outs[1][3])


@pytest.mark.parity
def test_utils_rnn_parity():
    torch = pytest.importorskip("torch")
    from torch.nn.utils import rnn as TR

    seqs = [np.arange(n * 2, dtype=np.float32).reshape(n, 2) + n for n in (2, 4, 3)]
    for side in ("left", "right"):
        a = TR.pad_sequence(
            [torch.tensor(s) for s in seqs], batch_first=True, padding_side=side, padding_value=-2.0
        )
        b = R.pad_sequence(
            [dt.tensor(s) for s in seqs], batch_first=True, padding_side=side, padding_value=-2.0
        )
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    tp = TR.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    dp = R.pack_sequence([dt.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(tp.data.numpy(), dp.data.numpy())
    assert tp.batch_sizes.tolist() == dp.batch_sizes.tolist()
    assert tp.sorted_indices.tolist() == dp.sorted_indices.tolist()


def test_packing_orders_equal_lengths_as_pytorch(torch):
    """``enforce_sorted=False`` sorts the lengths with ``sort(descending=True)``, as PyTorch:
    its order of equal lengths decides which packed rows a layer's dropout mask falls on."""
    from torch.nn.utils import rnn as TR

    lengths = np.random.default_rng(2).integers(1, 6, 150)
    x = np.random.default_rng(3).standard_normal((150, 5, 2)).astype(np.float32)
    tp = TR.pack_padded_sequence(torch.from_numpy(x), torch.from_numpy(lengths), True, enforce_sorted=False)
    dp = R.pack_padded_sequence(dt.from_numpy(x), dt.from_numpy(lengths), True, enforce_sorted=False)
    assert tp.sorted_indices.tolist() == dp.sorted_indices.tolist()
    np.testing.assert_array_equal(tp.data.numpy(), dp.data.numpy())
    lstm = nn.LSTM(2, 3, 2, dropout=0.5)
    dt.manual_seed(1)
    out = lstm(dp)[0].data
    dt.manual_seed(1)
    again = lstm(
        R.pack_padded_sequence(
            dt.from_numpy(x[dp.sorted_indices.numpy()]), lengths[dp.sorted_indices.numpy()], True
        )
    )[0].data
    np.testing.assert_array_equal(out.detach().numpy(), again.detach().numpy())
