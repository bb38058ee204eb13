"""Indexing: reads with every kind of index, writes (``x[i] = v``), gather/scatter and the
index_* / masked_* ops: values, views, gradients (float64 finite differences, repeated
indices accumulating) and error messages; parity with PyTorch when it is installed."""

import numpy as np
import pytest
from parity_helpers import IDX, MASK, assert_case_matches, setitem

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck


def dbl(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return dt.tensor(rng.standard_normal(shape), dtype=dt.float64, requires_grad=True)


A = np.arange(24).reshape(2, 3, 4)
INDICES = [
    0,
    -1,
    (1, 2),
    (1, 2, 3),
    slice(None, None, 2),
    (slice(None), 1),
    (Ellipsis, 1),
    (None, 0),
    (0, None, slice(1, 3)),
    (slice(None), None, Ellipsis, None),
    [1, 0, 1],
    (slice(None), [0, 2, 2]),
    ([0, 1], [1, 2]),
    ([0, 1], slice(None), [3, 0]),
    A > 10,
    (slice(None), A[0] > 5),
    (Ellipsis, [True, False, True, True]),
    (1, slice(1, None)),
    ([[0, 1], [1, 0]],),
]


@pytest.mark.parametrize("k", range(len(INDICES)))
def test_getitem_matches_numpy(k):
    idx = INDICES[k]
    x = dt.tensor(A)
    tidx = (
        tuple(dt.tensor(i) if isinstance(i, np.ndarray) else i for i in idx)
        if isinstance(idx, tuple)
        else (dt.tensor(idx) if isinstance(idx, np.ndarray) else idx)
    )
    np.testing.assert_array_equal(x[tidx].numpy(), A[idx])


def test_integers_apply_before_arrays_as_in_pytorch():
    # NumPy would treat 0 as advanced too and put the advanced dims first: shape (2, 3).
    x = dt.tensor(A)
    assert x[0, :, [1, 2]].shape == (3, 2)
    np.testing.assert_array_equal(x[0, :, [1, 2]].numpy(), A[0][:, [1, 2]])
    np.testing.assert_array_equal(
        x[1, None, dt.tensor([True, False, True])].numpy(), A[1][None, [True, False, True]]
    )
    assert gradcheck(lambda t: t[0, :, [1, 1]], (dbl(2, 3, 4),))
    y = dt.zeros(2, 3, 4)
    y[0, :, [1, 2]] = dt.arange(6.0).view(3, 2)
    np.testing.assert_array_equal(y[0].numpy()[:, 1:3], np.arange(6.0).reshape(3, 2))


def test_basic_index_is_a_view_advanced_is_a_copy():
    x = dt.zeros(3, 4)
    v = x[1]
    assert np.shares_memory(v.numpy(), x.numpy()) and v._version_box is x._version_box
    s = x[0, 1]  # 0-dim, still a view as in PyTorch
    assert s.shape == () and np.shares_memory(s.numpy(), x.numpy())
    assert not np.shares_memory(x[[0, 1]].numpy(), x.numpy())
    assert not np.shares_memory(x[x > 0].numpy(), x.numpy())
    assert x[dt.tensor(2)].shape == (4,)  # a 0-dim integer tensor acts as an int


def test_index_errors():
    x = dt.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[5]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool"):
        x[dt.tensor([0.0, 1.0])]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    shapes = r"^shape mismatch: indexing tensors could not be broadcast together with shapes \[2, 2\], \[3\]$"
    with pytest.raises(IndexError, match=shapes):
        x[dt.zeros(2, 2, dtype=dt.long), dt.arange(3)]


def test_getitem_gradients_accumulate_repeated_indices():
    x = dbl(3, 4)
    y = x[[0, 0, 2], [1, 1, 3]]
    (y * dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64)).sum().backward()
    expected = np.zeros((3, 4))
    expected[0, 1] = 3.0
    expected[2, 3] = 3.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


