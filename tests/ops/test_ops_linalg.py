"""Matrix products: matmul for 1-D, 2-D and batched operands with broadcasting (values
against NumPy, float64 gradient checks), mm/bmm/mv/dot/outer and PyTorch's errors; trace and
tensordot; parity with PyTorch when it is installed."""

import numpy as np
import pytest
from parity_helpers import (
    INTS,
    PARITY_RNG,
    any_,
    assert_no_grad_op_matches,
    assert_values_and_gradients_match,
    raised,
)

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(2)


def leaf(*shape):
    return dt.tensor(RNG.normal(size=shape), requires_grad=True)


CASES = [  # (shape a, shape b): every way matmul treats its operands
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),  # one operand broadcast over the batch
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (2, 4, 2)),  # broadcast batch dims on both sides
]


@pytest.mark.parametrize("sa,sb", CASES, ids=[f"{a}@{b}" for a, b in CASES])
def test_matmul_values_and_gradcheck(sa, sb):
    a, b = leaf(*sa), leaf(*sb)
    out = a @ b
    want = np.matmul(a.detach().numpy(), b.detach().numpy())
    assert out.shape == dt.Size(want.shape)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(dt.matmul(a, b).detach().numpy(), want, rtol=1e-12)
    assert gradcheck(dt.matmul, (a, b))


def test_matmul_broadcast_batch_gradients_are_summed():
    a = leaf(3, 4)
    b = leaf(2, 4, 5)
    g = RNG.normal(size=(2, 3, 5))
    (a @ b).backward(dt.tensor(g))
    bn = b.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), sum(g[i] @ bn[i].T for i in range(2)))


def test_matmul_second_derivative_and_float32():
    assert gradgradcheck(dt.matmul, (leaf(2, 3), leaf(3, 2)))
    x = dt.randn(8, 16)
    w = dt.randn(16, 4)
    assert (x @ w).dtype == dt.float32
    np.testing.assert_allclose((x @ w).numpy(), x.numpy() @ w.numpy(), rtol=1e-5)


def test_mm_bmm_mv_dot_outer():
    a, b = leaf(3, 4), leaf(4, 2)
    np.testing.assert_allclose(dt.mm(a, b).detach().numpy(), a.detach().numpy() @ b.detach().numpy())
    assert gradcheck(dt.mm, (a, b))
    p, q = leaf(2, 3, 4), leaf(2, 4, 5)
    assert gradcheck(dt.bmm, (p, q)) and p.bmm(q).shape == dt.Size([2, 3, 5])
    v = leaf(4)
    assert gradcheck(dt.mv, (a, v)) and a.mv(v).shape == dt.Size([3])
    w = leaf(4)
    np.testing.assert_allclose(dt.dot(v, w).item(), v.detach().numpy() @ w.detach().numpy())
    assert gradcheck(dt.dot, (v, w))
    u = leaf(3)
    np.testing.assert_allclose(
        dt.outer(u, v).detach().numpy(), np.outer(u.detach().numpy(), v.detach().numpy())
    )
    assert gradcheck(dt.outer, (u, v))


def test_addmm_scales_and_broadcasts_input():
    bias, m1, m2 = leaf(3), leaf(2, 4), leaf(4, 3)
    out = dt.addmm(bias, m1, m2, beta=0.5, alpha=2.0)
    want = 0.5 * bias.detach().numpy() + 2.0 * (m1.detach().numpy() @ m2.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), want)
    assert gradcheck(lambda b, x, y: dt.addmm(b, x, y, beta=0.5, alpha=2.0), (bias, m1, m2))
    nan_bias = dt.full((3,), float("nan"), dtype=dt.float64)
    assert not dt.isnan(dt.addmm(nan_bias, m1, m2, beta=0)).any()


def test_integer_matmul():
    a = dt.tensor([[1, 2], [3, 4]])
    assert (a @ a).tolist() == [[7, 10], [15, 22]] and (a @ a).dtype == dt.int64


