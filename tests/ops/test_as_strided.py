"""``Tensor.as_strided``: a view of the storage at any sizes, strides and offset, with its
gradient summed back to the input's own elements."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

CASES = {
    "windows": lambda L, x: x.as_strided((3, 4), (2, 1)),
    "offset": lambda L, x: x.as_strided((2, 3), (3, 1), 1),
    "overlapping": lambda L, x: x.as_strided((4, 4), (1, 1)),
    "slice_reads_before_itself": lambda L, x: x[3:7].as_strided((3,), (1,), 0),
    "slice_default_offset": lambda L, x: x[3:7].as_strided((2, 2), (1, 2)),
    "function": lambda L, x: L.as_strided(x.reshape(2, 5), (5,), (2,), 0),
    "broadcast_stride_0": lambda L, x: x.as_strided((3, 2), (0, 1), 4),
}


def test_view_shares_memory_and_reads_the_storage():
    x = dt.arange(10.0)
    v = x.as_strided((2, 3), (3, 1), 1)
    assert v.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] and v.stride() == (3, 1)
    assert x[2:6].as_strided((3,), (1,), 0).tolist() == [0.0, 1.0, 2.0]
    z = dt.zeros(6)
    z.as_strided((2,), (3,)).add_(1)
    assert z.tolist() == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_overlapping_windows_sum_their_gradients():
    a = dt.arange(6.0, requires_grad=True)
    (a * 1).as_strided((2, 2), (1, 1)).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0, 1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", sorted(set(CASES) - {"slice_reads_before_itself"}))
def test_gradcheck(name):
    # (reading storage outside the input is not a function of the input: no gradcheck there)
    x = dt.tensor(np.random.default_rng(0).standard_normal(10), requires_grad=True)
    fn = lambda t: CASES[name](dt, t * 1.0)  # noqa: E731 - a non-leaf, as a view of a leaf would need
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


@pytest.mark.parametrize(
    "args, message",
    [
        (((4,), (3,), 1), "requiring a storage size of 44 are out of bounds for storage of size 40"),
        (((4,), (-1,)), "Negative strides are not supported"),
        (((4,), (1,), -1), "invalid storage offset -1"),
        (((4,), (1, 2)), "mismatch in length of strides and shape"),
    ],
)
def test_bad_geometry_raises_pytorchs_error(args, message):
    with pytest.raises(RuntimeError, match=message):
        dt.arange(10.0, dtype=dt.float32).as_strided(*args)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_as_strided_matches_pytorch(torch, name):
    data = np.random.default_rng(1).standard_normal(10)
    results = []
    for lib in (dt, torch):
        x = lib.tensor(data, requires_grad=True)
        out = CASES[name](lib, x * 1.0)
        (
            out * lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))
        ).sum().backward()
        results.append((tuple(out.shape), out.stride(), out.detach().numpy(), x.grad.numpy()))
    (s1, st1, o1, g1), (s2, st2, o2, g2) = results
    assert s1 == s2 and st1 == st2
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_allclose(g1, g2)


@pytest.mark.parity
def test_set_and_as_strided_in_place_share_memory_as_pytorch(torch):
    def run(L):
        a = L.arange(6.0)
        b = L.zeros(2).set_(a)
        out = [b.shape, b.data_ptr() == a.data_ptr()]
        c = L.zeros(1).set_(a.untyped_storage(), 1, (2, 2), (1, 2))
        out += [c.tolist(), c.storage_offset(), c.stride()]
        out.append(L.zeros(1).set_(a.untyped_storage(), 2, (2,)).tolist())
        out.append(L.zeros(3).set_().shape)
        f = L.arange(6.0)
        f.as_strided_((2, 2), (1, 2), 1)
        out += [f.tolist(), f.storage_offset(), f.stride()]
        c[0, 0] = 100.0  # shared: a sees it
        out.append(a.tolist())
        for bad in (
            lambda: L.zeros(1).set_(L.zeros(2, dtype=L.float64)),
            lambda: L.zeros(1, requires_grad=True).set_(a),
            lambda: c.set_(a.untyped_storage(), 4, (2, 2), (1, 2)),
        ):
            with pytest.raises(RuntimeError) as info:
                bad()
            out.append(str(info.value))
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y.as_strided_((2,), (1,), 1)
        y.sum().backward()
        out.append(x.grad.tolist())
        return [tuple(o) if isinstance(o, L.Size) else o for o in out]

    assert run(dt) == run(torch)


@pytest.mark.parity
def test_set_and_resize_beyond_the_storage_grow_it_as_pytorch(torch):
    def run(L):
        out = []
        s = L.UntypedStorage(8)
        t = L.empty(0).set_(s, 1, (2, 3), (3, 1))  # needs 28 bytes: the storage grows
        t.fill_(1)
        out += [
            s.nbytes(),
            tuple(t.shape),
            t.storage_offset(),
            t.untyped_storage().data_ptr() == s.data_ptr(),
        ]
        a = L.zeros(2)
        b = L.empty(0).set_(a.untyped_storage(), 0, (5,), (1,))
        b[0] = 7  # the tensor the storage came from follows it
        out += [a.untyped_storage().nbytes(), a.tolist(), b[:2].tolist()]  # (the rest uninitialised)
        a = L.arange(4.0)
        v = a[1:]
        v.resize_(10)  # a view grows its base's storage from its own offset
        v[0] = 8
        out += [a.untyped_storage().nbytes(), a.tolist(), v[:3].tolist(), v.data_ptr() - a.data_ptr()]
        a = L.arange(3.0)
        a.resize_(2)
        a.resize_(3)  # the storage kept the third element
        out.append(a.tolist())
        t = L.arange(6.0).reshape(2, 3).t()
        out.append(t.resize_(3, 2).stride())  # the same sizes: unchanged
        out.append(t.resize_(6).tolist())  # others: contiguous over the storage, in memory order
        out.append(L.UntypedStorage(4).resize_(12).nbytes())
        # every view and storage object over the memory sees the reallocation
        a = L.arange(3.0)
        v, c, g = a[:2], a[1:], a.untyped_storage()
        a.resize_(6)
        a[1] = 9
        out += [
            v.tolist(),
            c.tolist(),
            g.nbytes(),
            v.untyped_storage().nbytes(),
            v.data_ptr() == a.data_ptr(),
        ]
        a = L.zeros(2)
        c = a[1:]
        L.empty(0).set_(a.untyped_storage(), 0, (6,), (1,))[1] = 4
        out += [c.tolist(), a.untyped_storage().nbytes()]
        return out

    assert run(dt) == run(torch)


def test_resize_takes_size_by_keyword():
    """``t.resize_(size=...)`` as PyTorch's; sizes given both ways raise."""
    t = dt.zeros(2, 3)
    assert t.resize_(size=(3, 2)).shape == (3, 2)
    assert t.resize_(size=[6]).shape == (6,)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        t.resize_(2, size=(3,))
