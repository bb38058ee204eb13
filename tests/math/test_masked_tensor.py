"""torch.masked.MaskedTensor: construction, data/mask, elementwise ops keeping the mask,
reductions over the specified elements, softmax, autograd and repr, against PyTorch."""

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch.masked import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

DATA = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
MASK = np.array([[True, False, True], [False, False, True]])


def _mt(requires_grad=False, dtype=np.float64):
    return masked_tensor(dt.tensor(DATA.astype(dtype)), dt.tensor(MASK), requires_grad=requires_grad)


@pytest.fixture
def torch_masked():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*MaskedTensor.*")

    def make(requires_grad=False, dtype=np.float64):
        return torch.masked.masked_tensor(
            torch.tensor(DATA.astype(dtype)), torch.tensor(MASK), requires_grad=requires_grad
        )

    return torch, make


def _same(got, want):
    """Same mask, same values at the specified elements."""
    np.testing.assert_array_equal(got.get_mask().numpy(), want.get_mask().numpy())
    m = want.get_mask().numpy()
    np.testing.assert_allclose(
        got.get_data().detach().numpy()[m], want.get_data().detach().numpy()[m], rtol=1e-6
    )


def test_construction_data_mask_and_to_tensor():
    mt = _mt()
    assert isinstance(mt, dt.Tensor) and is_masked_tensor(mt) and not is_masked_tensor(dt.tensor(DATA))
    assert mt.shape == (2, 3) and mt.dtype == dt.float64
    np.testing.assert_array_equal(mt.get_data().numpy(), DATA)
    np.testing.assert_array_equal(mt.get_mask().numpy(), MASK)
    np.testing.assert_array_equal(mt.to_tensor(-1.0).numpy(), np.where(MASK, DATA, -1.0))
    assert dt.masked.MaskedTensor is MaskedTensor


def test_construction_errors():
    d, m = dt.tensor(DATA), dt.tensor(MASK)
    with pytest.raises(TypeError, match="mask must have dtype bool"):
        masked_tensor(d, m.float())
    with pytest.raises(ValueError, match=r"data.dim\(\) must equal mask.dim\(\)"):
        masked_tensor(d, m[0])
    with pytest.raises(ValueError, match=r"data.size\(\) must equal mask.size\(\)"):
        masked_tensor(d, m[:, :2])
    with pytest.raises(TypeError, match="data must be a Tensor"):
        masked_tensor(DATA, m)


@pytest.mark.parity
@pytest.mark.parametrize(
    "op",
    [
        lambda t, x: x.exp(),
        lambda t, x: t.sin(x),
        lambda t, x: (x * 2 - 1).abs().sqrt(),
        lambda t, x: x + 1,
        lambda t, x: 3 / x,
        lambda t, x: x > 2,
        lambda t, x: t.tanh(x - 3),
    ],
)
def test_elementwise_keeps_mask(torch_masked, op):
    torch, make = torch_masked
    _same(op(dt, _mt()), op(torch, make()))


@pytest.mark.parity
def test_binary_with_equal_masks_and_plain_tensors(torch_masked):
    torch, make = torch_masked
    _same(_mt() * _mt() + _mt(), make() * make() + make())
    _same(_mt() + dt.tensor(DATA), make() + torch.tensor(DATA))


def test_binary_needs_equal_masks():
    other = masked_tensor(dt.tensor(DATA), dt.tensor(~MASK))
    with pytest.raises(ValueError, match="Input masks must match"):
        _mt() + other


def test_shape_changing_op_is_a_clear_error():
    with pytest.raises(TypeError, match="MaskedTensor does not support"):
        _mt() @ dt.ones(3, 2, dtype=dt.float64)


REDUCTIONS = [
    ("sum", ()),
    ("sum", (1,)),
    ("sum", (0, True)),
    ("mean", ()),
    ("mean", (0,)),
    ("amax", (1,)),
    ("amin", (1,)),
    ("amax", ()),
    ("prod", (1,)),
    ("argmax", (1,)),
    ("argmin", (1,)),
]