def test_matmul_errors_name_both_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        dt.ones(2, 3) @ dt.ones(4, 5)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)"):
        dt.ones(3) @ dt.ones(4, 5)
    with pytest.raises(RuntimeError, match=r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"):
        dt.ones(2, 3) @ dt.ones(4)
    with pytest.raises(RuntimeError, match=r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"):
        dt.ones(3) @ dt.ones(4)
    with pytest.raises(RuntimeError, match=r"\[2, 2, 3\] and \[2, 4, 5\]"):
        dt.ones(2, 2, 3) @ dt.ones(2, 4, 5)
    with pytest.raises(
        RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\)"
    ):
        dt.ones(2, 2, 3) @ dt.ones(3, 3, 5)
    with pytest.raises(
        RuntimeError, match="both arguments to matmul need to be at least 1D, but they are 0D and 1D"
    ):
        dt.matmul(dt.tensor(1.0), dt.ones(3))
    with pytest.raises(
        RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"
    ):
        dt.ones(2, 2) @ dt.ones(2, 2, dtype=dt.float64)
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        dt.mm(dt.ones(3), dt.ones(3, 2))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        dt.bmm(dt.ones(2, 3), dt.ones(2, 3))
    with pytest.raises(
        RuntimeError,
        match=r"Expected size for first two dimensions of batch2 tensor "
        r"to be: \[2, 3\] but got: \[3, 3\]",
    ):
        dt.bmm(dt.ones(2, 2, 3), dt.ones(3, 3, 4))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        dt.dot(dt.ones(3, 1), dt.ones(3))
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument vec2, but got 2-D"):
        dt.outer(dt.ones(3), dt.ones(2, 2))


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bi,oij,bj->bo", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij->i", [(2, 3)]),
    ("ij,kj->i", [(2, 3), (4, 3)]),
    ("ba,ab", [(2, 3), (3, 2)]),
    ("ij,ij->ij", [(1, 3), (4, 3)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_values_and_gradcheck(eq, shapes):
    ops = [leaf(*s) for s in shapes]
    want = np.einsum(eq, *[o.detach().numpy() for o in ops])
    got = dt.einsum(eq, *ops)
    assert got.shape == dt.Size(np.shape(want))
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
    assert gradcheck(lambda *xs: dt.einsum(eq, *xs), ops)


def test_einsum_list_form_second_order_and_errors():
    a, b = leaf(2, 3), leaf(3, 2)
    np.testing.assert_allclose(dt.einsum("ij,jk", [a, b]).detach().numpy(), (a @ b).detach().numpy())
    assert gradgradcheck(lambda x, y: dt.einsum("ij,jk->ik", x, y), (a, b))
    assert dt.einsum("ii->i", dt.eye(3)).tolist() == [1.0, 1.0, 1.0]  # no grad needed
    for eq, shapes in [("ii->i", [(3, 3)]), ("iji->j", [(3, 2, 3)]), ("ii,ij->j", [(3, 3), (3, 2)])]:
        ops = [leaf(*s) for s in shapes]  # a repeated subscript: that diagonal, differentiably
        np.testing.assert_allclose(
            dt.einsum(eq, *ops).detach().numpy(), np.einsum(eq, *[o.detach().numpy() for o in ops])
        )
        assert gradcheck(lambda *xs, eq=eq: dt.einsum(eq, *xs), ops)
    with pytest.raises(
        RuntimeError, match="subscript i is repeated for operand 0 but the sizes don't match, 4 != 3"
    ):
        dt.einsum("ii->", leaf(3, 4))
    with pytest.raises(RuntimeError, match="more operands were provided"):
        dt.einsum("ij->i", a, b)
    with pytest.raises(
        RuntimeError,
        match=r"number of subscripts in the equation \(3\) does not "
        r"match the number of dimensions \(2\) for operand 0",
    ):
        dt.einsum("ijk->i", a)
    # PyTorch's messages whole: the first dim (in each operand's order) that does not broadcast
    for eq, shapes, message in [
        (
            "ij,jk->ik",
            [(2, 3), (2, 2)],
            "subscript j has size 2 for operand 1 which does not broadcast with previously seen size 3",
        ),
        (
            "Ab,bA",
            [(2, 3), (4, 5)],
            "subscript b has size 4 for operand 1 which does not broadcast with previously seen size 3",
        ),
        (
            "a...b,a...b",
            [(2, 3, 4, 5), (2, 6, 4, 5)],
            "dimension 1 covered by ellipsis in operand 1has size 6 which does not broadcast with previously seen "
            "ellipsis with size 3 for the respective dimension",
        ),
    ]:
        with pytest.raises(RuntimeError) as error:
            dt.einsum(eq, *[leaf(*s) for s in shapes])
        assert str(error.value) == "einsum(): " + message


EINSUM_DTYPES = [  # (equation, operand dtypes): an error, or the result's dtype
    ("i,j->ij", ("int64", "float32")),
    ("ij,ij->ij", ("float64", "float32")),
    ("i,j->", ("int64", "float32")),
    ("ij,->ij", ("float32", "float64")),
    ("i,j->ij", ("bool", "float32")),
    ("ij,jk->ik", ("int64", "float32")),
    ("ij,ij->i", ("float64", "float32")),
    ("ij,jk,kl->il", ("float32", "float32", "float64")),
    ("ij,jk->ik", ("bool", "bool")),
]


def _einsum_dtype(lib, eq, dtypes):
    ops = [lib.ones((2,) * n, dtype=getattr(lib, d)) for n, d in zip(_einsum_ndims(eq), dtypes, strict=True)]
    try:
        return str(lib.einsum(eq, *ops).dtype).split(".")[-1]
    except (RuntimeError, NotImplementedError) as e:
        return type(e).__name__ + ": " + str(e)


def _einsum_ndims(eq):
    return [len(t) for t in eq.split("->")[0].split(",")]


def test_einsum_promotes_unless_it_contracts():
    """A subscript summed across operands is a ``bmm`` in PyTorch (one dtype); otherwise the
    operands are multiplied by broadcasting, with type promotion."""
    got = {(eq, d): _einsum_dtype(dt, eq, d) for eq, d in EINSUM_DTYPES}
    assert got[("i,j->ij", ("int64", "float32"))] == "float32"
    assert got[("ij,ij->ij", ("float64", "float32"))] == "float64"
    assert got[("ij,->ij", ("float32", "float64"))] == "float64"
    assert (
        got[("ij,jk->ik", ("int64", "float32"))] == "RuntimeError: expected scalar type Long but found Float"
    )
    assert got[("ij,jk->ik", ("bool", "bool"))].startswith("NotImplementedError")
    a, b = leaf(3), dt.arange(4)
    assert gradcheck(lambda x: dt.einsum("i,j->ij", x, b), (a,))


@pytest.mark.parity
def test_einsum_dtypes_as_pytorch(torch):
    for eq, dtypes in EINSUM_DTYPES:
        assert _einsum_dtype(dt, eq, dtypes) == _einsum_dtype(torch, eq, dtypes), (eq, dtypes)


# ---------------------------------------------------------------------- parity with PyTorch
# name: (fn(lib, *float64 leaves), inputs) -- fn uses only API both libraries share
PS = (3, 4)
PARITY_GRAD = {
    "matmul_2d": (lambda L, a, b: a @ b, [any_((3, 4)), any_((4, 2))]),
    "matmul_1d": (lambda L, a, b: L.matmul(a, b), [any_((4,)), any_((4,))]),
    "matmul_vec_mat": (lambda L, a, b: a @ b, [any_((4,)), any_((2, 4, 3))]),
    "matmul_batch_bcast": (lambda L, a, b: a @ b, [any_((2, 1, 3, 4)), any_((5, 4, 2))]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [any_((2, 3, 4)), any_((2, 4, 5))]),
    "mv": (lambda L, a, b: L.mv(a, b), [any_((3, 4)), any_((4,))]),
    "einsum_bilinear": (
        lambda L, a, w, b: L.einsum("bi,oij,bj->bo", a, w, b),
        [any_((2, 3)), any_((4, 3, 5)), any_((2, 5))],
    ),
    "einsum_ellipsis": (lambda L, a, b: L.einsum("...ij,...jk", a, b), [any_((2, 1, 3, 4)), any_((5, 4, 2))]),
    "addmm": (
        lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2),
        [any_((2,)), any_((3, 4)), any_((4, 2))],
    ),
    "trace": (lambda L, a: L.trace(a), [PARITY_RNG.normal(size=(3, 4))]),
    "tensordot_int": (
        lambda L, a, b: L.tensordot(a, b, 2),
        [PARITY_RNG.normal(size=(2, 3, 4)), PARITY_RNG.normal(size=(3, 4, 5))],
    ),
    "tensordot_lists": (
        lambda L, a, b: L.tensordot(a, b, dims=([2, 0], [0, 2])),
        [PARITY_RNG.normal(size=(2, 3, 4)), PARITY_RNG.normal(size=(4, 5, 2))],
    ),
    "tensordot_outer": (
        lambda L, a, b: L.tensordot(a, b, 0),
        [PARITY_RNG.normal(size=(2, 3)), PARITY_RNG.normal(size=(4,))],
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_GRAD))
def test_values_and_gradients_match_torch(name):
    assert_values_and_gradients_match(*PARITY_GRAD[name])


PARITY_NO_GRAD = {  # compare values and dtypes on int64 inputs
    "int_matmul": lambda L, a: a @ a.T,
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_NO_GRAD))
def test_no_grad_ops_match_torch(name):
    assert_no_grad_op_matches(PARITY_NO_GRAD[name], INTS)


