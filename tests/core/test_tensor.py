"""The Tensor object itself: attributes, dtypes and conversion, repr in PyTorch's layout,
identity hashing and the Python protocol (len, iter, bool, int/float/index, format)."""
import copy
import pickle

import numpy as np
import pytest

import disttorch as torch


# ---------------------------------------------------------------------- attributes
def test_shape_size_dim_numel():
    x = torch.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and isinstance(x.shape, torch.Size)
    assert repr(x.shape) == "disttorch.Size([2, 3, 4])"
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == 3 and x.ndim == 3 and x.numel() == 24 and x.shape.numel() == 24
    assert torch.tensor(5.).shape == () and torch.tensor(5.).numel() == 1
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                          r"\[-3, 2\], but got 3\)"):
        x.size(3)


def test_dtype_device_and_defaults():
    assert torch.tensor([1.5]).dtype == torch.float32
    assert torch.tensor([1]).dtype == torch.int64
    assert torch.tensor([True]).dtype == torch.bool
    assert torch.tensor([1, 2.5]).dtype == torch.float32
    assert torch.tensor(np.array([1.5])).dtype == torch.float64  # NumPy data keeps its dtype
    assert torch.tensor(np.float64(1.5)).dtype == torch.float64
    assert torch.tensor([1], dtype=torch.float16).dtype == torch.float16
    x = torch.zeros(2)
    assert x.device == torch.device("cpu") and str(x.device) == "cpu" and x.device.type == "cpu"
    assert not x.is_cuda and x.is_floating_point() and not torch.tensor([1]).is_floating_point()
    assert x.type() == "torch.FloatTensor" and torch.tensor([1]).type() == "torch.LongTensor"


def test_autograd_attributes():
    w = torch.tensor([1., 2.], requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad is None and w.grad_fn is None
    y = w * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert torch.tensor([1.]).is_leaf and not torch.tensor([1.]).requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        torch.tensor([1]).requires_grad_()
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' to a "
                                           r"tensor of size '\[2\]'"):
        w.grad = torch.zeros(3)
    w.grad = torch.ones(2)
    assert w.grad.tolist() == [1., 1.]


def test_data_shares_memory_but_not_the_graph_or_version():
    w = torch.tensor([1., 2.], requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), w.detach().numpy())
    d.add_(1)
    assert w.tolist() == [2., 3.] and w._version == 0  # .data escapes version tracking
    w.detach().add_(1)
    assert w._version == 1  # detach() shares the version counter
    w.data = torch.tensor([7., 8.])
    assert w.tolist() == [7., 8.] and w.requires_grad


def test_transposes_T_and_mT():
    x = torch.arange(6.).view(2, 3)
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert torch.zeros(4, 2, 3).mT.shape == (4, 3, 2)
    assert torch.zeros(4, 2, 3).T.shape == (3, 2, 4)
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of "
                                           "matrices. Got 1-D tensor."):
        torch.zeros(3).mT


# ---------------------------------------------------------------------- conversion
def test_item_tolist_numpy():
    assert torch.tensor([[3.5]]).item() == 3.5 and isinstance(torch.tensor([2]).item(), int)
    assert isinstance(torch.tensor(True).item(), bool)
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        torch.tensor([1., 2.]).item()
    assert torch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert torch.tensor(2.5).tolist() == 2.5
    x = torch.zeros(3)
    x.numpy()[1] = 5  # numpy() shares memory
    assert x.tolist() == [0., 5., 0.]
    w = torch.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        w.numpy()
    assert w.detach().numpy().shape == (2,)


def test_from_numpy_shares_memory_and_checks_dtype():
    a = np.arange(4, dtype=np.int32)
    t = torch.from_numpy(a)
    assert t.dtype == torch.int32
    a[0] = 9
    assert t[0].item() == 9
    with pytest.raises(TypeError, match="can't convert np.ndarray of type uint16"):
        torch.from_numpy(np.zeros(2, dtype=np.uint16))
    assert np.asarray(t) is a or np.shares_memory(np.asarray(t), a)


def test_to_and_dtype_shortcuts():
    x = torch.tensor([1.7, -1.7])
    assert x.to(torch.float64).dtype == torch.float64
    assert x.to("cpu") is x and x.to(torch.float32) is x
    assert x.to("cpu", torch.float64).dtype == torch.float64
    assert x.to(torch.tensor([1])).dtype == torch.int64
    assert x.to(dtype=torch.float16).dtype == torch.float16
    assert x.double().dtype == torch.float64 and x.half().dtype == torch.float16
    assert x.long().tolist() == [1, -1] and x.int().dtype == torch.int32
    assert torch.tensor([0., 2.]).bool().tolist() == [False, True]
    assert torch.tensor([1, 0]).float().tolist() == [1., 0.]
    assert x.to(torch.float32, copy=True) is not x
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        x.to("cuda")


