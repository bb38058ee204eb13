"""Call forms older PyTorch programs use and PyTorch 2.13 still accepts: the deprecated
scale-first overloads (``p.add_(-lr, grad)``, ``addcmul_(v, a, b)``, ``addmm(beta, x,
alpha, m1, m2)``), the legacy constructor ``Tensor.new``, ``x.tile(2, 1)`` and
``copy_(number)``."""

import warnings

import numpy as np
import pytest

import disttorch as dt

X = np.array([1.0, 2.0, 3.0])
Y = np.array([0.5, 0.25, 2.0])
M1, M2 = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2) / 4


def _t(a):
    return dt.tensor(a)


SCALE_FIRST = {
    "add": (lambda x, y: x.add(-0.1, y), X - 0.1 * Y),
    "add_": (lambda x, y: x.add_(-0.1, y), X - 0.1 * Y),
    "torch.add": (lambda x, y: dt.add(x, -0.1, y), X - 0.1 * Y),
    "sub_": (lambda x, y: x.sub_(2.0, y), X - 2 * Y),
    "addcmul_": (lambda x, y: x.addcmul_(0.5, y, y), X + 0.5 * Y * Y),
    "addcdiv_": (lambda x, y: x.addcdiv_(-0.5, y, y + 1), X - 0.5 * Y / (Y + 1)),
    "torch.addcdiv": (lambda x, y: dt.addcdiv(x, 0.5, y, y), X + 0.5),
}


@pytest.mark.parametrize("name", list(SCALE_FIRST))
def test_scale_first_overloads_warn_and_compute(name):
    call, expect = SCALE_FIRST[name]
    with pytest.warns(UserWarning, match="This overload of .* is deprecated"):
        out = call(_t(X), _t(Y))
    np.testing.assert_allclose(out.numpy(), expect)


