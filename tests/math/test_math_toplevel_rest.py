"""The last top-level names of torch and Tensor methods: nn.functional's torch.* spellings
(ATen argument orders and integer reductions), the recurrent ATen forms, memory formats,
buffer-backed creation, streams/events, the debug flags and the Tensor attribute methods."""

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _t(torch, a):
    return torch.tensor(np.asarray(a))


def _close(a, b, atol=1e-6):
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a.detach().numpy(), b, atol=atol, rtol=1e-5)


# -- nn.functional under torch.* -------------------------------------------------------------


@pytest.mark.parity
def test_functional_aliases_match_torch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 6))
    w = rng.standard_normal((4, 3, 3, 3))
    _close(
        dt.conv2d(dt.tensor(x), dt.tensor(w), None, 1, 1),
        torch.conv2d(_t(torch, x), _t(torch, w), None, 1, 1),
    )
    _close(dt.layer_norm(dt.tensor(x), (6,)), torch.layer_norm(_t(torch, x), (6,)))
    _close(dt.max_pool2d(dt.tensor(x), 2), torch.max_pool2d(_t(torch, x), 2))
    _close(dt.selu(dt.tensor(x)), torch.selu(_t(torch, x)))
    a = rng.standard_normal((1, 4, 2, 2))
    _close(dt.pixel_shuffle(dt.tensor(a), 2), torch.pixel_shuffle(_t(torch, a), 2))
    _close(
        dt.cosine_similarity(dt.tensor(x), dt.tensor(x + 1)),
        torch.cosine_similarity(_t(torch, x), _t(torch, x + 1)),
    )
    _close(dt.threshold(dt.tensor(x), 0.1, 20.0), torch.threshold(_t(torch, x), 0.1, 20.0))


