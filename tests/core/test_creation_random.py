"""Creating tensors (from data, filled, ranges, ``_like``) and random sampling with seeds
and generators: values, dtypes, shapes, determinism and error messages."""

import os
import warnings

import numpy as np
import pytest

import disttorch as torch


# ---------------------------------------------------------------------- from data
def test_tensor_copies_and_as_tensor_shares():
    a = np.array([1.0, 2.0], dtype=np.float32)
    t = torch.tensor(a)
    a[0] = 9
    assert t.tolist() == [1.0, 2.0]
    s = torch.as_tensor(a)
    a[1] = 7
    assert s.tolist() == [9.0, 7.0]
    assert torch.as_tensor(s) is s
    assert torch.as_tensor(a, dtype=torch.float64).dtype == torch.float64
    assert torch.as_tensor([1, 2]).dtype == torch.int64


def test_tensor_from_nested_tensors_and_scalars():
    parts = [torch.tensor(1.0), torch.tensor(2.0)]
    assert torch.tensor(parts).tolist() == [1.0, 2.0]
    assert torch.tensor([[torch.tensor(1), 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert torch.tensor(3).shape == () and torch.tensor([]).shape == (0,)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):  # as PyTorch
        c = torch.tensor(w)
    assert not c.requires_grad and not np.shares_memory(c.numpy(), w.detach().numpy())
    with pytest.raises(TypeError):
        torch.tensor("abc")


RAGGED = [
    [[1, 2], [3]],
    [[1, 2], 3],
    [[[1], [2]], [[3], [4, 5]]],
    [[1.0, 2], [3, 4, 5]],
    [[1, 2], []],
    [[1, 2], (3,)],
]


def _ragged_errors(lib) -> list:
    seen = []
    for data in [*RAGGED, [np.ones(2), np.ones(3)]]:
        with pytest.raises((TypeError, ValueError)) as e:
            lib.tensor(data)
        seen.append((type(e.value).__name__, str(e.value)))
    return seen


def _huge_int_answers(lib) -> list:
    """Python ints past int64: PyTorch's parser infers a dtype from the numbers' types alone
    (an int among floats is a float; ints alone are int64, which such an int overflows) and
    reads a scalar (a constructor's, an operand, a fill value) as int64, then uint64."""
    calls = [
        lambda: lib.tensor(2**64),
        lambda: lib.tensor([1, 2**63]),
        lambda: lib.tensor([[1.5], [2**70]]),
        lambda: lib.tensor([1j, -(2**64)]),
        lambda: lib.tensor([True, 2**63]),
        lambda: lib.tensor([[1], [2**70]], dtype=lib.float32),
        lambda: lib.tensor(2**63, dtype=lib.uint64),
        lambda: lib.full((2,), 2**63),
        lambda: lib.full((2,), 2**64),
        lambda: lib.full((1,), -(2**63) - 1, dtype=lib.float64),
        lambda: lib.full((1,), 2**63, dtype=lib.uint64),
        lambda: lib.zeros(2) + 2**64,  # an operand, a fill value, a comparison's other side
        lambda: lib.zeros(2) * -(2**64),
        lambda: lib.zeros(2).add(2**63),
        lambda: lib.zeros(2).fill_(2**64),
        lambda: lib.zeros(2).masked_fill(lib.tensor([True, False]), 2**70),
        lambda: lib.zeros(2) < 2**64,
    ]
    out = []
    for call in calls:
        try:
            t = call()
            out.append((str(t.dtype).split(".")[-1], t.tolist()))
        except (ValueError, OverflowError, RuntimeError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_huge_python_ints_in_constructors():
    got = _huge_int_answers(torch)
    assert got[0] == got[1] == ("ValueError", "Overflow when unpacking long long")
    assert got[2] == ("float32", [[1.5], [float(np.float32(2**70))]])
    assert got[8] == got[11] == got[14] == ("OverflowError", "int too big to convert")
    assert got[12] == ("OverflowError", "can't convert negative int to unsigned")


@pytest.mark.parity
def test_huge_python_ints_in_constructors_as_pytorchs():
    real = pytest.importorskip("torch")  # this file names disttorch ``torch``
    assert _huge_int_answers(torch) == _huge_int_answers(real)


def test_uneven_nested_sequences_fail_with_pytorchs_words():
    # was NumPy's "setting an array element with a sequence. The requested array has an
    # inhomogeneous shape after 1 dimensions..."
    real = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's: a list of ndarrays is slow)
        assert _ragged_errors(torch) == _ragged_errors(real)


def _copy_construct_warnings(lib):
    """What ``tensor(t)`` / ``t.new_tensor(t)`` warn, each line once, and where."""
    x = lib.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):
            lib.tensor(x)
        x.new_tensor(x)
        lib.tensor([1.0]), lib.as_tensor(x)
    return [
        (str(w.message).rpartition(" rather than ")[2], w.category, os.path.basename(w.filename))
        for w in caught
    ]


def test_copy_constructing_from_a_tensor_warns_at_the_callers_line():
    assert _copy_construct_warnings(torch) == [
        ("torch.tensor(sourceTensor).", UserWarning, "test_creation_random.py"),
        ("tensor.new_tensor(sourceTensor).", UserWarning, "test_creation_random.py"),
    ]


@pytest.mark.parity
def test_copy_construct_warnings_as_pytorch():
    real = pytest.importorskip("torch")  # this file names disttorch ``torch``
    assert _copy_construct_warnings(torch) == _copy_construct_warnings(real)


def test_native_once_warnings_come_once(monkeypatch):
    """A read-only array shared (``from_numpy``, ``as_tensor``) and ``cross`` without ``dim``
    warn once per process, as PyTorch's TORCH_WARN_ONCE."""
    from disttorch import _native_warnings

    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    a = np.ones(3)
    a.flags.writeable = False
    v = torch.tensor([1.0, 0.0, 0.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.from_numpy(a), torch.as_tensor(a), torch.tensor(a)
        torch.cross(v, v), torch.cross(v, v), torch.cross(v, v, dim=0)
    texts = [str(w.message) for w in caught]
    assert len(texts) == 2 and all(os.path.basename(w.filename) == "test_creation_random.py" for w in caught)
    assert texts[0].startswith("The given NumPy array is not writable") and "suppressed" in texts[0]
    assert texts[1].startswith("Using torch.cross without specifying the dim arg is deprecated.")


def test_sequence_of_ndarrays_warns_once(monkeypatch):
    """A list holding NumPy arrays (at any depth; not tensors, not NumPy scalars, not an empty
    result) warns once per process through every constructor, as PyTorch's tensor_new."""
    from disttorch import _native_warnings

    monkeypatch.setattr(_native_warnings, "_warned_once", set())
    a = np.zeros(3, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.tensor([torch.zeros(3)]), torch.tensor([np.float32(1)]), torch.tensor([a[:0]])
        assert not caught
        t = torch.tensor([[1.0, 2.0, 3.0], a])
        torch.FloatTensor([a]), torch.Tensor((a,)), torch.zeros(1).new_tensor([a])
    assert t.tolist() == [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]
    assert len(caught) == 1 and os.path.basename(caught[0].filename) == "test_creation_random.py"
    assert str(caught[0].message).startswith(
        "Creating a tensor from a list of numpy.ndarrays is extremely slow."
    )
    for make in (torch.FloatTensor, torch.Tensor, torch.as_tensor):
        monkeypatch.setattr(_native_warnings, "_warned_once", set())
        with pytest.warns(UserWarning, match="list of numpy.ndarrays"):
            make([[a]])


# ---------------------------------------------------------------------- filled
def test_zeros_ones_full_empty_and_like():
    assert torch.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert torch.ones((2,), dtype=torch.int32).tolist() == [1, 1]
    assert torch.zeros([2, 1]).shape == (2, 1) and torch.empty(3, 4).shape == (3, 4)
    assert torch.zeros(torch.Size([2, 2])).shape == (2, 2)
    assert torch.full((2,), 7).dtype == torch.int64
    assert torch.full((2,), 7.0).dtype == torch.float32
    assert torch.full((2,), True).dtype == torch.bool
    assert torch.full((1,), torch.tensor(2.5)).item() == 2.5
    x = torch.ones(2, 3, dtype=torch.float64)
    for like in (torch.zeros_like(x), torch.ones_like(x), torch.empty_like(x), torch.full_like(x, 4)):
        assert like.shape == (2, 3) and like.dtype == torch.float64 and not like.requires_grad
    assert torch.zeros_like(x, dtype=torch.int64).dtype == torch.int64
    assert torch.ones_like(x, requires_grad=True).requires_grad
    assert torch.full_like(x, 4).tolist() == [[4.0] * 3] * 2
    assert torch.ones(2, requires_grad=True).is_leaf
    with pytest.raises(RuntimeError, match="Trying to create tensor with negative dimension -1"):
        torch.zeros(2, -1)


def test_a_layer_of_non_integer_sizes_fails_in_empty_with_pytorchs_words():
    # the layer's weight is empty((out, in, *kernel)): the parser checks the first entry
    with pytest.raises(
        TypeError,
        match=r"^empty\(\): argument 'size' \(position 1\) must be tuple of ints, but found element of type float at pos 0$",
    ):
        torch.nn.Conv2d(4, 6.0, 1)
    with pytest.raises(
        TypeError,
        match=r'failed to unpack the object at pos 2 with error "type must be tuple of ints,but got float"',
    ):
        torch.nn.Linear(2.5, 3)


def test_tensor_new_methods_take_dtype_from_self():
    x = torch.zeros(2, dtype=torch.float64)
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_zeros(2, 3).dtype == torch.float64
    assert x.new_ones((2,)).tolist() == [1.0, 1.0]
    assert x.new_full((2,), 3).tolist() == [3.0, 3.0] and x.new_full((2,), 3).dtype == torch.float64
    assert x.new_empty(4).shape == (4,)
    t = x.new_tensor([1, 2])
    assert t.dtype == torch.float64 and t.tolist() == [1.0, 2.0]
    assert x.new_zeros(2, dtype=torch.int64).dtype == torch.int64
    assert x.new_ones(1, requires_grad=True).requires_grad


def test_arange_linspace_eye():
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4] and torch.arange(5).dtype == torch.int64
    assert torch.arange(1, 4).tolist() == [1, 2, 3]
    assert torch.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert torch.arange(0, 1, 0.25).dtype == torch.float32
    assert torch.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert torch.arange(torch.tensor(3)).tolist() == [0, 1, 2]
    assert torch.arange(3, dtype=torch.float64).dtype == torch.float64
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        torch.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0)
    assert torch.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert torch.linspace(2, 2, 1).tolist() == [2.0] and torch.linspace(0, 1, 0).shape == (0,)
    assert torch.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert torch.eye(2, 3).shape == (2, 3) and torch.eye(3, dtype=torch.int64).dtype == torch.int64


# ---------------------------------------------------------------------- randomness
def test_manual_seed_reproduces_every_sampler():
    def draw():
        return [
            torch.rand(3).tolist(),
            torch.randn(2, 2).tolist(),
            torch.randint(0, 10, (4,)).tolist(),
            torch.randperm(6).tolist(),
            torch.normal(0.0, 1.0, (3,)).tolist(),
            torch.bernoulli(torch.full((5,), 0.5)).tolist(),
            torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 2).tolist(),
        ]

    torch.manual_seed(1234)
    first = draw()
    torch.manual_seed(1234)
    assert draw() == first
    torch.manual_seed(4321)
    assert draw() != first


def test_generators_are_independent_streams():
    g = torch.Generator().manual_seed(7)
    a = torch.randn(4, generator=g)
    torch.manual_seed(0)
    torch.rand(10)  # moving the default generator does not move g
    g.manual_seed(7)
    assert torch.randn(4, generator=g).tolist() == a.tolist()
    assert g.initial_seed() == 7
    state = g.get_state()
    x = torch.rand(3, generator=g)
    g.set_state(state)
    assert torch.rand(3, generator=g).tolist() == x.tolist()
    torch.manual_seed(3)
    s = torch.get_rng_state()
    y = torch.rand(2)
    torch.set_rng_state(s)
    assert torch.rand(2).tolist() == y.tolist() and torch.initial_seed() == 3


def test_rand_randn_randint_randperm_shapes_dtypes_ranges():
    torch.manual_seed(0)
    r = torch.rand(1000)
    assert r.dtype == torch.float32 and 0 <= r.min().item() and r.max().item() < 1
    assert torch.rand(2, 3, dtype=torch.float64).dtype == torch.float64
    n = torch.randn(4000, dtype=torch.float64)
    assert abs(n.mean().item()) < 0.1 and abs(n.std().item() - 1) < 0.1
    assert torch.rand((2, 2), requires_grad=True).requires_grad
    i = torch.randint(3, 6, (1000,))
    assert i.dtype == torch.int64 and set(np.unique(i.numpy())) == {3, 4, 5}
    assert torch.randint(4, (2, 2)).shape == (2, 2)
    assert torch.randint(0, 2, (3,), dtype=torch.int32).dtype == torch.int32
    assert sorted(torch.randperm(10).tolist()) == list(range(10))
    assert torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype == torch.float64
    assert torch.randn_like(torch.zeros(3, 2)).shape == (3, 2)
    assert torch.randint_like(torch.zeros(5), 3).max().item() < 3
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        torch.randint(5, 5, (2,))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.rand(2, dtype=torch.int64)


def test_normal_overloads():
    torch.manual_seed(0)
    mean = torch.arange(4.0)
    out = torch.normal(mean, 0.001)
    assert out.shape == (4,) and np.allclose(out.numpy(), mean.numpy(), atol=0.01)
    out = torch.normal(mean, torch.full((4,), 0.001))
    assert np.allclose(out.numpy(), mean.numpy(), atol=0.01)
    out = torch.normal(5.0, torch.zeros(2, 3))
    assert out.shape == (2, 3) and out.tolist() == [[5.0] * 3] * 2
    out = torch.normal(2.0, 3.0, (1000,))
    assert out.dtype == torch.float32 and abs(out.mean().item() - 2) < 0.3
    assert torch.normal(torch.zeros(2, dtype=torch.float64), 1.0).dtype == torch.float64
    g = torch.Generator().manual_seed(1)
    a = torch.normal(0.0, 1.0, (3,), generator=g)
    g.manual_seed(1)
    assert torch.normal(0.0, 1.0, (3,), generator=g).tolist() == a.tolist()
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        torch.normal(0.0, -1.0, (2,))


def test_normal_with_size_reads_zero_dim_tensors_as_numbers():
    a = torch.normal(0, torch.tensor(2.0), size=(3, 2), generator=torch.Generator().manual_seed(0))
    b = torch.normal(0.0, 2.0, (3, 2), generator=torch.Generator().manual_seed(0))
    assert a.dtype == torch.float32 and a.tolist() == b.tolist()
    c = torch.normal(torch.tensor(1.0), torch.tensor(2.0, dtype=torch.float64), (3,), dtype=torch.float64)
    assert c.dtype == torch.float64 and c.shape == (3,)
    for mean, std in ((torch.zeros(3, 2), 1.0), (0.0, torch.ones(1))):
        with pytest.raises(TypeError, match="'size' goes with float"):
            torch.normal(mean, std, size=(3, 2))


@pytest.mark.parity
def test_normal_with_size_and_zero_dim_std_parity():
    real = pytest.importorskip("torch")
    if real is torch:
        pytest.skip("PyTorch is not installed")
    got = torch.normal(0, torch.tensor(2.0), size=(2, 3), generator=torch.Generator().manual_seed(3))
    want = real.normal(0, real.tensor(2.0), size=(2, 3), generator=real.Generator().manual_seed(3))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(TypeError):
        real.normal(real.zeros(3, 2), 1.0, size=(3, 2))


def test_bernoulli():
    torch.manual_seed(0)
    p = torch.tensor([0.0, 1.0, 0.5]).repeat(1000, 1)
    b = torch.bernoulli(p)
    assert b.dtype == torch.float32 and b.shape == (1000, 3)
    assert b[:, 0].sum().item() == 0 and b[:, 1].sum().item() == 1000
    assert abs(b[:, 2].mean().item() - 0.5) < 0.06
    assert torch.bernoulli(torch.zeros(4), 1.0).tolist() == [1.0] * 4
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
        torch.bernoulli(torch.full((2,), 1.5))


def test_multinomial_with_and_without_replacement():
    torch.manual_seed(0)
    w = torch.tensor([0.0, 10.0, 0.0, 30.0])
    draws = torch.multinomial(w, 4000, replacement=True)
    assert draws.dtype == torch.int64 and draws.shape == (4000,)
    counts = np.bincount(draws.numpy(), minlength=4)
    assert counts[0] == 0 and counts[2] == 0 and abs(counts[3] / 4000 - 0.75) < 0.03
    no_rep = torch.multinomial(torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0]), 5)
    assert sorted(no_rep.tolist()) == [0, 1, 2, 3, 4]
    rows = torch.multinomial(torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), 1)
    assert rows.tolist() == [[0], [2]]
    firsts = [torch.multinomial(torch.tensor([1.0, 9.0]), 1).item() for _ in range(400)]
    assert 0.85 < np.mean(firsts) < 0.95  # the heavier category is drawn first more often
    with pytest.raises(
        RuntimeError, match="cannot sample n_sample > prob_dist.size\\(-1\\) samples without replacement"
    ):
        torch.multinomial(torch.tensor([1.0, 1.0]), 3)
    with pytest.raises(
        RuntimeError, match="invalid multinomial distribution \\(sum of probabilities <= 0\\)"
    ):
        torch.multinomial(torch.tensor([0.0, 0.0]), 1)
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        torch.multinomial(torch.tensor([1.0, -1.0]), 1)


@pytest.mark.parity
def test_range_factories_answer_as_pytorch_for_integer_and_unsupported_dtypes():
    real = pytest.importorskip("torch")  # this file names disttorch ``torch``

    def answer(L, call):
        try:
            return call(L).tolist()
        except NotImplementedError as e:
            return str(e)

    calls = [  # integer dtypes step by the bounds cast to integers (int64 counts in integers too)
        lambda L: L.arange(0, 3, 1.5, dtype=L.int64),
        lambda L: L.arange(0, 3, 1.5, dtype=L.int32),
        lambda L: L.arange(-0.5, 3, 1, dtype=L.int16),
        lambda L: L.arange(0.5, 3.7, 1.5, dtype=L.uint8),
        lambda L: L.arange(3, dtype=L.bool),
        lambda L: L.arange(3, dtype=L.complex64),
        lambda L: L.linspace(0, 1, 3, dtype=L.bool),
        lambda L: L.logspace(0, 1, 3, dtype=L.bool),
    ]
    for call in calls:
        assert answer(torch, call) == answer(real, call)