def test_float_cast_is_differentiable():
    x = torch.tensor([1., 2.], requires_grad=True)
    (x.double() * 3).sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.tolist() == [3., 3.]


def test_clone_contiguous_is_contiguous():
    x = torch.arange(6.).view(2, 3)
    c = x.clone()
    assert not np.shares_memory(c.numpy(), x.numpy()) and c.tolist() == x.tolist()
    assert x.is_contiguous() and not x.t().is_contiguous() and x.t().contiguous().is_contiguous()
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3)


# ---------------------------------------------------------------------- Python protocol
def test_len_iter_bool():
    x = torch.arange(6).view(3, 2)
    assert len(x) == 3
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(torch.tensor(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(torch.tensor(1))
    assert bool(torch.tensor([3])) and not bool(torch.tensor(0.))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(torch.tensor([]))


def test_number_conversions_and_index():
    assert int(torch.tensor([3.7])) == 3 and float(torch.tensor([[2]])) == 2.0
    assert [10, 20, 30][torch.tensor(1)] == 20
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [1, 2][torch.tensor(1.)]
    assert f"{torch.tensor(2.5):.2f}" == "2.50"
    assert "2.5000" in f"{torch.tensor([2.5, 1])}"


def test_hash_is_identity_so_tensors_work_in_sets_and_dicts():
    a, b = torch.tensor(1.), torch.tensor(1.)
    assert hash(a) != hash(b) or a is b
    assert len({a, b}) == 2
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"
    assert a in {a} and b not in {a}


def test_pickle_and_deepcopy():
    w = torch.tensor([[1., 2.]], requires_grad=True)
    w.grad = torch.ones(1, 2)
    p = pickle.loads(pickle.dumps(w))
    assert p.tolist() == [[1., 2.]] and p.requires_grad and p.is_leaf
    c = copy.deepcopy(w)
    assert c.tolist() == w.tolist() and c.requires_grad and c.grad.tolist() == [[1., 1.]]
    assert not np.shares_memory(c.detach().numpy(), w.detach().numpy())
    assert not pickle.loads(pickle.dumps(w * 2)).requires_grad  # non-leaves arrive detached


# ---------------------------------------------------------------------- repr
@pytest.mark.parametrize("make,expected", [
    (lambda: torch.tensor([[1., 2.]], requires_grad=True), "tensor([[1., 2.]], requires_grad=True)"),
    (lambda: torch.tensor([1., 2.], requires_grad=True) * 2, "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    (lambda: torch.tensor([1.5, -2.25, 10.]), "tensor([ 1.5000, -2.2500, 10.0000])"),
    (lambda: torch.tensor([1., 2., 10.]), "tensor([ 1.,  2., 10.])"),
    (lambda: torch.tensor([1e-5, 1.]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: torch.tensor(3.5), "tensor(3.5000)"),
    (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=disttorch.int32)"),
    (lambda: torch.tensor([1., 2.], dtype=torch.float64), "tensor([1., 2.], dtype=disttorch.float64)"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([[1, 2], [30, 4]]), "tensor([[ 1,  2],\n        [30,  4]])"),
    (lambda: torch.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: torch.zeros(0), "tensor([])"),
    (lambda: torch.tensor([float("nan"), float("inf"), 1.]), "tensor([nan, inf, 1.])"),
    (lambda: torch.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
])
def test_repr_matches_pytorch_layout(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_repr_wraps_long_rows_and_summarises_big_matrices():
    r = repr(torch.arange(30.))
    lines = r.split("\n")
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert lines[1].startswith("        ")
    big = repr(torch.zeros(50, 50))
    assert "..." in big and big.count("\n") == 6


def test_set_printoptions_matches_pytorch_layout():
    x = torch.tensor([1.23456, 2.5, -3.0])
    try:
        torch.set_printoptions(precision=2)
        assert repr(x) == "tensor([ 1.23,  2.50, -3.00])"
        torch.set_printoptions(threshold=5, edgeitems=1)
        assert repr(torch.arange(10)) == "tensor([0,  ..., 9])"
        torch.set_printoptions(profile="default", sci_mode=True)
        assert repr(torch.tensor([1.5])) == "tensor([1.5000e+00])"
        torch.set_printoptions(profile="full")
        assert "..." not in repr(torch.arange(2000))
        with pytest.raises(ValueError, match="profile must be one of"):
            torch.set_printoptions(profile="tiny")
    finally:
        torch.set_printoptions(profile="default")
    assert repr(x) == "tensor([ 1.2346,  2.5000, -3.0000])"