def test_beta_alpha_first_overloads():
    c = np.ones((2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(_t(c).addmm_(0.5, 2.0, _t(M1), _t(M2)).numpy(), 0.5 * c + 2 * M1 @ M2)
        np.testing.assert_allclose(_t(c).addmm(0.5, _t(M1), _t(M2)).numpy(), 0.5 * c + M1 @ M2)
        np.testing.assert_allclose(dt.addmm(3.0, _t(c), 0.5, _t(M1), _t(M2)).numpy(), 3 * c + 0.5 * M1 @ M2)
        v = np.array([1.0, -1.0, 2.0])
        np.testing.assert_allclose(dt.addmv(2.0, _t(c[0]), _t(M1), _t(v)).numpy(), 2 * c[0] + M1 @ v)


def test_the_new_forms_stay_silent_and_bad_calls_still_fail():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _t(X).add_(_t(Y), alpha=2)
        _t(X).addcmul_(_t(Y), _t(Y), value=0.5)
        dt.addmm(_t(np.ones((2, 2))), _t(M1), _t(M2), beta=0.5)
    with pytest.raises(TypeError):
        _t(X).add(2, 3)  # two numbers: no overload takes them
    with pytest.raises(TypeError, match="multiple values for argument 'alpha'"):
        _t(X).add(2.0, _t(Y), alpha=3)


def test_tensor_new():
    x = dt.tensor([1.0, 2.0])
    assert x.new().shape == (0,) and x.new().dtype == dt.float32
    assert x.new(2, 3).shape == (2, 3) and x.new(dt.Size([4])).shape == (4,)
    assert x.new((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, as in PyTorch
    assert dt.tensor([1]).new([1.5, 2]).tolist() == [1, 2]
    y = dt.tensor([3.0, 4.0])
    assert x.new(y) is y
    with pytest.raises(TypeError, match="expected a tensor of dtype"):
        x.new(dt.tensor([1, 2]))
    with pytest.raises(TypeError, match="new\\(\\): data must be a sequence \\(got float\\)"):
        x.new(2.5)  # PyTorch's words
    with pytest.raises(TypeError, match="new\\(\\): expected sizes"):
        x.new(2.5, 1)


def test_tile_varargs_and_copy_from_a_number():
    x = dt.ones(2, 2)
    assert (
        x.tile(2, 1).shape == (4, 2) and x.tile((2,)).shape == (2, 4) and x.tile(dims=(3, 1)).shape == (6, 2)
    )
    assert dt.zeros(3, dtype=dt.int64).copy_(2.7).tolist() == [2, 2, 2]
    assert dt.zeros(2).copy_(True).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        dt.zeros(2).copy_([1, 2])


@pytest.mark.parity
def test_legacy_forms_match_pytorch(torch):
    for lib in (dt, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p, g, v = lib.tensor(X), lib.tensor(Y), lib.tensor(Y * 3)
            p.add_(-0.1, g)
            v.mul_(0.9).addcmul_(0.1, g, g)
            p.addcdiv_(-0.01, g, v.sqrt().add_(1e-8))
            out = lib.ones(2, 2, dtype=lib.float64).addmm_(0.5, 2.0, lib.tensor(M1), lib.tensor(M2))
        if lib is dt:
            ours = (p.numpy(), out.numpy())
    np.testing.assert_array_equal(ours[0], p.numpy())
    np.testing.assert_array_equal(ours[1], out.numpy())


def test_byte_tensor_index_is_a_mask():
    x = dt.arange(6.0).reshape(2, 3)
    mask = dt.tensor([[1, 0, 1], [0, 0, 1]], dtype=dt.uint8)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        assert x[mask].tolist() == [0.0, 2.0, 5.0]
    with pytest.warns(UserWarning):
        assert x[dt.tensor([1, 0], dtype=dt.uint8)].tolist() == [[0.0, 1.0, 2.0]]
    with pytest.warns(UserWarning):
        x[mask] = -1.0
    assert x.tolist() == [[-1.0, 1.0, -1.0], [3.0, 4.0, -1.0]]
    assert x[dt.tensor([1, 0])].tolist()[0] == [3.0, 4.0, -1.0]  # int64: positions


def test_indexing_a_zero_dim_tensor_names_item():
    with pytest.raises(IndexError, match=r"invalid index of a 0-dim tensor. Use `tensor.item\(\)`"):
        dt.tensor(3.0).sum()[0]
    with pytest.raises(RuntimeError, match="but got mask with dtype unsigned char"):
        dt.zeros(2).masked_fill(dt.tensor([1, 0], dtype=dt.uint8), 1.0)


# ---------------------------------------------------------------------- the legacy constructor
def _legacy_constructor_facts(L) -> list:
    """What a program sees of ``Tensor(...)``: empty, sizes, data, another tensor (shared
    memory and dtype), and a subclass whose ``__init__`` calls ``super().__init__()``."""

    class Tagged(L.Tensor):
        @staticmethod
        def __new__(cls, data, tag=None):
            return super().__new__(cls, data)

        def __init__(self, data, tag=None):
            super().__init__()
            self.tag = tag

    other = L.tensor([1, 2])
    alias = L.Tensor(other)
    alias[0] = 9
    kept = L.Tensor([1.0, 2.0])
    kept.__init__()  # nothing: the constructor's work is in __new__
    tagged = Tagged([3.0, 4.0], tag="t")
    return [
        tuple(L.Tensor().shape),
        tuple(L.Tensor(2, 0).shape),
        tuple(L.Tensor(L.Size([2, 3])).shape),
        str(L.Tensor([[1, 2]]).dtype).split(".")[-1],
        other.tolist(),
        str(alias.dtype).split(".")[-1],
        kept.tolist(),
        (tagged.tolist(), tagged.tag, type(tagged).__name__),
    ]


def test_the_legacy_constructor_builds_in_new():
    assert _legacy_constructor_facts(dt) == [
        (0,),
        (2, 0),
        (2, 3),
        "float32",
        [9, 2],
        "int64",
        [1.0, 2.0],
        ([3.0, 4.0], "t", "Tagged"),
    ]
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        dt.Tensor(2, device="meta")


@pytest.mark.parity
def test_the_legacy_constructor_as_pytorch(torch):
    assert _legacy_constructor_facts(dt) == _legacy_constructor_facts(torch)
