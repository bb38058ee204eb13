"""The Tensor object itself: attributes, dtypes and conversion, repr in PyTorch's layout,
identity hashing and the Python protocol (len, iter, bool, int/float/index, format)."""

import copy
import pickle

import numpy as np
import pytest

import disttorch as dt


# ---------------------------------------------------------------------- attributes
def test_shape_size_dim_numel():
    x = dt.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and isinstance(x.shape, dt.Size)
    assert repr(x.shape) == "disttorch.Size([2, 3, 4])"
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == 3 and x.ndim == 3 and x.numel() == 24 and x.shape.numel() == 24
    assert dt.tensor(5.0).shape == () and dt.tensor(5.0).numel() == 1
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of "
        r"\[-3, 2\], but got 3\)",
    ):
        x.size(3)


def test_dtype_device_and_defaults():
    assert dt.tensor([1.5]).dtype == dt.float32
    assert dt.tensor([1]).dtype == dt.int64
    assert dt.tensor([True]).dtype == dt.bool
    assert dt.tensor([1, 2.5]).dtype == dt.float32
    assert dt.tensor(np.array([1.5])).dtype == dt.float64  # NumPy data keeps its dtype
    assert dt.tensor(np.float64(1.5)).dtype == dt.float64
    assert dt.tensor([1], dtype=dt.float16).dtype == dt.float16
    x = dt.zeros(2)
    assert x.device == dt.device("cpu") and str(x.device) == "cpu" and x.device.type == "cpu"
    assert not x.is_cuda and x.is_floating_point() and not dt.tensor([1]).is_floating_point()
    assert x.type() == "torch.FloatTensor" and dt.tensor([1]).type() == "torch.LongTensor"


def test_autograd_attributes():
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad is None and w.grad_fn is None
    y = w * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert dt.tensor([1.0]).is_leaf and not dt.tensor([1.0]).requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        dt.tensor([1]).requires_grad_()
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(
        RuntimeError,
        match=r"attempting to assign a gradient of size '\[3\]' to a "
        r"tensor of size '\[2\]'",
    ):
        w.grad = dt.zeros(3)
    w.grad = dt.ones(2)
    assert w.grad.tolist() == [1.0, 1.0]


def test_data_shares_memory_but_not_the_graph_or_version():
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), w.detach().numpy())
    d.add_(1)
    assert w.tolist() == [2.0, 3.0] and w._version == 0  # .data escapes version tracking
    w.detach().add_(1)
    assert w._version == 1  # detach() shares the version counter
    w.data = dt.tensor([7.0, 8.0])
    assert w.tolist() == [7.0, 8.0] and w.requires_grad


def test_transposes_T_and_mT():
    x = dt.arange(6.0).view(2, 3)
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert dt.zeros(4, 2, 3).mT.shape == (4, 3, 2)
    assert dt.zeros(4, 2, 3).T.shape == (3, 2, 4)
    with pytest.raises(
        RuntimeError, match="tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
    ):
        dt.zeros(3).mT


# ---------------------------------------------------------------------- conversion
def test_item_tolist_numpy():
    assert dt.tensor([[3.5]]).item() == 3.5 and isinstance(dt.tensor([2]).item(), int)
    assert isinstance(dt.tensor(True).item(), bool)
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        dt.tensor([1.0, 2.0]).item()
    assert dt.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert dt.tensor(2.5).tolist() == 2.5
    x = dt.zeros(3)
    x.numpy()[1] = 5  # numpy() shares memory
    assert x.tolist() == [0.0, 5.0, 0.0]
    w = dt.zeros(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Can't call numpy\(\) on Tensor that requires grad. "
        r"Use tensor.detach\(\).numpy\(\) instead.",
    ):
        w.numpy()
    assert w.detach().numpy().shape == (2,)