GETITEM_GRADS = [
    lambda x: x[1],
    lambda x: x[:, 1:3],
    lambda x: x[..., ::2],
    lambda x: x[None, 0, -1],
    lambda x: x[[0, 2, 0]],
    lambda x: x[:, [1, 1, 3]],
    lambda x: x[dt.tensor([[0, 1], [1, 1]])],
    lambda x: x[x > 0],
    lambda x: x[[0, 1], [2, 2]],
    lambda x: x[1:, dt.tensor([0, 0])],
]


@pytest.mark.parametrize("k", range(len(GETITEM_GRADS)))
def test_getitem_gradcheck(k):
    assert gradcheck(GETITEM_GRADS[k], (dbl(3, 4),))


def test_getitem_second_order():
    assert gradgradcheck(lambda x: x[[0, 0, 1]] ** 3, (dbl(3, 2),))
    assert gradgradcheck(lambda x: x[1:, 0] ** 3, (dbl(3, 2),))


# ---------------------------------------------------------------------- setitem
def test_setitem_values_and_broadcasting():
    x = dt.zeros(3, 4)
    x[0] = 1
    x[1, 1:3] = dt.tensor([2.0, 3.0])
    x[:, 3] = dt.tensor([7.0, 8.0, 9.0])
    x[x == 0] = -1
    x[[2, 2], [0, 1]] = dt.tensor(5.0)
    np.testing.assert_array_equal(x.numpy(), [[1, 1, 1, 7], [-1, 2, 3, 8], [5, 5, -1, 9]])
    v = x._version
    x[...] = 0
    assert x._version == v + 1 and float(x.abs().sum()) == 0.0


def test_setitem_errors():
    x = dt.zeros(3, 4)
    with pytest.raises(  # a basic index copies into a view: expand's words
        RuntimeError,
        match=r"^The expanded size of the tensor \(4\) must match the existing size \(3\) at "
        r"non-singleton dimension 0.  Target sizes: \[4\].  Tensor sizes: \[3\]$",
    ) as info:
        x[0] = dt.ones(3)
    assert info.value.__suppress_context__  # no NumPy error shown above it
    with pytest.raises(  # an advanced one puts: the value's leading 1s are dropped first
        RuntimeError,
        match=r"^shape mismatch: value tensor of shape \[3\] cannot be "
        r"broadcast to indexing result of shape \[1, 4\]$",
    ):
        x[[0]] = dt.ones(1, 3)
    leaf = dt.zeros(3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."
    ):
        leaf[0] = 1.0
    with dt.no_grad():
        leaf[0] = 1.0  # allowed without recording
    assert leaf.tolist() == [1.0, 0.0, 0.0]


def test_setitem_gradient_to_target_and_value():
    x = dbl(3, 4)
    v = dbl(4, seed=1)
    y = x * 2
    y[1] = v * 3
    assert y.grad_fn.name() == "CopySlices"
    (y * dt.arange(12.0).view(3, 4).double()).sum().backward()
    w = np.arange(12.0).reshape(3, 4)
    gx = 2 * w
    gx[1] = 0
    np.testing.assert_allclose(x.grad.numpy(), gx)
    np.testing.assert_allclose(v.grad.numpy(), 3 * w[1])