@pytest.mark.parity
def test_aten_argument_orders_and_integer_reductions(torch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    rm, rv = np.zeros(3), np.ones(3)
    ours = dt.batch_norm(
        dt.tensor(x), dt.tensor(w), dt.tensor(b), dt.tensor(rm), dt.tensor(rv), True, 0.1, 1e-5, False
    )
    theirs = torch.batch_norm(
        _t(torch, x), _t(torch, w), _t(torch, b), _t(torch, rm), _t(torch, rv), True, 0.1, 1e-5, False
    )
    _close(ours, theirs)
    table, idx = rng.standard_normal((5, 2)), np.array([[0, 4], [2, 2]])
    _close(dt.embedding(dt.tensor(table), dt.tensor(idx)), torch.embedding(_t(torch, table), _t(torch, idx)))
    p, q = np.log(rng.dirichlet(np.ones(3), 4)), rng.dirichlet(np.ones(3), 4)
    for red in (0, 1, 2):
        _close(dt.kl_div(dt.tensor(p), dt.tensor(q), red), torch.kl_div(_t(torch, p), _t(torch, q), red))
    y = (rng.random(4) > 0.5) * 2.0 - 1
    _close(
        dt.margin_ranking_loss(dt.tensor(x[:, 0]), dt.tensor(x[:, 1]), dt.tensor(y), 0.2, 2),
        torch.margin_ranking_loss(_t(torch, x[:, 0]), _t(torch, x[:, 1]), _t(torch, y), 0.2, 2),
    )
    t = rng.random((4, 3))
    _close(
        dt.binary_cross_entropy_with_logits(dt.tensor(x), dt.tensor(t), None, dt.tensor(w.__abs__()), 0),
        torch.binary_cross_entropy_with_logits(_t(torch, x), _t(torch, t), None, _t(torch, abs(w)), 0),
    )
    with pytest.raises(ValueError, match="reduction must be 0"):
        dt.kl_div(dt.tensor(p), dt.tensor(q), 3)


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_flat_parameter_recurrent_forms_match_torch(torch, mode, bidirectional):
    rng = np.random.default_rng(2)
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    n_in, H, L, T, B = 3, 4, 2, 5, 2
    D = 2 if bidirectional else 1
    params = []
    for layer in range(L):
        for _ in range(D):
            inp = n_in if layer == 0 else H * D
            params += [
                rng.standard_normal((gates * H, inp)) * 0.3,
                rng.standard_normal((gates * H, H)) * 0.3,
                rng.standard_normal(gates * H) * 0.1,
                rng.standard_normal(gates * H) * 0.1,
            ]
    x = rng.standard_normal((B, T, n_in))
    h0 = rng.standard_normal((L * D, B, H))
    ours_p = [dt.tensor(p) for p in params]
    theirs_p = [_t(torch, p) for p in params]
    if mode == "lstm":
        c0 = rng.standard_normal((L * D, B, H))
        ours = dt.lstm(
            dt.tensor(x), (dt.tensor(h0), dt.tensor(c0)), ours_p, True, L, 0.0, False, bidirectional, True
        )
        theirs = torch.lstm(
            _t(torch, x), (_t(torch, h0), _t(torch, c0)), theirs_p, True, L, 0.0, False, bidirectional, True
        )
    else:
        ours = getattr(dt, mode)(
            dt.tensor(x), dt.tensor(h0), ours_p, True, L, 0.0, False, bidirectional, True
        )
        theirs = getattr(torch, mode)(
            _t(torch, x), _t(torch, h0), theirs_p, True, L, 0.0, False, bidirectional, True
        )
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        _close(a, b, atol=1e-10)


@pytest.mark.parity
def test_recurrent_cells_match_torch_and_gradcheck(torch):
    rng = np.random.default_rng(3)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    for name, gates in (("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)):
        w_ih, w_hh = rng.standard_normal((gates * 4, 3)), rng.standard_normal((gates * 4, 4))
        b_ih, b_hh = rng.standard_normal(gates * 4), rng.standard_normal(gates * 4)
        hx = (dt.tensor(h), dt.tensor(c)) if name == "lstm_cell" else dt.tensor(h)
        thx = (_t(torch, h), _t(torch, c)) if name == "lstm_cell" else _t(torch, h)
        ours = getattr(dt, name)(
            dt.tensor(x), hx, dt.tensor(w_ih), dt.tensor(w_hh), dt.tensor(b_ih), dt.tensor(b_hh)
        )
        theirs = getattr(torch, name)(
            _t(torch, x), thx, _t(torch, w_ih), _t(torch, w_hh), _t(torch, b_ih), _t(torch, b_hh)
        )
        for a, b in zip(
            ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)
        ):
            _close(a, b, atol=1e-10)
    xs = dt.tensor(x, requires_grad=True)
    w_ih = dt.tensor(rng.standard_normal((16, 3)), requires_grad=True)
    assert gradcheck(
        lambda a, w: dt.lstm_cell(
            a, (dt.tensor(h), dt.tensor(c)), w, dt.tensor(rng.standard_normal((16, 4)) * 0 + 0.1)
        )[0],
        (xs, w_ih),
    )


def test_unknown_name_is_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'conv9d'"):
        dt.conv9d  # noqa: B018
    assert not hasattr(dt, "ALIASES") and not hasattr(dt, "resolve")


def test_feature_dropout_zeroes_whole_channels():
    dt.manual_seed(0)
    x = dt.ones(8, 6, 5)
    y = dt.feature_dropout(x, 0.5, True)
    per_channel = y.numpy()
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()
    assert dt.feature_dropout(x, 0.5, False) is x
    z = dt.ones(4, 3)
    assert dt.dropout_(z, 0.0, True) is z


# -- memory formats, buffers, creation with strides ------------------------------------------


@pytest.mark.parity
def test_memory_formats_are_torch_shaped(torch):
    assert repr(dt.channels_last) == repr(torch.channels_last) == "torch.channels_last"
    assert dt.legacy_contiguous_format is dt.contiguous_format
    assert isinstance(dt.preserve_format, dt.memory_format)
    import pickle

    assert pickle.loads(pickle.dumps(dt.channels_last_3d)) is dt.channels_last_3d
    assert dt.zeros(2, 3).contiguous(memory_format=dt.contiguous_format).shape == (2, 3)


@pytest.mark.parity
def test_empty_strided_and_permuted_have_torchs_strides(torch):
    assert dt.empty_strided((2, 3), (1, 2)).stride() == torch.empty_strided((2, 3), (1, 2)).stride()
    a = dt.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1))
    assert a.stride() == torch.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1)).stride()
    assert a.dim_order() == (0, 2, 3, 1)
    a.fill_(1.0)
    assert float(a.sum()) == 120.0
    with pytest.raises(RuntimeError, match="not a permutation"):
        dt.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match="mismatch in length"):
        dt.empty_strided((2, 3), (1,))


@pytest.mark.parity
def test_frombuffer_shares_memory_and_checks_lengths(torch):
    buf = bytearray(np.arange(4, dtype=np.int32).tobytes())
    t = dt.frombuffer(buf, dtype=dt.int32)
    assert t.tolist() == torch.frombuffer(bytearray(buf), dtype=torch.int32).tolist() == [0, 1, 2, 3]
    t[0] = 7
    assert np.frombuffer(buf, dtype=np.int32)[0] == 7
    assert dt.frombuffer(buf, dtype=dt.int32, count=2, offset=4).tolist() == [1, 2]
    with pytest.raises(ValueError, match="multiple of element size"):
        dt.frombuffer(b"\x01\x02", dtype=dt.float32)


