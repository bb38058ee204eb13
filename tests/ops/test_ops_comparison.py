"""Ops without gradients: comparisons and their operators, logical/bitwise ops,
floor division and remainders, rounding, NaN tests, closeness, any/all, arg reductions,
sort/argsort/topk (whose values do carry gradients) and unique; parity with PyTorch when
it is installed."""

import math

import numpy as np
import pytest
from parity_helpers import INTS, assert_no_grad_op_matches

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.kernels.torch_topk import PYTHON_MAX, replays

RNG = np.random.default_rng(3)
A = RNG.integers(-3, 4, size=(3, 4)).astype(np.float32)
B = RNG.integers(-3, 4, size=(4,)).astype(np.float32)


COMPARISONS = [
    ("eq", "__eq__", np.equal),
    ("ne", "__ne__", np.not_equal),
    ("lt", "__lt__", np.less),
    ("le", "__le__", np.less_equal),
    ("gt", "__gt__", np.greater),
    ("ge", "__ge__", np.greater_equal),
]


@pytest.mark.parametrize("name,dunder,ref", COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons_function_method_operator(name, dunder, ref):
    a, b = dt.tensor(A), dt.tensor(B)
    want = ref(A, B)
    for got in (getattr(dt, name)(a, b), getattr(a, name)(b), getattr(a, dunder)(b)):
        assert got.dtype == dt.bool and got.shape == dt.Size([3, 4])
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(getattr(dt, name)(a, 1.5).numpy(), ref(A, 1.5))


def test_comparison_operators_with_scalars_on_either_side():
    a = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert (a > 2).tolist() == [False, False, True]
    assert (2 < a).tolist() == [False, False, True]
    assert (2 == a).tolist() == [False, True, False]
    assert (a != 2).tolist() == [True, False, True]
    assert not (a == 2).requires_grad
    assert (a == None) is False and (a != None) is True  # noqa: E711
    assert len({a, a}) == 1 and {a: 1}[a] == 1  # still hashable by identity
    with pytest.raises(RuntimeError, match=r"tensor a \(2\) must match the size of tensor b \(3\)"):
        dt.tensor([1, 2]) > dt.tensor([1, 2, 3])


def test_logical_and_bitwise_ops():
    p = dt.tensor([True, True, False, False])
    q = dt.tensor([True, False, True, False])
    assert (p & q).tolist() == [True, False, False, False]
    assert (p | q).tolist() == [True, True, True, False]
    assert (p ^ q).tolist() == [False, True, True, False]
    assert (~p).tolist() == [False, False, True, True]
    assert dt.logical_and(p, q).tolist() == [True, False, False, False]
    assert dt.logical_or(dt.tensor([0.0, 2.0]), dt.tensor([0, 0])).tolist() == [False, True]
    assert dt.logical_xor(p, q).tolist() == [False, True, True, False]
    assert dt.logical_not(dt.tensor([0, 3])).tolist() == [True, False]
    i = dt.tensor([12, 10, 7])
    assert (i & 6).tolist() == [4, 2, 6] and (i | 1).tolist() == [13, 11, 7]
    assert (i ^ True).tolist() == [13, 11, 6] and (~i).tolist() == [-13, -11, -8]
    assert (3 & i).tolist() == [0, 2, 3] and (i.int() & i).dtype == dt.int64
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        dt.ones(2) & dt.ones(2)
    with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
        ~dt.ones(2)


def test_shift_operators_and_augmented_assignments_work_in_place():
    i = dt.tensor([1, 2, 3])
    assert (i << 1).tolist() == [2, 4, 6] and (1 << i).tolist() == [2, 4, 8]
    assert (i >> 1).tolist() == [0, 1, 1] and (8 >> i).tolist() == [4, 2, 1]
    small = dt.tensor(3, dtype=dt.int32)  # a Python int does not widen the dtype
    assert (small >> 1).dtype == dt.int32 and dt.bitwise_left_shift(small, 2).dtype == dt.int32
    with pytest.raises(NotImplementedError, match="lshift_cpu"):
        dt.ones(2) << 1
    base = dt.tensor([[12, 10], [7, 5]])
    row = base[0]
    row &= 6
    row |= 1
    row ^= 2
    row <<= 1
    row >>= 1
    row %= 4
    row //= 2
    assert base.tolist() == [[1, 0], [7, 5]]
    assert reversed(dt.tensor([1, 2, 3])).tolist() == [3, 2, 1] and reversed(dt.tensor(4)).item() == 4


def test_floor_divide_remainder_fmod():
    a = dt.tensor([-7, 7, 5])
    assert (a // 2).tolist() == [-4, 3, 2] and (a // 2).dtype == dt.int64
    assert (a % 3).tolist() == [2, 1, 2] and dt.remainder(a, -3).tolist() == [-1, -2, -1]
    assert dt.fmod(a, 3).tolist() == [-1, 1, 2]
    assert (17 // a).tolist() == [-3, 2, 3] and (17 % a).tolist() == [-4, 3, 2]
    f = dt.tensor([-7.5, 7.5])
    np.testing.assert_allclose((f // 2).numpy(), [-4.0, 3.0])
    np.testing.assert_allclose((f % 2).numpy(), [0.5, 1.5])
    np.testing.assert_allclose(f.fmod(2).numpy(), [-1.5, 1.5])
    assert (f // 2).dtype == dt.float32 and (a // 2.0).dtype == dt.float32
    assert np.isinf((f // 0).numpy()).all()
    for op in (lambda: a // 0, lambda: a % 0, lambda: dt.fmod(a, dt.tensor([1, 0, 1]))):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op()


def test_rounding_sign_and_value_tests():
    x = dt.tensor([-1.5, -0.5, 0.0, 0.5, 2.7, np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(dt.floor(x).numpy(), np.floor(x.numpy()))
    np.testing.assert_array_equal(x.ceil().numpy(), np.ceil(x.numpy()))
    np.testing.assert_array_equal(x.round().numpy(), np.round(x.numpy()))
    np.testing.assert_array_equal(x.trunc().numpy(), np.trunc(x.numpy()))
    np.testing.assert_allclose(dt.round(dt.tensor([1.2345]), decimals=2).numpy(), [1.23])
    sign = [-1.0, -1.0, 0.0, 1.0, 1.0, 0.0, 1.0, -1.0]  # PyTorch's: NaN gives 0
    assert dt.sign(x).tolist() == sign and dt.sgn(x).tolist() == sign
    assert not np.signbit(dt.sign(dt.tensor([-0.0, np.nan])).numpy()).any()  # +0.0, not -0.0 or NaN
    assert dt.sign(x.bfloat16()).float().tolist() == sign
    assert dt.sign(dt.tensor([-3, 0, 2])).tolist() == [-1, 0, 1]
    assert dt.sign(dt.tensor([True, False])).dtype == dt.bool
    assert x.isnan().tolist() == [False] * 5 + [True, False, False]
    assert dt.isinf(x).tolist() == [False] * 6 + [True, True]
    assert dt.isfinite(x).tolist() == [True] * 5 + [False] * 3


def test_isclose_allclose_equal():
    a = dt.tensor([1.0, 2.0, np.nan])
    b = dt.tensor([1.0 + 1e-7, 2.1, np.nan])
    assert dt.isclose(a, b).tolist() == [True, False, False]
    assert dt.isclose(a, b, equal_nan=True).tolist() == [True, False, True]
    assert dt.isclose(a, b, atol=0.2, equal_nan=True).tolist() == [True, True, True]
    assert dt.allclose(a[:1], b[:1]) is True and dt.allclose(a, b) is False
    with pytest.raises(RuntimeError, match="Float did not match Long"):
        dt.isclose(dt.ones(2), dt.ones(2, dtype=dt.int64))
    assert dt.equal(dt.tensor([1, 2]), dt.tensor([1, 2])) is True
    assert dt.equal(dt.ones(2, 3), dt.ones(3, 2)) is False
    assert dt.tensor([1, 2]).equal(dt.tensor([1, 3])) is False


def test_any_all_with_dims():
    x = dt.tensor([[True, False], [False, False]])
    assert dt.any(x).item() is True and dt.all(x).item() is False
    assert x.any(dim=1).tolist() == [True, False] and x.all(0).tolist() == [False, False]
    assert dt.any(x, 0, keepdim=True).shape == dt.Size([1, 2])
    assert dt.all(dt.tensor([1, 2, 3])).item() is True
    assert dt.any(dt.tensor([0.0, 0.0])).dtype == dt.bool


def test_count_nonzero():
    x = dt.tensor([[0, 1, 2], [0, 0, 3]])
    assert dt.count_nonzero(x).item() == 3 and dt.count_nonzero(x).dtype == dt.int64
    assert x.count_nonzero(dim=0).tolist() == [0, 1, 2]
    assert dt.count_nonzero(x, (0, 1)).item() == 3


def test_argmax_argmin():
    x = dt.tensor(A)
    assert dt.argmax(x).item() == int(np.argmax(A))
    assert x.argmin(dim=1).tolist() == np.argmin(A, axis=1).tolist()
    assert x.argmax(0, keepdim=True).shape == dt.Size([1, 4])
    assert dt.argmax(x).dtype == dt.int64
    assert dt.argmax(x, keepdim=True).shape == dt.Size([1, 1])
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        dt.argmax(dt.ones(0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.argmax(2)


def test_sort_argsort_stable_and_descending():
    x = dt.tensor([[3.0, 1.0, 3.0, 2.0], [0.0, 0.0, -1.0, 5.0]])
    values, indices = dt.sort(x)
    np.testing.assert_array_equal(values.numpy(), np.sort(x.numpy(), axis=1))
    assert indices.tolist() == [[1, 3, 0, 2], [2, 0, 1, 3]]
    out = x.sort(dim=1, descending=True)
    assert out.values.tolist() == [[3.0, 3.0, 2.0, 1.0], [5.0, 0.0, 0.0, -1.0]]
    assert out.indices.tolist() == [[0, 2, 3, 1], [3, 0, 1, 2]]  # ties keep their order
    assert dt.argsort(x, dim=0).tolist() == [[1, 1, 1, 0], [0, 0, 0, 1]]
    assert x.argsort(descending=True).tolist() == out.indices.tolist()
    assert dt.sort(dt.tensor([2.0, np.nan, 1.0])).indices.tolist() == [2, 0, 1]
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.sort(dt.ones(3), dim=3)


def test_unstable_sort_orders_ties_as_pytorch():
    """PyTorch's CPU ``sort(stable=False)`` is the C++ library's introsort: equal values in
    slices over 16 elements come out in its order (the answers below are PyTorch 2.13's)."""
    x = (dt.arange(20) % 3).float()
    ints = lambda text: [int(i) for i in text.split()]  # noqa: E731
    assert x.sort(descending=True).indices.tolist() == ints(
        "2 17 5 14 8 11 10 19 16 13 7 4 1 0 9 12 6 15 3 18"
    )
    assert x.argsort().tolist() == ints("18 3 15 6 12 9 0 10 19 16 13 7 4 1 11 8 14 5 17 2")
    assert x.sort(stable=True).indices.tolist() == ints("0 3 6 9 12 15 18 1 4 7 10 13 16 19 2 5 8 11 14 17")
    zeros = dt.zeros(20).expand(2, 20)
    assert zeros.sort().indices[1].tolist() == ints("10 19 18 17 16 15 14 13 12 11 0 9 8 7 6 5 4 3 2 1")
    assert dt.tensor([True, False] * 10).sort().indices[:4].tolist() == [1, 19, 17, 15]
    assert (dt.arange(40000) % 3).sort().indices[:4].tolist() == [0, 3, 6, 9]  # a radix sort: stable


def test_long_slices_are_replayed_by_the_compiled_form(monkeypatch):
    """Slices over ``PYTHON_MAX`` elements are replayed by the compiled form; without it
    (no numba, or ``DISTTORCH_JIT=0``) they keep equal values in input order."""
    if not replays(PYTHON_MAX + 1):
        pytest.skip("no compiled loops: numba is not installed (the fast extra) or DISTTORCH_JIT=0")
    assert dt.zeros(9000).sort().indices[:3].tolist() == [6003, 5995, 5996]  # PyTorch 2.13's
    monkeypatch.setenv("DISTTORCH_JIT", "0")
    assert dt.zeros(9000).sort().indices[:3].tolist() == [0, 1, 2]


@pytest.mark.parity
def test_long_slices_with_ties_match_pytorch(torch):
    if not replays(PYTHON_MAX + 1):
        pytest.skip("no compiled loops: numba is not installed (the fast extra) or DISTTORCH_JIT=0")
    rng = np.random.default_rng(5)
    a = rng.integers(0, 40, (2, 9000)).astype(np.float32)
    a[0, rng.random(9000) < 0.1] = np.nan
    for descending in (False, True):
        ours = dt.tensor(a).sort(dim=1, descending=descending).indices.numpy()
        np.testing.assert_array_equal(
            ours, torch.tensor(a).sort(dim=1, descending=descending).indices.numpy()
        )
    ints = a[1].astype(np.int64)  # 1-D integers under the radix sort's threshold
    np.testing.assert_array_equal(
        dt.tensor(ints).sort().indices.numpy(), torch.tensor(ints).sort().indices.numpy()
    )
    ours, theirs = dt.tensor(a).topk(3000, dim=1), torch.tensor(a).topk(3000, dim=1)
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(
        dt.tensor(ints).mode().indices.numpy(), torch.tensor(ints).mode().indices.numpy()
    )


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "bfloat16"])
def test_unstable_sort_indices_match_pytorch_on_ties_and_nans(torch, dtype):
    rng = np.random.default_rng(3)
    for shape in [(16,), (17,), (300,), (3, 40), (33, 2, 5)]:
        a = rng.integers(0, 3, size=shape).astype("float32" if dtype == "bfloat16" else dtype)
        if dtype in ("float32", "bfloat16"):
            a[rng.random(shape) < 0.1] = np.nan
        x, t = dt.tensor(a).to(getattr(dt, dtype)), torch.tensor(a).to(getattr(torch, dtype))
        for dim in range(len(shape)):
            for descending in (False, True):
                ours = x.sort(dim=dim, descending=descending)
                theirs = t.sort(dim=dim, descending=descending)
                np.testing.assert_array_equal(
                    ours.indices.numpy(), theirs.indices.numpy(), err_msg=f"{shape} {dim}"
                )
                np.testing.assert_array_equal(ours.values.float().numpy(), theirs.values.float().numpy())
                argsorted = x.argsort(dim=dim, descending=descending)
                np.testing.assert_array_equal(argsorted.numpy(), theirs.indices.numpy())


def test_topk_values_indices_and_errors():
    x = dt.tensor([[1.0, 9.0, 3.0, 7.0], [4.0, 4.0, 0.0, 8.0]])
    out = dt.topk(x, 2)
    assert out.values.tolist() == [[9.0, 7.0], [8.0, 4.0]]
    assert out.indices.tolist() == [[1, 3], [3, 1]]  # PyTorch's order of the tied 4s
    small = x.topk(2, dim=0, largest=False)
    assert small.values.tolist() == [[1.0, 4.0, 0.0, 7.0], [4.0, 9.0, 3.0, 8.0]]
    assert "return_types.topk(" in repr(out)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        dt.topk(dt.ones(3), 4)


def test_topk_gives_equal_values_in_pytorchs_order():
    """PyTorch's CPU kernel selects with the C++ library's unstable algorithms: ties come out
    in the order those leave them (the answers below are PyTorch 2.13's)."""
    assert dt.zeros(100).topk(5).indices.tolist() == [65, 68, 67, 66, 69]
    assert dt.zeros(3, 10).topk(5, 1, True, True).indices.tolist() == [[8, 6, 7, 5, 9]] * 3
    x = dt.tensor([[0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 1.0]])
    assert x.topk(4).indices.tolist() == [[1, 6, 4, 2]]
    assert x.topk(5, largest=False).indices.tolist() == [[0, 3, 5, 6, 4]]
    assert x.topk(7, sorted=False).indices.tolist() == [[1, 6, 4, 5, 2, 3, 0]]
    # along a leading dim: the tied column replayed, the other one sorted
    y = dt.tensor([[2.0, 0.0], [2.0, 1.0], [2.0, 3.0]])
    assert y.topk(2, dim=0).indices.tolist() == [[0, 2], [1, 1]]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_topk_indices_match_pytorch_on_ties_and_nans(torch, dtype):
    rng = np.random.default_rng(7)
    for n, k in [(1, 1), (4, 2), (7, 7), (17, 3), (20, 1), (100, 5), (129, 2), (300, 4), (40, 39)]:
        a = rng.integers(0, 3, size=(3, n)).astype(dtype)
        if dtype != "int64":
            a[rng.random(a.shape) < 0.1] = np.nan
        for dim, largest, ordered in [(1, True, True), (1, False, True), (1, True, False), (0, True, True)]:
            kk = min(k, a.shape[dim])
            ours = dt.tensor(a).topk(kk, dim, largest, ordered)
            theirs = torch.tensor(a).topk(kk, dim, largest, ordered)
            np.testing.assert_array_equal(
                ours.indices.numpy(), theirs.indices.numpy(), err_msg=f"{n} {k} {dim}"
            )
            np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())


def test_sort_and_topk_values_pass_gradients():
    x = dt.tensor(RNG.normal(size=(3, 5)), requires_grad=True)
    assert gradcheck(lambda t: dt.topk(t, 2).values, (x,))
    assert gradcheck(lambda t: dt.sort(t, dim=0, descending=True)[0], (x,))
    y = dt.tensor([1.0, 5.0, 3.0], requires_grad=True)
    dt.topk(y, 1).values.backward(dt.tensor([2.0]))
    assert y.grad.tolist() == [0.0, 2.0, 0.0]


def test_unique_variants():
    x = dt.tensor([[3, 1], [1, 2]])
    assert dt.unique(x).tolist() == [1, 2, 3]
    values, inverse = dt.unique(x, return_inverse=True)
    assert inverse.tolist() == [[2, 0], [0, 1]] and inverse.dtype == dt.int64
    values, counts = x.unique(return_counts=True)
    assert counts.tolist() == [2, 1, 1]
    values, inverse, counts = dt.unique(x, sorted=True, return_inverse=True, return_counts=True)
    assert values[inverse].tolist() == x.tolist()
    rows = dt.tensor([[1, 2], [0, 5], [1, 2]])
    u, inv, cnt = dt.unique(rows, dim=0, return_inverse=True, return_counts=True)
    assert u.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 0, 1] and cnt.tolist() == [1, 2]


NAN_ORDER_OPS = {
    "sort": lambda L, x: x.sort(),
    "argsort_desc": lambda L, x: x.argsort(descending=True),
    "topk": lambda L, x: x.topk(3),
    "msort": lambda L, x: L.msort(x.t()),
    "unique": lambda L, x: x.unique(return_inverse=True, return_counts=True),
    "searchsorted": lambda L, x: L.searchsorted(L.tensor([0.0, 1, 2]).to(x.dtype), x),
    "bucketize": lambda L, x: L.bucketize(x, L.tensor([0.0, 1]).to(x.dtype), right=True),
    # NaNs in the sequence: PyTorch's binary search goes right at each NaN it meets
    "searchsorted_nan_sequence": lambda L, x: L.searchsorted(
        L.tensor([0.0, 1, math.nan, math.nan]).to(x.dtype), x
    ),
    "bucketize_nan_boundaries": lambda L, x: L.bucketize(
        x, L.tensor([-1.0, math.nan]).to(x.dtype), right=True
    ),
    "cummax": lambda L, x: x.cummax(1),
    "cummin": lambda L, x: x.cummin(1),
    "mode": lambda L, x: x.mode(1),
}


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("op", sorted(NAN_ORDER_OPS))
def test_nans_order_as_in_pytorch(torch, op, dtype):
    """NaN sorts last (also in bfloat16, whose NumPy sorts leave NaNs in place), each NaN is
    a distinct value of ``unique``, and a running extreme is NaN from the first NaN on."""
    a = np.array([[1, np.nan, 0, 2, np.nan, 1, 0, -np.inf], [0, 3, 0, np.nan, 1, 1, 2, 2]], np.float32)
    ours = NAN_ORDER_OPS[op](dt, dt.tensor(a).to(getattr(dt, dtype)))
    theirs = NAN_ORDER_OPS[op](torch, torch.tensor(a).to(getattr(torch, dtype)))
    for o, t in zip(
        ours if isinstance(ours, tuple) else [ours], theirs if isinstance(theirs, tuple) else [theirs]
    ):
        assert str(o.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(o.float().numpy(), t.float().numpy())


# ---------------------------------------------------------------------- parity with PyTorch
PARITY_NO_GRAD = {  # compare values and dtypes on int64 inputs
    "eq": lambda L, a: a == 1,
    "lt": lambda L, a: a < a.sum(0),
    "ge_scalar": lambda L, a: 0 <= a,
    "ne": lambda L, a: L.ne(a, 2),
    "and": lambda L, a: (a > 0) & (a < 2),
    "or": lambda L, a: (a > 0) | (a < -2),
    "xor": lambda L, a: (a > 0) ^ (a < 2),
    "logical_not": lambda L, a: L.logical_not(a),
    "isclose": lambda L, a: L.isclose(a.float(), a.float() + 1e-6),
    "nan_tests": lambda L, a: L.isfinite(L.log(a.float())),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_NO_GRAD))
def test_no_grad_ops_match_torch(name):
    assert_no_grad_op_matches(PARITY_NO_GRAD[name], INTS)


def test_isclose_and_allclose_name_a_non_tensor_argument():
    import pytest as _pytest

    with _pytest.raises(
        TypeError, match=r"allclose\(\): argument 'input' \(position 1\) must be Tensor, not list"
    ):
        dt.allclose([1.0], dt.ones(1))
    with pytest.raises(
        TypeError, match=r"isclose\(\): argument 'other' \(position 2\) must be Tensor, not float"
    ):
        dt.isclose(dt.ones(1), 1.0)


def test_std_sort_sorts_as_an_introsort():
    """With a consistent comparator: sorted, through the insertion sort (up to 16 entries), the
    partitions (more), and the heap sort that ends a recursion at its depth limit."""
    from disttorch.kernels import std_sort

    rng = np.random.default_rng(0)
    for n in (0, 1, 5, 16, 17, 40, 300):
        values = rng.integers(0, 50, n).tolist()
        order = std_sort.std_sort(list(range(n)), lambda a, b: values[a] < values[b])
        assert sorted(order) == list(range(n)) and [values[i] for i in order] == sorted(values)
    items = rng.permutation(40).tolist()
    std_sort._heap_sort(items, 0, 40, lambda a, b: a < b)
    assert items == list(range(40))


@pytest.mark.parity
def test_unique_dim_of_slices_holding_nan_orders_them_as_pytorch(torch):
    """PyTorch sorts the slices with std::sort and a lexicographic < that NaN makes
    inconsistent: the order (and the inverse indices) are that algorithm's."""
    rng = np.random.default_rng(1)
    for trial in range(40):
        shape = tuple(int(v) for v in rng.integers(1, 6 if trial % 2 else 40, size=2))
        x = rng.integers(0, 3, size=shape).astype(np.float32)
        x[rng.random(shape) < 0.25] = np.nan
        for dim in (0, 1):
            ours = dt.unique(dt.from_numpy(x), dim=dim, return_inverse=True, return_counts=True)
            theirs = torch.unique(torch.from_numpy(x), dim=dim, return_inverse=True, return_counts=True)
            for a, b in zip(ours, theirs):
                assert a.shape == b.shape and np.array_equal(a.numpy(), b.numpy(), equal_nan=True), (x, dim)