def test_setitem_into_tensor_without_grad_makes_it_part_of_the_graph():
    v = dt.tensor(2.0, requires_grad=True)
    buf = dt.zeros(3)
    buf[1] = v
    assert buf.requires_grad and not buf.is_leaf
    (buf * dt.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert v.grad.item() == 10.0


def _setitem_fn(index, value_shape):
    def fn(x, v):
        y = x * 1
        y[index] = v
        return y * y

    return fn


@pytest.mark.parametrize(
    "index,value_shape",
    [
        (1, (4,)),
        ((slice(None), 2), (3,)),
        ((slice(0, 2), slice(1, 3)), (1, 2)),
        (([0, 2], [1, 3]), (2,)),
        ((Ellipsis, 0), ()),
        ((np.arange(12).reshape(3, 4) % 3 == 0), (4,)),
    ],
)
def test_setitem_gradcheck(index, value_shape):
    x, v = dbl(3, 4), dbl(*value_shape, seed=2)
    if isinstance(index, np.ndarray):
        index = dt.tensor(index)
        v = dbl(4, seed=2)
    assert gradcheck(_setitem_fn(index, value_shape), (x, v))


# ---------------------------------------------------------------------- gather / scatter
def test_gather_values_and_errors():
    x = dt.tensor([[1, 2], [3, 4]])
    idx = dt.tensor([[0, 0], [1, 0]])
    assert dt.gather(x, 1, idx).tolist() == [[1, 1], [4, 3]]
    assert x.gather(0, dt.tensor([[1, 0]])).tolist() == [[3, 2]]
    # index smaller than input in a non-gather dim: only its own positions are read
    assert dt.arange(12).view(3, 4).gather(0, dt.tensor([[2], [1]])).tolist() == [[8], [4]]
    assert x.gather(1, idx.int()).tolist() == [[1, 1], [4, 3]]  # int32 indices too (PyTorch 2.13)
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int32/int64 for index"):
        x.gather(1, idx.float())
    with pytest.raises(RuntimeError, match="index 2 is out of bounds for dimension 1 with size 2"):
        x.gather(1, dt.tensor([[2, 0], [0, 0]]))
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions"):
        x.gather(1, dt.tensor([0, 1]))


def test_scatter_and_scatter_add_values():
    src = dt.arange(1.0, 11.0).view(2, 5)
    idx = dt.tensor([[0, 1, 2, 0]])
    out = dt.zeros(3, 5).scatter(0, idx, src)
    assert out.tolist() == [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]]
    assert dt.zeros(3, 5).scatter(1, dt.tensor([[0], [2]]), 7.0)[:2, :3].tolist() == [[7, 0, 0], [0, 0, 7]]
    add = dt.ones(3).scatter_add(0, dt.tensor([0, 0, 2, 0]), dt.tensor([1.0, 2.0, 3.0, 4.0]))
    assert add.tolist() == [8, 1, 4]
    red = dt.ones(3).scatter(0, dt.tensor([0, 0]), dt.tensor([1.0, 2.0]), reduce="add")
    assert red.tolist() == [4, 1, 1]
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        dt.zeros(3).scatter_add(0, dt.tensor([0]), dt.tensor([1]))


def test_gather_scatter_gradcheck():
    idx = dt.tensor([[0, 2, 1], [2, 2, 0]])
    assert gradcheck(lambda x: x.gather(0, idx), (dbl(3, 3),))
    assert gradcheck(lambda x: x.gather(1, idx[:, :2]), (dbl(2, 3),))
    unique = dt.tensor([[0, 2, 1], [2, 1, 0]])  # scatter's writes to one place race
    assert gradcheck(lambda x, s: x.scatter(0, unique, s), (dbl(3, 3), dbl(2, 4, seed=1)))
    assert gradcheck(lambda x, s: x.scatter_add(1, idx, s), (dbl(2, 3), dbl(2, 3, seed=1)))
    assert gradcheck(lambda x: x.scatter(1, unique, 0.5), (dbl(2, 3),))
    assert gradgradcheck(
        lambda x, s: (x.scatter_add(1, idx, s) ** 2).gather(1, idx), (dbl(2, 3), dbl(2, 3, seed=1))
    )


# ---------------------------------------------------------------------- index_* ops
def test_index_select_add_fill_values():
    x = dt.arange(12.0).view(3, 4)
    idx = dt.tensor([2, 0, 2])
    np.testing.assert_array_equal(x.index_select(0, idx).numpy(), x.numpy()[[2, 0, 2]])
    np.testing.assert_array_equal(dt.index_select(x, 1, idx).numpy(), x.numpy()[:, [2, 0, 2]])
    added = dt.zeros(3, 2).index_add(0, idx, dt.ones(3, 2), alpha=2)
    assert added.tolist() == [[2, 2], [0, 0], [4, 4]]
    filled = dt.zeros(2, 3).index_fill(1, dt.tensor([0, 2]), -1.0)
    assert filled.tolist() == [[-1, 0, -1], [-1, 0, -1]]
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, dt.tensor([3]))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, dt.tensor([[0]]))