@pytest.mark.parity
def test_asarray_shares_or_copies_as_asked(torch):
    n = np.ones(3)
    a = dt.asarray(n)
    n[0] = 5
    assert a.tolist() == [5.0, 1.0, 1.0] and a.dtype == dt.float64
    t = dt.ones(2)
    assert dt.asarray(t) is t
    c = dt.asarray(t, copy=True)
    c[0] = 3
    assert t.tolist() == [1.0, 1.0]
    assert dt.asarray([1, 2.0]).dtype == dt.float32 and torch.asarray([1, 2.0]).dtype == torch.float32
    assert dt.asarray(np.ones(2, np.float32), dtype=dt.float64).dtype == dt.float64
    with pytest.raises(ValueError, match="copy=False"):
        dt.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        dt.asarray(np.ones(2, np.float32), dtype=dt.float64, copy=False)


def test_to_dlpack_round_trips_through_numpy():
    t = dt.arange(4.0)
    cap = dt.to_dlpack(t)
    assert type(cap).__name__ == "PyCapsule"
    assert np.from_dlpack(t._data).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="must be Tensor"):
        dt.to_dlpack(np.ones(2))


@pytest.mark.parity
def test_typename_and_is_inference(torch):
    assert dt.typename(dt.zeros(1, dtype=dt.int64)) == torch.typename(torch.zeros(1, dtype=torch.int64))
    assert dt.typename(1) == torch.typename(1) == "int"
    assert dt.typename(np.ndarray) == torch.typename(np.ndarray) == "numpy.ndarray"
    assert dt.is_inference(dt.zeros(1)) is False and dt.zeros(1).is_inference() is False
    assert not dt.is_inference_mode_enabled()
    with dt.inference_mode():
        assert dt.is_inference_mode_enabled()
        with dt.inference_mode(False):
            assert not dt.is_inference_mode_enabled()
    assert not dt.is_inference_mode_enabled()


# -- streams, events, errors, device modules -------------------------------------------------


@pytest.mark.parity
def test_stream_and_event_as_the_cpu_build(torch):
    s, e = dt.Stream(), dt.Event()
    assert repr(s) == repr(torch.Stream()) and repr(e) == repr(torch.Event())
    assert s.query() is True and e.query() is True
    s.synchronize()
    with pytest.raises(RuntimeError, match="doesn't support events"):
        e.record()
    with pytest.raises(RuntimeError, match="doesn't support events"):
        s.record_event()
    with pytest.raises(RuntimeError, match="cuda"):
        dt.Stream("cuda")
    assert issubclass(dt.OutOfMemoryError, RuntimeError) and issubclass(dt.AcceleratorError, RuntimeError)


@pytest.mark.parity
def test_get_device_module(torch):
    assert dt.get_device_module("cuda") is dt.cuda
    assert dt.get_device_module() is dt.cpu and dt.get_device_module(dt.device("cpu")) is dt.cpu
    with pytest.raises(RuntimeError, match="does not have a corresponding module"):
        dt.get_device_module("tpu")
    assert dt.GradScaler is dt.amp.GradScaler
    assert dt.ModuleDict is dt.nn.ModuleDict and dt.ParameterDict is dt.nn.ParameterDict


# -- debug flags -------------------------------------------------------------------------------


@pytest.mark.parity
def test_deterministic_debug_mode_is_a_view_of_the_flags(torch):
    try:
        for mode, want in (("warn", 1), ("error", 2), ("default", 0), (1, 1), (0, 0)):
            dt.set_deterministic_debug_mode(mode)
            torch.set_deterministic_debug_mode(mode)
            assert dt.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode() == want
            assert dt.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
        with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
            dt.set_deterministic_debug_mode("x")
    finally:
        dt.set_deterministic_debug_mode(0)
        torch.set_deterministic_debug_mode(0)


def test_warn_always_and_flush_denormal():
    assert dt.is_warn_always_enabled() is False
    dt.set_warn_always(True)
    assert dt.is_warn_always_enabled() is True
    dt.set_warn_always(False)
    assert dt.set_flush_denormal(False) is True
    assert dt.set_flush_denormal(True) is False  # unsupported here: NumPy cannot set the FPU bit
    with pytest.raises(TypeError, match="must be bool"):
        dt.set_warn_always(1)


def test_anomaly_detection_names_the_function_that_made_nan():
    x = dt.tensor([0.0, 1.0], requires_grad=True)
    assert not dt.is_anomaly_enabled()
    dt.set_anomaly_enabled(True)
    try:
        assert dt.is_anomaly_enabled() and dt.is_anomaly_check_nan_enabled()
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            (x.sqrt() * 0).sum().backward()  # 0 * inf = nan in SqrtBackward
    finally:
        dt.set_anomaly_enabled(False)
    (x.sqrt() * 0).sum().backward()  # off: no error
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = dt.autograd.detect_anomaly()
    with ctx:
        assert dt.is_anomaly_enabled()
    assert not dt.is_anomaly_enabled()
    with dt.autograd.set_detect_anomaly(True, check_nan=False):
        assert dt.is_anomaly_enabled() and not dt.is_anomaly_check_nan_enabled()
        (x.sqrt() * 0).sum().backward()
    assert not dt.is_anomaly_enabled() and dt.is_anomaly_check_nan_enabled()