# ---------------------------------------------------------------------- trace, tensordot
def leaf_array(arr):
    return dt.tensor(np.asarray(arr, dtype=np.float64), requires_grad=True)


TD_A = RNG.normal(size=(2, 3, 4))
TD_B = RNG.normal(size=(3, 4, 5))
TENSORDOT_DIMS = [  # disttorch dims, NumPy axes
    (2, 2),
    (1, ([2], [1])),
    (0, 0),
    (([1, 2], [0, 1]), ([1, 2], [0, 1])),
    (((2, 1), (1, 0)), ([2, 1], [1, 0])),
    ([[-1], [1]], ([2], [1])),
]


def test_trace_values_and_dtypes():
    x = RNG.normal(size=(3, 5))
    assert dt.trace(dt.tensor(x)).item() == pytest.approx(np.trace(x))
    assert dt.tensor(x).trace().item() == pytest.approx(np.trace(x))
    t = dt.arange(6).reshape(2, 3)
    assert dt.trace(t).item() == 4 and dt.trace(t).dtype == dt.int64
    assert dt.trace(dt.ones(2, 2, dtype=dt.int32)).dtype == dt.int64
    assert dt.trace(dt.ones(0, 3)).item() == 0.0


def test_trace_errors_and_gradcheck():
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 3"):
        dt.trace(dt.ones(2, 3, 4))
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        dt.trace(dt.tensor([[True, False], [False, True]]))
    for shape in ((3, 3), (2, 4), (4, 2)):
        x = leaf_array(RNG.normal(size=shape))
        assert gradcheck(dt.trace, (x,))
        assert gradgradcheck(lambda v: dt.trace(v) ** 2, (x,))
    x = leaf_array(RNG.normal(size=(3, 3)))
    dt.trace(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3))