def test_index_ops_gradcheck():
    idx = dt.tensor([2, 0, 2])
    assert gradcheck(lambda x: x.index_select(1, idx), (dbl(2, 3),))
    assert gradcheck(lambda x, s: x.index_add(0, idx, s, alpha=1.5), (dbl(3, 2), dbl(3, 2, seed=1)))
    assert gradcheck(lambda x, v: x.index_fill(1, dt.tensor([1]), v), (dbl(2, 3), dbl(seed=1)))


# ---------------------------------------------------------------------- masks
def test_masked_fill_and_select_values():
    x = dt.arange(6.0).view(2, 3)
    mask = dt.tensor([True, False, True])
    assert x.masked_fill(mask, -1.0).tolist() == [[-1, 1, -1], [-1, 4, -1]]
    assert dt.masked_fill(x, x > 3, dt.tensor(0.0)).tolist() == [[0, 1, 2], [3, 0, 0]]
    assert x.masked_select(mask).tolist() == [0, 2, 3, 5]
    with pytest.raises(RuntimeError, match="only supports boolean masks, but got mask with dtype"):
        x.masked_fill(dt.tensor([1, 0, 1]), 0.0)
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor"):
        x.masked_fill(mask, dt.tensor([1.0, 2.0]))


def test_mask_ops_gradcheck():
    mask = dt.tensor([[True, False, True], [False, False, True]])
    assert gradcheck(lambda x, v: x.masked_fill(mask, v), (dbl(2, 3), dbl(seed=1)))
    assert gradcheck(lambda x: x.masked_fill(mask[0], 2.0), (dbl(2, 3),))
    assert gradcheck(lambda x: x.masked_select(mask), (dbl(2, 3),))
    assert gradcheck(lambda x: x.masked_select(mask), (dbl(3),))  # broadcast input