@pytest.mark.parametrize(
    "convert", [np.asarray, np.array, lambda t: np.exp(t), lambda t: np.asarray(t, dtype=np.float64)]
)
def test_numpy_conversion_of_a_tensor_that_requires_grad_raises(torch, convert):
    for lib in (torch, dt):
        for t in (
            lib.ones(2, requires_grad=True),
            lib.nn.Parameter(lib.ones(2)),
            lib.ones(2, requires_grad=True) * 2,
        ):
            with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
                convert(t)
    assert not hasattr(dt.ones(1, requires_grad=True), "__array_interface__")
    assert np.asarray(dt.ones(2, requires_grad=True).detach()).tolist() == [1.0, 1.0]
    assert np.asarray(dt.ones(2, requires_grad=True).bfloat16().detach().float()).shape == (2,)


def _numpy_without_grad_mode(lib) -> list:
    """Without grad mode (``no_grad``, a custom Function's forward) a tensor that requires
    grad converts to NumPy, as in PyTorch (a Function computing with NumPy in its forward)."""

    class NumpySin(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return lib.tensor(np.sin(x.numpy())), np.asarray(x).sum()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad, _):
            return grad * ctx.saved_tensors[0].cos()

    x = lib.tensor([0.5, 1.0], requires_grad=True)
    with lib.no_grad():
        out = [x.numpy().tolist(), np.asarray(x).tolist()]
    y, total = NumpySin.apply(x)
    y.sum().backward()
    return out + [y.tolist(), float(total), x.grad.tolist()]


def test_numpy_of_a_tensor_that_requires_grad_without_grad_mode():
    assert _numpy_without_grad_mode(dt)[:2] == [[0.5, 1.0], [0.5, 1.0]]


@pytest.mark.parity
def test_numpy_without_grad_mode_as_pytorchs(torch):
    ours, theirs = _numpy_without_grad_mode(dt), _numpy_without_grad_mode(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)  # float32 sin/cos: within an ulp
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-6)


def test_from_numpy_shares_memory_and_checks_dtype():
    a = np.arange(4, dtype=np.int32)
    t = dt.from_numpy(a)
    assert t.dtype == dt.int32
    a[0] = 9
    assert t[0].item() == 9
    with pytest.raises(TypeError, match="can't convert np.ndarray of type float128"):
        dt.from_numpy(np.zeros(2, dtype=np.longdouble))
    assert np.asarray(t) is a or np.shares_memory(np.asarray(t), a)


def test_to_and_dtype_shortcuts():
    x = dt.tensor([1.7, -1.7])
    assert x.to(dt.float64).dtype == dt.float64
    assert x.to("cpu") is x and x.to(dt.float32) is x
    assert x.to("cpu", dt.float64).dtype == dt.float64
    assert x.to(dt.tensor([1])).dtype == dt.int64
    assert x.to(dtype=dt.float16).dtype == dt.float16
    assert x.double().dtype == dt.float64 and x.half().dtype == dt.float16
    assert x.long().tolist() == [1, -1] and x.int().dtype == dt.int32
    assert dt.tensor([0.0, 2.0]).bool().tolist() == [False, True]
    assert dt.tensor([1, 0]).float().tolist() == [1.0, 0.0]
    assert x.to(dt.float32, copy=True) is not x
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        x.to("cuda")


def test_float_cast_is_differentiable():
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    (x.double() * 3).sum().backward()
    assert x.grad.dtype == dt.float32 and x.grad.tolist() == [3.0, 3.0]


def test_clone_contiguous_is_contiguous():
    x = dt.arange(6.0).view(2, 3)
    c = x.clone()
    assert not np.shares_memory(c.numpy(), x.numpy()) and c.tolist() == x.tolist()
    assert x.is_contiguous() and not x.t().is_contiguous() and x.t().contiguous().is_contiguous()
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3)