@pytest.mark.parametrize("dims,axes", TENSORDOT_DIMS, ids=[str(d[0]) for d in TENSORDOT_DIMS])
def test_tensordot_values(dims, axes):
    if dims == 1:  # a's last dim (4) against B's first (3) would not match: use B's transpose
        b = np.ascontiguousarray(TD_B.transpose(1, 0, 2))
        out = dt.tensordot(dt.tensor(TD_A), dt.tensor(b), dims=1)
        np.testing.assert_allclose(out.numpy(), np.tensordot(TD_A, b, axes=1), rtol=1e-12)
        return
    out = dt.tensordot(dt.tensor(TD_A), dt.tensor(TD_B), dims)
    np.testing.assert_allclose(out.numpy(), np.tensordot(TD_A, TD_B, axes=axes), rtol=1e-12)


def test_tensordot_dims_as_tensor_and_default():
    a, b = dt.tensor(TD_A), dt.tensor(TD_B)
    ref = np.tensordot(TD_A, TD_B, axes=([1, 2], [0, 1]))
    np.testing.assert_allclose(dt.tensordot(a, b, dt.tensor([[1, 2], [0, 1]])).numpy(), ref)
    np.testing.assert_allclose(dt.tensordot(a, b, dt.tensor(2)).numpy(), ref)
    np.testing.assert_allclose(dt.tensordot(a, b).numpy(), ref)
    ints = dt.tensordot(dt.ones(2, 3, dtype=dt.int32), dt.ones(3, dtype=dt.int32), 1)
    assert ints.dtype == dt.int32 and ints.tolist() == [3, 3]


def test_tensordot_size_one_dim_is_summed_as_pytorch():
    a, b = RNG.normal(size=(2, 1)), RNG.normal(size=(3, 4))
    out = dt.tensordot(dt.tensor(a), dt.tensor(b), dims=([1], [0]))
    np.testing.assert_allclose(out.numpy(), a @ b.sum(0, keepdims=True), rtol=1e-12)
    ta, tb = leaf_array(a), leaf_array(b)
    assert gradcheck(lambda u, v: dt.tensordot(u, v, ([1], [0])), (ta, tb))