# ---------------------------------------------------------------------- take / nonzero
def test_take_take_along_dim_nonzero():
    x = dt.tensor([[4.0, 3.0], [1.0, 2.0]])
    assert dt.take(x, dt.tensor([0, 3])).tolist() == [4, 2]
    order = dt.tensor([[1, 0], [0, 1]])
    assert dt.take_along_dim(x, order, 1).tolist() == [[3, 4], [1, 2]]
    assert dt.take_along_dim(x, dt.tensor([3, 0])).tolist() == [2, 4]
    assert dt.take_along_dim(x, dt.tensor([[0], [1]]), 1).tolist() == [[4], [2]]
    assert dt.tensor([[0, 1], [2, 0]]).nonzero().tolist() == [[0, 1], [1, 0]]
    rows, cols = dt.nonzero(dt.tensor([[0, 1], [2, 0]]), as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert dt.argwhere(dt.tensor([0, 3, 0, 1])).tolist() == [[1], [3]]
    assert gradcheck(lambda x: dt.take_along_dim(x, order, 0), (dbl(2, 2),))
    assert gradcheck(lambda x: dt.take(x, dt.tensor([[3, 3], [0, 1]])), (dbl(2, 2),))


def test_setitem_second_order():
    fn = _setitem_fn((slice(None), dt.tensor([2, 0])), (3, 2))
    assert gradgradcheck(fn, (dbl(3, 4), dbl(3, 2, seed=3)))


def test_index_put_and_index_put_():
    x = dt.zeros(3, 2)
    rows, cols = dt.tensor([0, 2, 0]), dt.tensor([1, 0, 1])
    assert x.index_put((rows, cols), dt.tensor(1.0)).tolist() == [[0, 1], [0, 0], [1, 0]]
    acc = dt.index_put(x, (rows, cols), dt.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert acc.tolist() == [[0, 4], [0, 0], [2, 0]] and x.abs().sum().item() == 0
    x.index_put_((rows,), dt.tensor([5.0, 6.0]))
    assert x.tolist() == [[5, 6], [0, 0], [5, 6]]
    assert gradcheck(lambda t, v: t.index_put((rows, cols), v, accumulate=True), (dbl(3, 2), dbl(3, seed=1)))
    assert gradcheck(lambda t, v: t.index_put((dt.tensor([2, 0]),), v), (dbl(3, 2), dbl(2, seed=1)))


# ---------------------------------------------------------------------- parity with PyTorch
# name -> (fn(lib, *leaves), input shapes)
PARITY_CASES = {
    "getitem_basic": (lambda L, x: x[1:, None, ..., ::2], [(3, 4)]),
    "getitem_int_list": (lambda L, x: x[[0, 0, 2], 1:], [(3, 4)]),
    "getitem_pairs": (lambda L, x: x[[0, 2, 0], [1, 1, 3]], [(3, 4)]),
    "getitem_int_then_list": (lambda L, x: x[1, :, [2, 0, 2]], [(2, 3, 4)]),
    "setitem_int_then_list": (
        lambda L, x, v: setitem(x * 1, (0, slice(None), [1, 3]), v),
        [(2, 3, 4), (3, 2)],
    ),
    "getitem_tensor": (lambda L, x: x[L.tensor(IDX)], [(3, 4)]),
    "getitem_mask": (lambda L, x: x[L.tensor(MASK)], [(3, 4)]),
    "getitem_row_mask": (lambda L, x: x[:, L.tensor(MASK[0])], [(3, 4)]),
    "gather": (lambda L, x: x.gather(0, L.tensor(IDX)), [(3, 3)]),
    "scatter_add": (lambda L, x, s: x.scatter_add(1, L.tensor(IDX), s), [(2, 3), (2, 3)]),
    "scatter_value": (lambda L, x: x.scatter(1, L.tensor([[0], [2]]), 1.5), [(2, 3)]),
    "index_select": (lambda L, x: x.index_select(1, L.tensor([3, 0, 3])), [(3, 4)]),
    "index_add": (lambda L, x, s: x.index_add(0, L.tensor([2, 0, 2]), s, alpha=2), [(3, 2), (3, 2)]),
    "index_fill": (lambda L, x: x.index_fill(1, L.tensor([0, 2]), -1.0), [(2, 3)]),
    "masked_fill": (lambda L, x: x.masked_fill(L.tensor(MASK), 0.5), [(3, 4)]),
    "masked_fill_bcast": (lambda L, x: x.masked_fill(L.tensor(MASK[0]), 0.5), [(3, 4)]),
    "masked_select": (lambda L, x: x.masked_select(L.tensor(MASK)), [(3, 4)]),
    "take": (lambda L, x: L.take(x, L.tensor([[0, 5], [5, 11]])), [(3, 4)]),
    "take_along_dim": (lambda L, x: L.take_along_dim(x, L.tensor([[1], [0]]), 1), [(2, 3)]),
    "setitem": (lambda L, x, v: setitem(x * 1, (slice(None), 1), v) * x, [(3, 4), (3,)]),
    "setitem_mask": (lambda L, x, v: setitem(x * 2, L.tensor(MASK), v), [(3, 4), ()]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_CASES))
def test_op_matches_pytorch(name):
    assert_case_matches(name, *PARITY_CASES[name])


ADVANCED_INDEXES = {
    "mask_after_slice": lambda L, x: x[:, L.tensor([True, False, True, True])],
    "ints_after_slice": lambda L, x: x[:, L.tensor([0, 2])],
    "ints_last": lambda L, x: x[..., L.tensor([[0, 1]])],
    "mask_first": lambda L, x: x[L.tensor([True, False, True])],
    "ints_both": lambda L, x: x[L.tensor([0, 1]), L.tensor([1, 2])],
}


@pytest.mark.parametrize("name", sorted(ADVANCED_INDEXES))
def test_advanced_index_results_are_contiguous(name):
    x = dt.arange(12.0).reshape(3, 4)
    out = ADVANCED_INDEXES[name](dt, x)
    assert out.is_contiguous()
    assert out.view(-1).tolist() == out.reshape(-1).tolist()


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(ADVANCED_INDEXES))
def test_advanced_index_strides_match_pytorch(torch, name):
    ours = ADVANCED_INDEXES[name](dt, dt.arange(12.0).reshape(3, 4))
    theirs = ADVANCED_INDEXES[name](torch, torch.arange(12.0).reshape(3, 4))
    assert ours.stride() == theirs.stride() and ours.tolist() == theirs.tolist()


def test_an_empty_list_index_selects_nothing():
    """``scores[i, []] = -inf`` (transformers' no-repeat-ngram processor with no banned
    token yet): an empty list is an empty int64 index, as in PyTorch; an empty float
    tensor is still refused."""
    s = dt.zeros(2, 5)
    s[0, []] = -1.0
    assert s.sum().item() == 0.0 and dt.arange(5.0)[[]].shape == (0,)
    with pytest.raises(IndexError, match="must be long, int, byte or bool"):
        s[0, dt.tensor([])] = 3.0


INDEX_CASES = {  # index dtypes and out-of-range (negative) entries, as PyTorch's kernels check them
    "index_add_negative": lambda L: L.zeros(5).index_add_(0, L.tensor([0, -1]), L.tensor([1.0, 2.0])),
    "index_add_too_large": lambda L: L.zeros(5).index_add(0, L.tensor([5]), L.tensor([1.0])),
    "index_select_negative": lambda L: L.arange(5.0).index_select(0, L.tensor([-1])),
    "index_select_negative_dim1": lambda L: L.zeros(2, 5).index_select(1, L.tensor([-1])),
    "index_copy_negative": lambda L: L.zeros(5).index_copy_(0, L.tensor([-1]), L.tensor([1.0])),
    "index_copy_int32": lambda L: L.zeros(3).index_copy(0, L.tensor([0], dtype=L.int32), L.ones(1)),
    "index_fill_negative": lambda L: L.zeros(5).index_fill_(0, L.tensor([-1, -5]), 2.0),
    "index_fill_too_negative": lambda L: L.zeros(5).index_fill_(0, L.tensor([-6]), 2.0),
    "index_fill_float": lambda L: L.zeros(3).index_fill(0, L.tensor([0.0]), 1.0),
    "index_add_float": lambda L: L.zeros(3).index_add_(0, L.tensor([0.0]), L.tensor([2.0])),
    "index_select_float": lambda L: L.zeros(3).index_select(0, L.tensor([0.0])),
    "index_reduce_negative": lambda L: L.zeros(5).index_reduce_(0, L.tensor([-1]), L.tensor([1.0]), "prod"),
    "put_accumulate_negative": lambda L: L.zeros(2, 2).put_(
        L.tensor([-1, -1]), L.tensor([1.0, 2.0]), accumulate=True
    ),
    "scatter_int32": lambda L: L.zeros(3).scatter_(0, L.tensor([0, 2], dtype=L.int32), L.tensor([2.0, 3.0])),
    "gather_int32": lambda L: L.arange(3.0).gather(0, L.tensor([2], dtype=L.int32)),
    "scatter_float": lambda L: L.zeros(3).scatter_(0, L.tensor([0.0]), L.tensor([2.0])),
    "take_int32": lambda L: L.arange(3.0).take(L.tensor([0], dtype=L.int32)),
}


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("name", sorted(INDEX_CASES))
def test_index_checks_match_pytorch(torch, name):
    def answer(L):
        try:
            return INDEX_CASES[name](L).tolist()
        except (IndexError, RuntimeError) as e:
            return type(e).__name__, str(e)

    assert answer(dt) == answer(torch)


def _set(dtype, index, value):
    def run(L):
        x = L.zeros(2, 3, dtype=getattr(L, dtype))
        x[index] = value
        return x

    return run


SCALAR_CONVERSION_CASES = {  # a number into a dtype: wrapped, truncated, or PyTorch's overflow error
    "set_uint8_minus_one": _set("uint8", 0, -1),
    "set_uint8_minus_255": _set("uint8", 0, -255),
    "set_uint8_256": _set("uint8", 0, 256),
    "set_uint8_minus_half": _set("uint8", 0, -0.5),
    "set_int8_127_5": _set("int8", 0, 127.5),
    "set_int8_minus_128_9": _set("int8", 0, -128.9),
    "set_int32_float": _set("int32", 0, -2.9),
    "set_int64_nan": _set("int64", 0, float("nan")),
    "set_int64_1e19": _set("int64", 0, 1e19),
    "set_float32_1e39": _set("float32", 0, 1e39),
    "set_float32_inf": _set("float32", 0, float("inf")),
    "set_float16_1e5": _set("float16", 0, 1e5),  # (16-bit floats: inf, no error)
    "set_float32_complex": _set("float32", 0, 1 + 2j),
    "set_float32_real_complex": _set("float32", 0, 2 + 0j),
    "set_complex64_1e39": _set("complex64", 0, 1e39),
    "set_bool_nan": _set("bool", 0, float("nan")),
    "set_negative_step": _set("float32", (slice(None), slice(None, None, -1)), 1.0),
    "set_list": _set("float32", 0, [1.0, 2.0, 3.0]),
    "set_ndarray": _set("int64", 0, np.arange(3)),
    "set_numpy_float32": _set("int64", 0, np.float32(2)),
    "set_numpy_int": _set("int64", 0, np.int64(2)),
    "fill_uint8_256": lambda L: L.zeros(2, dtype=L.uint8).fill_(256),
    "fill_float16_65520": lambda L: L.zeros(2, dtype=L.float16).fill_(65520),
    "full_int8_200": lambda L: L.full((2,), 200.0, dtype=L.int8),
    "full_bfloat16_1e39": lambda L: L.full((2,), 1e39, dtype=L.bfloat16),
    "full_uint8_minus_one": lambda L: L.full((2,), -1, dtype=L.uint8),
    "masked_fill_int32": lambda L: L.zeros(2, dtype=L.int32).masked_fill(L.tensor([True, False]), 2**31),
    "index_int8": lambda L: L.arange(3.0)[L.tensor([0, -1], dtype=L.int8)],
    "index_int16": lambda L: L.arange(3.0)[L.tensor([0], dtype=L.int16)],
    "index_int32": lambda L: L.arange(3.0)[L.tensor([0, -1], dtype=L.int32)],
    "tensor_uint8_300": lambda L: L.tensor(300, dtype=L.uint8),
    "tensor_uint8_minus_one": lambda L: L.tensor([[-1, 2]], dtype=L.uint8),
    "tensor_int32_nan": lambda L: L.tensor([float("nan")], dtype=L.int32),
    "tensor_uint8_negative_float": lambda L: L.tensor([2.5, -1.5], dtype=L.uint8),
    "set_advanced_other_dtype": lambda L: _set("float32", ([0, 1],), L.ones(3, dtype=L.float64))(L),
    "set_mask_other_dtype_0d": lambda L: _set("float32", L.tensor([True, False]), L.tensor(1, dtype=L.int64))(
        L
    ),
    "set_basic_other_dtype": lambda L: _set("float32", 0, L.ones(3, dtype=L.float64))(L),
    "index_put_none": lambda L: L.zeros(3, 3).index_put_(
        (None, L.tensor([1, 1])), L.ones(3), accumulate=True
    ),
}


@pytest.mark.parity
def test_scalar_conversions_and_index_dtypes_match_pytorch(torch):
    def answer(L, call):
        try:
            return call(L).float().tolist()
        except (IndexError, RuntimeError, ValueError) as e:
            return type(e).__name__, str(e)
        except TypeError:
            return "TypeError"

    for name, call in SCALAR_CONVERSION_CASES.items():
        assert answer(dt, call) == answer(torch, call), name


@pytest.mark.parity
def test_ellipsis_of_no_dims_does_not_separate_advanced_indices(torch):
    """``x[:, [0, 1], ..., mask]`` on 3 dims: the ``...`` stands for no dims, so the advanced
    indices are adjacent and their dim stays in place (NumPy would move it first)."""

    def run(L):
        x = L.arange(60.0).reshape(3, 4, 5)
        index = (slice(None), L.tensor([0, 3]), Ellipsis, L.tensor([False, True, False, True, False]))
        y = L.zeros(3, 4, 5)
        y[index] = L.tensor([1.0, 2.0])
        return x[index].tolist(), y.tolist(), x[..., [0, 1], [1, 2]].shape

    assert run(dt) == run(torch)


def _sequence_index_warnings(lib) -> list:
    import warnings

    a = lib.arange(24).view(2, 3, 4)
    out = []
    for idx in ([0, None], [slice(None), 1], [0, 1], [[0], [1]], [lib.tensor(0), 1], (0, None)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out.append((tuple(a[idx].shape), [str(x.message)[:60] for x in w]))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a[[0, slice(None)]] = 7
    out.append((int(a.sum()), len(w)))
    return out


@pytest.mark.parity
def test_list_index_read_as_a_tuple_warns_as_pytorch(torch):
    """A short list holding a slice, None, ... or a sequence is a tuple of indices, with
    PyTorch's deprecation warning (chenyuntc's book indexes ``a[[0, None]]``)."""
    assert _sequence_index_warnings(dt) == _sequence_index_warnings(torch)


SOURCES = [
    ((2, 3), 0, [0], (2, 3)),
    ((2, 3), 0, [0, 1], (2, 4)),
    ((2, 3), 1, [0], (3, 1)),
    ((2, 3), 0, [0], (3,)),
]
SOURCES += [
    ((2, 3), 0, [0], ()),
    ((2, 3), 1, [0, 2], (2,)),
    ((4,), 0, [0, 1], ()),
    ((2, 3, 4), 1, [0], (3, 1, 4)),
]


def _index_source_errors(lib) -> list:
    seen = []
    for op in ("index_add_", "index_copy_"):
        for shape, dim, index, source in SOURCES:
            with pytest.raises((IndexError, RuntimeError)) as e:
                getattr(lib.zeros(shape), op)(dim, lib.tensor(index), lib.ones(source))
            seen.append((type(e.value).__name__, str(e.value)))
    return seen


def test_index_add_and_copy_source_shape_errors_as_pytorchs(torch):
    # were "index_add_(): Source/destination tensor must have same slice shapes..." for every
    # mismatch, and NumPy's broadcast error for index_copy_
    assert _index_source_errors(dt) == _index_source_errors(torch)


def _mask_errors(lib) -> list:
    x, seen = lib.zeros(2, 3, 4), []
    m3, m2 = lib.tensor([True, False, True]), lib.tensor([True, False])
    for index in [
        m3,
        (slice(None), m2),
        lib.ones(2, 2).bool(),
        (m3, 0),
        (Ellipsis, m3),
        (None, m3),
        (0, slice(None), m2),
    ]:
        with pytest.raises(IndexError) as e:
            x[index]
        seen.append(str(e.value))
    with pytest.raises(IndexError) as e:
        x[m3] = 1.0
    return [*seen, str(e.value)]


def test_masks_of_the_wrong_shape_fail_with_pytorchs_words(torch):
    # was "The shape of the mask does not match the shape of the indexed tensor: boolean index
    # did not match indexed array along dimension 0; ..." (NumPy's words)
    assert _mask_errors(dt) == _mask_errors(torch)


def _scalar_index_writes(lib) -> list:
    x = lib.tensor(1.0, requires_grad=True)
    s = lib.tensor(2.0, requires_grad=True)
    y = x.index_add(0, lib.tensor([0]), s, alpha=3)
    y.backward()
    z = lib.tensor(1.0)
    z.index_add_(0, lib.tensor([0]), lib.tensor(2.0))
    w = lib.tensor(1.0).index_copy_(0, lib.tensor([0]), lib.tensor([5.0]))
    return [y.item(), x.grad.item(), s.grad.item(), z.item(), tuple(z.shape), w.item(), tuple(w.shape)]


def test_index_add_and_copy_into_a_0_dim_tensor_as_pytorchs(torch):
    # a 0-dim self is one slice along dim 0 (both raised IndexError here)
    assert _scalar_index_writes(dt) == _scalar_index_writes(torch)