# -- Tensor attributes and methods -------------------------------------------------------------


@pytest.mark.parity
def test_tensor_attribute_methods_match_torch(torch):
    a = np.arange(6.0).reshape(2, 3)
    t, tt = dt.tensor(a), _t(torch, a)
    _close(t.H, tt.H)
    _close(dt.zeros(2, 2, 3).mH, torch.zeros(2, 2, 3).mH)
    _close(t.adjoint(), tt.adjoint())
    _close(dt.adjoint(t), torch.adjoint(tt))
    assert (t.itemsize, t.nbytes) == (tt.itemsize, tt.nbytes)
    assert t.char().dtype == dt.int8
    assert t.get_device() == tt.get_device() == -1 and dt.get_device(t) == -1
    assert t.is_cpu and not t.is_nested
    assert t.T.dim_order() == tt.T.dim_order() and t.dim_order() == tt.dim_order()
    assert t.grad_dtype == dt.float64
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        dt.zeros(2, 2, 2).H  # noqa: B018
    with pytest.raises(AssertionError, match="XPU"):
        t.xpu()
    assert not dt.is_distributed(t)


@pytest.mark.parity
def test_resize_family(torch):
    a, b = dt.arange(6.0), torch.arange(6.0)
    a.resize_(2, 2)
    b.resize_(2, 2)
    _close(a, b)
    a.resize_(3, 3)
    assert a.shape == (3, 3) and a.reshape(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    c = dt.zeros(4)
    c.resize_as_(dt.zeros(2, 2))
    assert c.shape == (2, 2) and dt.resize_as_(c, dt.zeros(1, 4)).shape == (1, 4)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        dt.zeros(2, requires_grad=True).resize_(3)
    x = dt.arange(6.0, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(2, 3)
    y.sum().backward()
    assert x.grad.tolist() == [1.0] * 6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="requested resize to 2x2"):
            x.resize(2, 2)
    d = dt.tensor([1.0], requires_grad=True) * 2
    assert dt.detach_(d) is d and d.grad_fn is None


def test_random_fillers_have_their_distributions():
    dt.manual_seed(0)
    n = 200_000
    geo = dt.empty(n).geometric_(0.25).numpy()
    assert geo.min() >= 1 and abs(geo.mean() - 4.0) < 0.05
    ln = dt.empty(n, dtype=dt.float64).log_normal_(0.5, 0.25).numpy()
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01
    ca = dt.empty(n, dtype=dt.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(ca) - 1.0) < 0.05 and abs(np.percentile(ca, 75) - 3.0) < 0.1
    with pytest.raises(RuntimeError, match="geometric_ expects p"):
        dt.empty(2).geometric_(1.5)
    with pytest.raises(RuntimeError, match="sigma > 0.0"):
        dt.empty(2).cauchy_(0.0, -1.0)
    g = dt.Generator().manual_seed(5)
    a = dt.empty(4).log_normal_(generator=g)
    g.manual_seed(5)
    assert a.tolist() == dt.empty(4).log_normal_(generator=g).tolist()


@pytest.mark.parity
def test_hardshrink_and_prelu_methods(torch):
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 3, 4)), rng.random(3)
    _close(dt.tensor(x).hardshrink(0.7), _t(torch, x).hardshrink(0.7))
    _close(dt.tensor(x).prelu(dt.tensor(w)), _t(torch, x).prelu(_t(torch, w)))
    _close(dt.prelu(dt.tensor(x), dt.tensor(w)), torch.prelu(_t(torch, x), _t(torch, w)))
    xs = dt.tensor(x, requires_grad=True)
    ws = dt.tensor(w, requires_grad=True)
    assert gradcheck(lambda a, b: a.prelu(b), (xs, ws))
    assert gradcheck(lambda a: a.hardshrink(0.3), (xs,))


def test_bfloat16_legacy_type():
    pytest.importorskip("ml_dtypes")
    t = dt.BFloat16Tensor(2, 3)
    assert t.dtype == dt.bfloat16 and t.shape == (2, 3)
    assert isinstance(dt.zeros(2).bfloat16(), dt.BFloat16Tensor)
    assert dt.zeros(2).bfloat16().type() == "torch.BFloat16Tensor"


def test_set_autocast_gpu_dtype_sets_cuda_autocast_dtype():
    before = dt.get_autocast_gpu_dtype()
    try:
        dt.set_autocast_gpu_dtype(dt.bfloat16)
        assert dt.get_autocast_dtype("cuda") == dt.bfloat16
    finally:
        dt.set_autocast_gpu_dtype(before)