@pytest.mark.parametrize("dims", [2, ([1, 2], [1, 0]), ([2, 1], [0, 1]), ([2], [0]), 0])
def test_tensordot_gradcheck(dims):
    a, b = leaf_array(RNG.normal(size=(2, 3, 4))), leaf_array(RNG.normal(size=(4, 3, 2)))
    if dims == 2:
        b = leaf_array(RNG.normal(size=(3, 4, 2)))
    assert gradcheck(lambda u, v: dt.tensordot(u, v, dims), (a, b))
    assert gradgradcheck(lambda u, v: dt.tensordot(u, v, dims), (a, b))


def test_tensordot_errors():
    a, b = dt.tensor(TD_A), dt.tensor(TD_B)
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0, but got dims=-1"):
        dt.tensordot(a, b, dims=-1)
    with pytest.raises(RuntimeError, match="tensordot expects dims < ndim_a or ndim_b, but got dims=4"):
        dt.tensordot(a, b, dims=4)
    with pytest.raises(
        RuntimeError,
        match="contracted dimensions need to match, but first has "
        "size 4 in dim -1 and second has size 3 in dim 0",
    ):
        dt.tensordot(a, b, dims=1)
    with pytest.raises(RuntimeError, match="first has size 3 in dim 1 and second has size 4 in dim 1"):
        dt.tensordot(a, b, dims=([1], [1]))
    with pytest.raises(RuntimeError, match="both dimension lists should have same length"):
        dt.tensordot(a, b, dims=([1, 2], [0]))
    with pytest.raises(RuntimeError, match="both inputs should have same dtype"):
        dt.tensordot(a, b.float(), dims=2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        dt.tensordot(a, b, dims=[[1, 1], [0, 0]])
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.tensordot(a, b, dims=[[5], [0]])
    with pytest.raises(RuntimeError, match="tensordot expects dims to be int or"):
        dt.tensordot(a, b, dims=2.0)
    with pytest.raises(TypeError, match="'dims_self' \\(position 3\\) must be tuple of ints, not int"):
        dt.tensordot(a, b, dims=(1, 0))


_LAYOUT_CASES = [
    ("bcwd,bcdh->bcwh", ((4, 3, 6, 5), (4, 3, 5, 2))),
    ("bhqk,bhkd->bqhd", ((2, 3, 4, 6), (2, 3, 6, 5))),
    ("bhqd,bhkd->bhqk", ((2, 3, 4, 5), (2, 3, 6, 5))),
    ("ij,jk->ik", ((3, 4), (4, 5))),
    ("i,j->ij", ((3,), (4,))),
    ("ij,jk->ki", ((3, 4), (4, 5))),  # the right's own letters lead: bmm's operands swap
    ("bhij,hg->bgij", ((1, 3, 4, 5), (3, 6))),  # size-1 b counts as the right's: swap (CaiT)
    ("bhij,hg->bgij", ((2, 3, 4, 5), (3, 6))),
    ("abc,cd->adb", ((1, 3, 4), (4, 5))),
    ("bij,bjk->bki", ((2, 3, 4), (2, 4, 5))),
    ("bi,bj->ji", ((2, 3), (2, 4))),
]


def _einsum_strides(lib):
    g = lib.Generator().manual_seed(0)
    return [
        lib.einsum(eq, *(lib.randn(*s, generator=g) for s in shapes)).stride() for eq, shapes in _LAYOUT_CASES
    ]


def test_einsum_results_are_laid_out_as_pytorchs():
    """Longformer views ``einsum("bcwd,bcdh->bcwh", ...)``: PyTorch's result is contiguous."""
    strides = _einsum_strides(dt)
    assert strides[0] == (36, 12, 2, 1) and strides[1] == (60, 5, 20, 1)
    assert strides[5:] == [(3, 1), (120, 20, 5, 1), (120, 1, 30, 6), (15, 3, 1), (15, 3, 1), (3, 1)]
    g = dt.Generator().manual_seed(1)
    a, b = dt.randn(2, 3, 6, 5, generator=g), dt.randn(2, 3, 5, 2, generator=g)
    assert dt.einsum("bcwd,bcdh->bcwh", a, b).view(2, 18, 2).shape == (2, 18, 2)


@pytest.mark.parity
def test_einsum_strides_match_pytorch(torch):
    assert _einsum_strides(dt) == _einsum_strides(torch)


_MORE_LAYOUT_CASES = [  # one operand, three, and products without a bmm
    ("ijk->ki", ((2, 3, 4),)),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5))),
    ("ij,jk,kl->li", ((2, 3), (3, 4), (4, 5))),
    ("abc,cd,de->abe", ((2, 3, 4), (4, 5), (5, 6))),
    ("i,j,k->kji", ((3,), (4,), (2,))),
    ("ij,ji->ji", ((2, 3), (3, 2))),
    ("ij,kl->lkji", ((2, 3), (4, 5))),
]