# ---------------------------------------------------------------------- Python protocol
def test_len_iter_bool():
    x = dt.arange(6).view(3, 2)
    assert len(x) == 3
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(dt.tensor(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(dt.tensor(1))
    assert bool(dt.tensor([3])) and not bool(dt.tensor(0.0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(dt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(dt.tensor([]))


def test_number_conversions_and_index():
    assert int(dt.tensor([3.7])) == 3 and float(dt.tensor([[2]])) == 2.0
    assert [10, 20, 30][dt.tensor(1)] == 20
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [1, 2][dt.tensor(1.0)]
    assert f"{dt.tensor(2.5):.2f}" == "2.50"
    assert "2.5000" in f"{dt.tensor([2.5, 1])}"


def test_hash_is_identity_so_tensors_work_in_sets_and_dicts():
    a, b = dt.tensor(1.0), dt.tensor(1.0)
    assert hash(a) != hash(b) or a is b
    assert len({a, b}) == 2
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"
    assert a in {a} and b not in {a}


def test_pickle_and_deepcopy():
    w = dt.tensor([[1.0, 2.0]], requires_grad=True)
    w.grad = dt.ones(1, 2)
    p = pickle.loads(pickle.dumps(w))
    assert p.tolist() == [[1.0, 2.0]] and p.requires_grad and p.is_leaf
    c = copy.deepcopy(w)
    assert c.tolist() == w.tolist() and c.requires_grad and c.grad.tolist() == [[1.0, 1.0]]
    assert not np.shares_memory(c.detach().numpy(), w.detach().numpy())
    assert not pickle.loads(pickle.dumps(w * 2)).requires_grad  # non-leaves arrive detached


def test_deepcopy_keeps_a_dense_layout():
    # as PyTorch's: a transposed or channels-last tensor (and its .grad) keeps its strides, so a
    # copied model runs the same products (the same bits) as the original
    w = dt.randn(4, 6).t().requires_grad_()
    w.grad = dt.randn(4, 6).t()
    c = copy.deepcopy(w)
    assert c.stride() == w.stride() == (1, 6) and c.grad.stride() == (1, 6)
    p = dt.nn.Parameter(w.detach())
    p.grad = w.grad
    c = copy.deepcopy(p)  # a parameter is cloned, without its .grad (PyTorch's Parameter.__deepcopy__)
    assert c.stride() == (1, 6) and c.grad is None
    x = dt.randn(2, 3, 4, 5).permute(0, 2, 3, 1)
    assert copy.deepcopy(x).stride() == x.stride() and copy.deepcopy(x).tolist() == x.tolist()


# ---------------------------------------------------------------------- repr
@pytest.mark.parametrize(
    "make,expected",
    [
        (lambda: dt.tensor([[1.0, 2.0]], requires_grad=True), "tensor([[1., 2.]], requires_grad=True)"),
        (lambda: dt.tensor([1.0, 2.0], requires_grad=True) * 2, "tensor([2., 4.], grad_fn=<MulBackward0>)"),
        (lambda: dt.tensor([1.5, -2.25, 10.0]), "tensor([ 1.5000, -2.2500, 10.0000])"),
        (lambda: dt.tensor([1.0, 2.0, 10.0]), "tensor([ 1.,  2., 10.])"),
        (lambda: dt.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
        (lambda: dt.tensor(3.5), "tensor(3.5000)"),
        (lambda: dt.tensor([1, 2], dtype=dt.int32), "tensor([1, 2], dtype=disttorch.int32)"),
        (lambda: dt.tensor([1.0, 2.0], dtype=dt.float64), "tensor([1., 2.], dtype=disttorch.float64)"),
        (lambda: dt.tensor([True, False]), "tensor([ True, False])"),
        (lambda: dt.tensor([[1, 2], [30, 4]]), "tensor([[ 1,  2],\n        [30,  4]])"),
        (lambda: dt.zeros(2, 0), "tensor([], size=(2, 0))"),
        (lambda: dt.zeros(0), "tensor([])"),
        (lambda: dt.tensor([float("nan"), float("inf"), 1.0]), "tensor([nan, inf, 1.])"),
        (lambda: dt.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    ],
)
def test_repr_matches_pytorch_layout(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_repr_wraps_long_rows_and_summarises_big_matrices():
    r = repr(dt.arange(30.0))
    lines = r.split("\n")
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert lines[1].startswith("        ")
    big = repr(dt.zeros(50, 50))
    assert "..." in big and big.count("\n") == 6


def test_set_printoptions_matches_pytorch_layout():
    x = dt.tensor([1.23456, 2.5, -3.0])
    try:
        dt.set_printoptions(precision=2)
        assert repr(x) == "tensor([ 1.23,  2.50, -3.00])"
        dt.set_printoptions(threshold=5, edgeitems=1)
        assert repr(dt.arange(10)) == "tensor([0,  ..., 9])"
        dt.set_printoptions(profile="default", sci_mode=True)
        assert repr(dt.tensor([1.5])) == "tensor([1.5000e+00])"
        dt.set_printoptions(profile="full")
        assert "..." not in repr(dt.arange(2000))
        with pytest.raises(ValueError, match="profile must be one of"):
            dt.set_printoptions(profile="tiny")
    finally:
        dt.set_printoptions(profile="default")
    assert repr(x) == "tensor([ 1.2346,  2.5000, -3.0000])"


def _edge_reprs(lib):
    """Reprs PyTorch words specially: forced scientific notation (signs aligned), empty
    tensors of a non-default dtype (named: no element to tell it by), a sparse layout."""
    x = lib.tensor([-0.12045, 0.29091, -0.18543])
    try:
        lib.set_printoptions(sci_mode=True)
        sci = repr(x)
    finally:
        lib.set_printoptions(profile="default")
    empties = [lib.tensor([], dtype=d) for d in (lib.int64, lib.bool, lib.float32, lib.float64)]
    sparse = repr(lib.tensor([[0.0, 1.0]]).to_sparse()).split("layout=")[1]
    return [sci, *map(repr, empties), repr(lib.zeros(0, 2, dtype=lib.int64)), sparse]


def test_edge_reprs():
    assert _edge_reprs(dt) == [
        "tensor([-1.2045e-01,  2.9091e-01, -1.8543e-01])",
        "tensor([], dtype=disttorch.int64)",
        "tensor([], dtype=disttorch.bool)",
        "tensor([])",
        "tensor([], dtype=disttorch.float64)",
        "tensor([], size=(0, 2), dtype=disttorch.int64)",
        "disttorch.sparse_coo)",
    ]


@pytest.mark.parity
def test_edge_reprs_as_pytorch(monkeypatch):
    real = pytest.importorskip("torch")
    monkeypatch.setitem(__import__("sys").modules, "torch", dt)  # disttorch's reprs then say torch.
    ours = _edge_reprs(dt)
    monkeypatch.setitem(__import__("sys").modules, "torch", real)
    assert ours == _edge_reprs(real)


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
@pytest.mark.parametrize(
    "name,make",
    [
        ("float_mixed", lambda L: L.tensor([[1.5, -2.25, 10.0], [1e-3, 0.0, 7.0]])),
        ("ints", lambda L: L.arange(-5, 30).view(5, 7)),
        ("bools", lambda L: L.tensor([[True, False], [False, True]])),
        ("sci", lambda L: L.tensor([1e-8, 1.0, 1e5])),
        ("big", lambda L: L.arange(5000.0).view(50, 100) / 3),
        ("long_row", lambda L: L.linspace(-1, 1, 40)),
        ("float64_grad", lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True) * 2),
        ("int32", lambda L: L.tensor([1, 2], dtype=L.int32)),
        ("scalar", lambda L: L.tensor(-0.5)),
        ("empty", lambda L: L.zeros(3, 0, 2)),
        ("nan_inf", lambda L: L.tensor([float("nan"), -float("inf"), 2.0])),
    ],
)
def test_repr_matches_pytorch(torch, name, make):
    assert repr(make(dt)) == repr(make(torch)).replace("torch.", "disttorch.")


# ---------------------------------------------------------------------- top-level numel, detach, is_floating_point
def test_top_level_numel_detach_is_floating_point():
    t = dt.ones(2, 3, requires_grad=True)
    assert dt.numel(t) == 6 and isinstance(dt.numel(t), int)
    assert dt.is_floating_point(t) and not dt.is_floating_point(dt.tensor([1]))
    d = dt.detach(t)
    assert not d.requires_grad and d.grad_fn is None and d._data is t._data
    for name in ("numel", "is_floating_point", "detach"):
        with pytest.raises(
            TypeError, match=f"{name}\\(\\): argument 'input' \\(position 1\\) must be Tensor, not int"
        ):
            getattr(dt, name)(3)


CONTAINS_CASES = [
    (lambda L: 3.0 in L.tensor([1.0, 3.0]), True),
    (lambda L: 5 in L.tensor([[1, 3], [4, 5]]), True),
    (lambda L: 7 in L.tensor([[1, 3], [4, 5]]), False),
    (lambda L: L.tensor(3.0) in L.tensor([1.0, 3.0]), True),
    (lambda L: L.tensor([1.0, 3.0]) in L.tensor([[1.0, 3.0], [0.0, 0.0]]), True),
    (lambda L: 2 in L.tensor(2), True),
    (lambda L: True in L.tensor([0, 1]), True),
]


@pytest.mark.parametrize("i", range(len(CONTAINS_CASES)))
def test_in_tensor_asks_whether_any_element_equals(i):
    case, expected = CONTAINS_CASES[i]
    assert case(dt) is expected


def test_in_tensor_refuses_other_objects():
    with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar"):
        "a" in dt.tensor([1.0])  # noqa: B015 - the membership test is what raises


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(CONTAINS_CASES)))
def test_in_tensor_matches_pytorch(torch, i):
    case, _ = CONTAINS_CASES[i]
    assert case(dt) == case(torch)


def test_size_slices_and_concatenations_are_sizes():
    s = dt.Size([2, 3, 4])
    for v, want in (
        (s[1:], (3, 4)),
        (s[::-1], (4, 3, 2)),
        (s + (5,), (2, 3, 4, 5)),
        ((5,) + s, (5, 2, 3, 4)),
        (s * 2, (2, 3, 4) * 2),
        (2 * s, (2, 3, 4) * 2),
        (dt.Size([1]) + dt.Size([2]), (1, 2)),
    ):
        assert type(v) is dt.Size and v == want
    assert type(s[0]) is int and s[-1] == 4 and dt.zeros(2, 5).shape[1:].numel() == 5
    with pytest.raises(TypeError):
        s + [1]


@pytest.mark.parametrize(
    "args, error, says",
    [
        (("cpu:99999999999999999999",), RuntimeError, "Could not parse device index"),
        (("cpu:2147483648",), RuntimeError, "Could not parse device index"),
        (("cpu:01",), RuntimeError, "Invalid device string"),
        (("cpu:\u0663",), RuntimeError, "Invalid device string"),
        (("cpu:\u00b2",), RuntimeError, "Invalid device string"),
        (("cpu", True), TypeError, "must be int, not bool"),
        (("cpu", 1.0), TypeError, "must be int, not float"),
        (("cpu", 2**63), ValueError, "Overflow when unpacking long long"),
    ],
)
def test_device_index_is_checked_as_pytorch_checks_it(args, error, says):
    with pytest.raises(error, match=says):
        dt.device(*args)
    assert dt.device("cpu:2147483647").index == 2**31 - 1
    assert dt.device("cpu", np.int64(1)).index == 1 == dt.device("cpu", dt.tensor(1)).index


def test_to_refuses_an_unknown_keyword_as_pytorch(torch):
    # to(foo=1) returned the tensor unchanged
    with pytest.raises(TypeError) as ours:
        dt.ones(2).to(foo=1)
    with pytest.raises(TypeError) as theirs:
        torch.ones(2).to(foo=1)
    assert str(ours.value) == str(theirs.value)
