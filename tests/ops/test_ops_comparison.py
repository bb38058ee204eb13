"""Ops without gradients: comparisons and their operators, logical/bitwise ops,
floor division and remainders, rounding, NaN tests, closeness, any/all, arg reductions,
sort/argsort/topk (whose values do carry gradients) and unique."""
import numpy as np
import pytest

import disttorch as torch
from disttorch.autograd import gradcheck

RNG = np.random.default_rng(3)
A = RNG.integers(-3, 4, size=(3, 4)).astype(np.float32)
B = RNG.integers(-3, 4, size=(4,)).astype(np.float32)


COMPARISONS = [("eq", "__eq__", np.equal), ("ne", "__ne__", np.not_equal),
               ("lt", "__lt__", np.less), ("le", "__le__", np.less_equal),
               ("gt", "__gt__", np.greater), ("ge", "__ge__", np.greater_equal)]


@pytest.mark.parametrize("name,dunder,ref", COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons_function_method_operator(name, dunder, ref):
    a, b = torch.tensor(A), torch.tensor(B)
    want = ref(A, B)
    for got in (getattr(torch, name)(a, b), getattr(a, name)(b), getattr(a, dunder)(b)):
        assert got.dtype == torch.bool and got.shape == torch.Size([3, 4])
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(getattr(torch, name)(a, 1.5).numpy(), ref(A, 1.5))


def test_comparison_operators_with_scalars_on_either_side():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert (a > 2).tolist() == [False, False, True]
    assert (2 < a).tolist() == [False, False, True]
    assert (2 == a).tolist() == [False, True, False]
    assert (a != 2).tolist() == [True, False, True]
    assert not (a == 2).requires_grad
    assert (a == None) is False and (a != None) is True  # noqa: E711
    assert len({a, a}) == 1 and {a: 1}[a] == 1     # still hashable by identity
    with pytest.raises(RuntimeError, match=r"tensor a \(2\) must match the size of tensor b \(3\)"):
        torch.tensor([1, 2]) > torch.tensor([1, 2, 3])


def test_logical_and_bitwise_ops():
    p = torch.tensor([True, True, False, False])
    q = torch.tensor([True, False, True, False])
    assert (p & q).tolist() == [True, False, False, False]
    assert (p | q).tolist() == [True, True, True, False]
    assert (p ^ q).tolist() == [False, True, True, False]
    assert (~p).tolist() == [False, False, True, True]
    assert torch.logical_and(p, q).tolist() == [True, False, False, False]
    assert torch.logical_or(torch.tensor([0.0, 2.0]), torch.tensor([0, 0])).tolist() == [False, True]
    assert torch.logical_xor(p, q).tolist() == [False, True, True, False]
    assert torch.logical_not(torch.tensor([0, 3])).tolist() == [True, False]
    i = torch.tensor([12, 10, 7])
    assert (i & 6).tolist() == [4, 2, 6] and (i | 1).tolist() == [13, 11, 7]
    assert (i ^ True).tolist() == [13, 11, 6] and (~i).tolist() == [-13, -11, -8]
    assert (3 & i).tolist() == [0, 2, 3] and (i.int() & i).dtype == torch.int64
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        torch.ones(2) & torch.ones(2)
    with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
        ~torch.ones(2)


def test_floor_divide_remainder_fmod():
    a = torch.tensor([-7, 7, 5])
    assert (a // 2).tolist() == [-4, 3, 2] and (a // 2).dtype == torch.int64
    assert (a % 3).tolist() == [2, 1, 2] and torch.remainder(a, -3).tolist() == [-1, -2, -1]
    assert torch.fmod(a, 3).tolist() == [-1, 1, 2]
    assert (17 // a).tolist() == [-3, 2, 3] and (17 % a).tolist() == [-4, 3, 2]
    f = torch.tensor([-7.5, 7.5])
    np.testing.assert_allclose((f // 2).numpy(), [-4.0, 3.0])
    np.testing.assert_allclose((f % 2).numpy(), [0.5, 1.5])
    np.testing.assert_allclose(f.fmod(2).numpy(), [-1.5, 1.5])
    assert (f // 2).dtype == torch.float32 and (a // 2.0).dtype == torch.float32
    assert np.isinf((f // 0).numpy()).all()
    for op in (lambda: a // 0, lambda: a % 0, lambda: torch.fmod(a, torch.tensor([1, 0, 1]))):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op()


def test_rounding_sign_and_value_tests():
    x = torch.tensor([-1.5, -0.5, 0.0, 0.5, 2.7, np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(torch.floor(x).numpy(), np.floor(x.numpy()))
    np.testing.assert_array_equal(x.ceil().numpy(), np.ceil(x.numpy()))
    np.testing.assert_array_equal(x.round().numpy(), np.round(x.numpy()))
    np.testing.assert_array_equal(x.trunc().numpy(), np.trunc(x.numpy()))
    np.testing.assert_allclose(torch.round(torch.tensor([1.2345]), decimals=2).numpy(), [1.23])
    np.testing.assert_array_equal(torch.sign(x).numpy(), np.sign(x.numpy()))
    assert torch.sign(torch.tensor([-3, 0, 2])).tolist() == [-1, 0, 1]
    assert torch.sign(torch.tensor([True, False])).dtype == torch.bool
    assert x.isnan().tolist() == [False] * 5 + [True, False, False]
    assert torch.isinf(x).tolist() == [False] * 6 + [True, True]
    assert torch.isfinite(x).tolist() == [True] * 5 + [False] * 3


def test_isclose_allclose_equal():
    a = torch.tensor([1.0, 2.0, np.nan])
    b = torch.tensor([1.0 + 1e-7, 2.1, np.nan])
    assert torch.isclose(a, b).tolist() == [True, False, False]
    assert torch.isclose(a, b, equal_nan=True).tolist() == [True, False, True]
    assert torch.isclose(a, b, atol=0.2, equal_nan=True).tolist() == [True, True, True]
    assert torch.allclose(a[:1], b[:1]) is True and torch.allclose(a, b) is False
    with pytest.raises(RuntimeError, match="Float did not match Long"):
        torch.isclose(torch.ones(2), torch.ones(2, dtype=torch.int64))
    assert torch.equal(torch.tensor([1, 2]), torch.tensor([1, 2])) is True
    assert torch.equal(torch.ones(2, 3), torch.ones(3, 2)) is False
    assert torch.tensor([1, 2]).equal(torch.tensor([1, 3])) is False


def test_any_all_with_dims():
    x = torch.tensor([[True, False], [False, False]])
    assert torch.any(x).item() is True and torch.all(x).item() is False
    assert x.any(dim=1).tolist() == [True, False] and x.all(0).tolist() == [False, False]
    assert torch.any(x, 0, keepdim=True).shape == torch.Size([1, 2])
    assert torch.all(torch.tensor([1, 2, 3])).item() is True
    assert torch.any(torch.tensor([0.0, 0.0])).dtype == torch.bool


def test_count_nonzero():
    x = torch.tensor([[0, 1, 2], [0, 0, 3]])
    assert torch.count_nonzero(x).item() == 3 and torch.count_nonzero(x).dtype == torch.int64
    assert x.count_nonzero(dim=0).tolist() == [0, 1, 2]
    assert torch.count_nonzero(x, (0, 1)).item() == 3


def test_argmax_argmin():
    x = torch.tensor(A)
    assert torch.argmax(x).item() == int(np.argmax(A))
    assert x.argmin(dim=1).tolist() == np.argmin(A, axis=1).tolist()
    assert x.argmax(0, keepdim=True).shape == torch.Size([1, 4])
    assert torch.argmax(x).dtype == torch.int64
    assert torch.argmax(x, keepdim=True).shape == torch.Size([1, 1])
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        torch.argmax(torch.ones(0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.argmax(2)


def test_sort_argsort_stable_and_descending():
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0], [0.0, 0.0, -1.0, 5.0]])
    values, indices = torch.sort(x)
    np.testing.assert_array_equal(values.numpy(), np.sort(x.numpy(), axis=1))
    assert indices.tolist() == [[1, 3, 0, 2], [2, 0, 1, 3]]
    out = x.sort(dim=1, descending=True)
    assert out.values.tolist() == [[3.0, 3.0, 2.0, 1.0], [5.0, 0.0, 0.0, -1.0]]
    assert out.indices.tolist() == [[0, 2, 3, 1], [3, 0, 1, 2]]   # ties keep their order
    assert torch.argsort(x, dim=0).tolist() == [[1, 1, 1, 0], [0, 0, 0, 1]]
    assert x.argsort(descending=True).tolist() == out.indices.tolist()
    assert torch.sort(torch.tensor([2.0, np.nan, 1.0])).indices.tolist() == [2, 0, 1]
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.sort(torch.ones(3), dim=3)


def test_topk_values_indices_and_errors():
    x = torch.tensor([[1.0, 9.0, 3.0, 7.0], [4.0, 4.0, 0.0, 8.0]])
    out = torch.topk(x, 2)
    assert out.values.tolist() == [[9.0, 7.0], [8.0, 4.0]]
    assert out.indices.tolist() == [[1, 3], [3, 0]]
    small = x.topk(2, dim=0, largest=False)
    assert small.values.tolist() == [[1.0, 4.0, 0.0, 7.0], [4.0, 9.0, 3.0, 8.0]]
    assert "return_types.topk(" in repr(out)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(torch.ones(3), 4)


def test_sort_and_topk_values_pass_gradients():
    x = torch.tensor(RNG.normal(size=(3, 5)), requires_grad=True)
    assert gradcheck(lambda t: torch.topk(t, 2).values, (x,))
    assert gradcheck(lambda t: torch.sort(t, dim=0, descending=True)[0], (x,))
    y = torch.tensor([1.0, 5.0, 3.0], requires_grad=True)
    torch.topk(y, 1).values.backward(torch.tensor([2.0]))
    assert y.grad.tolist() == [0.0, 2.0, 0.0]


def test_unique_variants():
    x = torch.tensor([[3, 1], [1, 2]])
    assert torch.unique(x).tolist() == [1, 2, 3]
    values, inverse = torch.unique(x, return_inverse=True)
    assert inverse.tolist() == [[2, 0], [0, 1]] and inverse.dtype == torch.int64
    values, counts = x.unique(return_counts=True)
    assert counts.tolist() == [2, 1, 1]
    values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
    assert values[inverse].tolist() == x.tolist()
    rows = torch.tensor([[1, 2], [0, 5], [1, 2]])
    u, inv, cnt = torch.unique(rows, dim=0, return_inverse=True, return_counts=True)
    assert u.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 0, 1] and cnt.tolist() == [1, 2]