def _more_einsum_layouts(lib) -> list:
    g = lib.Generator().manual_seed(0)
    out = []
    for eq, shapes in _MORE_LAYOUT_CASES:
        r = lib.einsum(eq, *(lib.randn(*s, generator=g) for s in shapes))
        out.append((r.stride(), r.is_contiguous()))
    x = lib.zeros(3, 3)
    for eq in ("ij->ji", "ii->i", "ij->ij"):  # nothing summed: a view of the operand
        v = lib.einsum(eq, x)
        v.add_(1)
        out.append((v._is_view(), v.stride(), x._version))
    return out + [x.tolist()]


def test_einsum_of_one_or_three_operands_and_without_bmm_is_laid_out_as_pytorchs():
    # three operands and those without a bmm kept NumPy's layout; one operand with nothing
    # summed shared its memory without being a view
    layouts = _more_einsum_layouts(dt)
    assert layouts[:3] == [((2, 1), True), ((5, 1), True), ((1, 5), False)]
    assert layouts[7:9] == [(True, (1, 3), 1), (True, (4,), 2)]


@pytest.mark.parity
def test_more_einsum_layouts_match_pytorch(torch):
    assert _more_einsum_layouts(dt) == _more_einsum_layouts(torch)


def _wording(lib) -> list:
    """Errors whose words (not only types) programs print: scatters' index dtype, masked_select's
    broadcast, histograms' bins and range, solve's shapes, einsum's sizes."""
    calls = [
        lambda: lib.zeros(2).scatter_add_(0, lib.tensor([0.0]), lib.ones(1)),
        lambda: lib.zeros(2).scatter_reduce_(0, lib.tensor([0.0]), lib.ones(1), "sum"),
        lambda: lib.ones(2, 3).masked_select(lib.tensor([True, False])),
        lambda: lib.ones(5).histc(bins=0),
        lambda: lib.ones(5).histc(bins=3, min=2, max=1),
        lambda: lib.histogram(lib.ones(5), bins=-1),
        lambda: lib.linalg.solve(lib.eye(3), lib.ones(4, 2)),
        lambda: lib.einsum("ij,jk->ik", lib.ones(2, 3), lib.ones(4, 5)),
    ]
    return raised(calls)


def test_errors_worded_as_pytorchs(torch):
    # scatter_add_ named itself, masked_select put the input first, histc/histogram raised
    # NumPy's ValueError, solve and einsum added words of their own
    assert _wording(dt) == _wording(torch)


def _shape_argument_errors(lib) -> list:
    """narrow's start and length, repeat_interleave's repeats, randperm's n, scatter's src dtype."""
    x = lib.ones(2, 3)
    calls = [
        lambda: x.narrow(0, -3, 1),
        lambda: x.narrow(0, 0, -1),
        lambda: x.narrow(0, -1, 2),
        lambda: lib.ones(3).repeat_interleave(lib.tensor([1, 2])),
        lambda: lib.ones(3).repeat_interleave(lib.tensor([[1, 2, 3]])),
        lambda: lib.ones(3).repeat_interleave(lib.tensor([1, -1, 2])),
        lambda: lib.ones(3).repeat_interleave(-1),
        lambda: lib.randperm(-5),
        lambda: lib.ones(2, 2).scatter(1, lib.tensor([[0], [1]]), lib.ones(1, 1).long()),
    ]
    return raised(calls, (IndexError, RuntimeError))


def test_shape_argument_errors_as_pytorchs(torch):
    # narrow said its sum message for a start out of range, repeat_interleave raised NumPy's
    # broadcast error, randperm its own words, scatter checked shapes before the src dtype
    assert _shape_argument_errors(dt) == _shape_argument_errors(torch)