@pytest.mark.parity
@pytest.mark.parametrize("name,args", REDUCTIONS)
def test_reductions_match_pytorch(torch_masked, name, args):
    torch, make = torch_masked
    got, want = getattr(_mt(), name)(*args), getattr(make(), name)(*args)
    assert isinstance(got, MaskedTensor)
    assert tuple(got.shape) == tuple(want.shape)
    _same(got, want)


def test_reduction_of_nothing_specified_is_masked_out():
    x = masked_tensor(dt.tensor([1.0, 2.0]), dt.tensor([False, False]))
    assert repr(x.sum()) == "MaskedTensor(--, False)"
    assert not x.sum().get_mask().item()


@pytest.mark.parity
def test_top_level_functions_dispatch(torch_masked):
    torch, make = torch_masked
    _same(dt.sum(_mt(), 1), torch.sum(make(), 1))
    _same(dt.mean(_mt()), torch.mean(make()))
    _same(dt.amin(_mt(), 1), torch.amin(make(), 1))
    np.testing.assert_array_equal(dt.argmax(_mt(), 1).get_data().numpy(), [2, 2])
    _same(dt.softmax(_mt(), 1), torch.softmax(make(), 1))
    # PyTorch's prototype has no log_softmax of a MaskedTensor; ours is the log of its softmax
    _same(dt.nn.functional.log_softmax(_mt(), 1), torch.softmax(make(), 1).log())


@pytest.mark.parity
def test_gradients_only_at_specified_elements(torch_masked):
    torch, make = torch_masked
    mt, tm = _mt(requires_grad=True), make(requires_grad=True)
    (mt * 2).exp().sum().backward()
    (tm * 2).exp().sum().backward()
    assert isinstance(mt.grad, MaskedTensor)
    _same(mt.grad, tm.grad)
    mt, tm = _mt(requires_grad=True), make(requires_grad=True)
    mt.softmax(1).amax(1).sum().backward()
    tm.softmax(1).amax(1).sum().backward()
    _same(mt.grad, tm.grad)


def test_as_masked_tensor_passes_gradients_to_data():
    data = dt.tensor(DATA, requires_grad=True)
    mt = as_masked_tensor(data, dt.tensor(MASK))
    assert mt.requires_grad and mt.grad_fn is not None
    mt.mean(1).to_tensor(0.0).sum().backward()
    want = np.where(MASK, 1.0 / MASK.sum(1, keepdims=True), 0.0)
    np.testing.assert_allclose(data.grad.numpy(), want)


def test_gradcheck_through_masked_ops():
    m = dt.tensor(MASK)

    def f(x):
        mt = as_masked_tensor(x, m)
        return (mt.exp() * mt).softmax(1).sum(1).to_tensor(0.0) + mt.prod(1).to_tensor(0.0)

    x = dt.tensor(np.random.default_rng(0).standard_normal((2, 3)), requires_grad=True)
    assert dt.autograd.gradcheck(f, (x,))


@pytest.mark.parity
def test_repr_matches_pytorch(torch_masked):
    torch, make = torch_masked
    for mk in (lambda t, x: x, lambda t, x: x.sum(), lambda t, x: x.mean(0), lambda t, x: (x * 2).exp()):
        assert repr(mk(dt, _mt())) == repr(mk(torch, make()))
    assert (
        repr(masked_tensor(dt.tensor([1, 2]), dt.tensor([True, False])))
        == "MaskedTensor(\n  [1,       --]\n)"
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "op",
    [
        lambda t, x: x.t(),
        lambda t, x: x[1:],
        lambda t, x: x[0],
        lambda t, x: x.reshape(-1),
        lambda t, x: x.transpose(0, 1).unsqueeze(0),
        lambda t, x: t.cat([x, x * 2], 1),
        lambda t, x: t.stack([x, x], 0),
        lambda t, x: x.expand(2, 2, 3),
    ],
)
def test_views_slicing_and_joining_move_the_mask(torch_masked, op):
    torch, make = torch_masked
    got, want = op(dt, _mt()), op(torch, make())
    assert isinstance(got, MaskedTensor) and tuple(got.shape) == tuple(want.shape)
    _same(got, want)


def test_joining_with_a_plain_tensor_is_an_error():
    with pytest.raises(TypeError, match="make every operand a MaskedTensor"):
        dt.cat([_mt(), dt.tensor(DATA)])