def _products_after_in_place(lib) -> list:
    """Matrix products keep each operand only for the other's gradient (PyTorch's rule): an
    operand that needs no gradient may change in place before backward; ``mm``'s saved
    fields say what was kept."""
    lib.manual_seed(0)
    out = []
    for product in (
        lib.mm,
        lib.matmul,
        lambda a, w: lib.bmm(a[None], w[None]),
        lambda a, w: a @ w[0],
        lambda a, w: lib.einsum("ij,jk->ik", a, w),
        lambda a, w: lib.einsum("ij,jk,k->i", a, w, a[0]),
    ):
        a, w = lib.randn(3, 3), lib.randn(3, 3, requires_grad=True)
        y = product(a, w)
        with lib.no_grad():
            w.mul_(2)  # w is not needed: only a is kept, for w's gradient
        y.sum().backward()
        out.append(w.grad.tolist())
    node = lib.mm(lib.randn(2, 3), lib.randn(3, 4, requires_grad=True)).grad_fn
    out.append([node._saved_self is None, node._saved_mat2 is None, tuple(node._saved_mat2_sym_sizes)])
    out.append([tuple(node._saved_self_sym_strides), tuple(node._saved_mat2_sym_strides)])
    return out


def test_products_keep_only_what_each_gradient_needs():
    assert _products_after_in_place(dt)[-2:] == [[False, True, (3, 4)], [(), (4, 1)]]


@pytest.mark.parity
def test_products_keep_what_pytorchs_keep(torch):
    ours, theirs = _products_after_in_place(dt), _products_after_in_place(torch)
    assert ours[-2:] == theirs[-2:]
    np.testing.assert_allclose(np.array(ours[:-2]), np.array(theirs[:-2]), rtol=1e-5)


def test_matmul_gradgradcheck_with_one_operand_constant():
    a = dt.randn(2, 3, 4, dtype=dt.float64, requires_grad=True)
    b = dt.randn(4, dtype=dt.float64, requires_grad=True)
    assert gradgradcheck(lambda x: dt.matmul(x, b.detach()), (a,))
    assert gradgradcheck(lambda y: dt.matmul(a.detach(), y), (b,))
    assert gradgradcheck(lambda y: dt.matmul(y, a.detach()[0].t()), (b,))
    assert gradgradcheck(lambda x: dt.einsum("bij,j->bi", x, b.detach()), (a,))
    fixed = b.detach().clone()  # (b's own memory moves while gradcheck perturbs it)
    assert gradgradcheck(lambda x, y: dt.einsum("bij,j,j->b", x, y, fixed), (a, b))


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((2, 25, 3), (2, 3, 2)), ((3, 5, 7), (3, 7, 5)), ((1, 25, 3), (4, 3, 2)), ((2, 1, 6, 8), (3, 8, 4))],
)
def test_small_bmm_sums_in_order_each_step_rounded(sa, sb):
    """A batched product with ``inner * rows * columns < 400`` is PyTorch's plain loop:
    ``((0 + a0*b0) + a1*b1) + ...`` in float32 (BLAS sums otherwise: last bits differ)."""
    a = RNG.normal(size=sa).astype(np.float32)
    b = RNG.normal(size=sb).astype(np.float32)
    want = np.zeros(np.broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1]), np.float32)
    for k in range(sa[-1]):
        want = want + a[..., :, k, None] * b[..., None, k, :]
    assert np.array_equal(dt.matmul(dt.tensor(a), dt.tensor(b)).numpy(), want)
    if len(sa) == 3 and sa[0] == sb[0]:
        assert np.array_equal(dt.bmm(dt.tensor(a), dt.tensor(b)).numpy(), want)


def test_small_and_large_bmm_bits_match_pytorch(torch):
    for sa, sb in (((4, 25, 3), (4, 3, 2)), ((2, 6, 10), (2, 10, 6)), ((2, 8, 8), (2, 8, 8))):
        a = RNG.normal(size=sa).astype(np.float32)
        b = RNG.normal(size=sb).astype(np.float32)
        got = dt.bmm(dt.tensor(a), dt.tensor(b)).numpy()
        assert (
            np.array_equal(got, torch.bmm(torch.tensor(a), torch.tensor(b)).numpy())
            or sa[1] * sa[2] * sb[2] >= 400
        )
