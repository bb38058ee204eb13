"""PyTorch's CPU random streams: same seed, same numbers (exact equality with the installed
PyTorch where the arithmetic is the same; float64 transcendental samplers to an ulp), the
state in PyTorch's byte layout both ways, and the layers, inits and data loading that draw
from it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import disttorch as dt
from disttorch.kernels import torch_random as K
from disttorch.kernels.mt19937 import STATE_SIZE, MT19937Engine


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _np(x):
    if not hasattr(x, "detach"):
        return np.asarray(x)
    if str(x.dtype).endswith("bfloat16"):  # PyTorch's numpy() has no bfloat16: widen (exact)
        x = x.float()
    return x.detach().numpy()


def _same(ours, theirs) -> None:
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    np.testing.assert_array_equal(a, b)


def _close(ours, theirs, exact_share: float = 0.9) -> None:
    """Equal up to the last bits of libm vs NumPy transcendental functions."""
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)
    assert np.mean(a == b) >= exact_share


def _both(torch, fn, seed: int = 1):
    dt.manual_seed(seed)
    torch.manual_seed(seed)
    return fn(dt), fn(torch)


# ----------------------------------------------------------------------------- engine
def test_engine_standard_mt19937_seeding_and_64bit_draws():
    e = MT19937Engine(5489)  # the reference seed of mt19937: its 10000th output is known
    assert int(e.u32(10000)[-1]) == 4123659995
    e.manual_seed(1)
    a = e.u32(4)
    e.manual_seed(1)
    b = e.u64(2)
    assert b.tolist() == [(int(a[0]) << 32) | int(a[1]), (int(a[2]) << 32) | int(a[3])]
    e.manual_seed(2**64 - 1)  # only the low 32 bits seed the twister
    f = e.u32(3)
    e.manual_seed(2**32 - 1)
    assert e.u32(3).tolist() == f.tolist() and e.seed == 2**32 - 1


def test_state_round_trip_mid_stream_with_cached_normal():
    g = dt.Generator().manual_seed(11)
    dt.rand(700, generator=g)  # past one twist of the 624-word state
    dt.randn(3, generator=g)  # scalar Box-Muller: one spare sample cached
    state = g.get_state()
    assert state.dtype == dt.uint8 and state.shape == (STATE_SIZE,)
    a = [dt.randn(1, dtype=dt.float64, generator=g).item() for _ in range(3)]
    g.set_state(state)
    assert [dt.randn(1, dtype=dt.float64, generator=g).item() for _ in range(3)] == a
    g2 = pickle.loads(pickle.dumps(g))
    assert dt.rand(5, generator=g2).tolist() == dt.rand(5, generator=g).tolist()


def test_seed_api_errors_and_values():
    dt.manual_seed(-1)
    assert dt.initial_seed() == 2**64 - 1
    dt.manual_seed(2**63)
    assert dt.initial_seed() == 2**63
    with pytest.raises(ValueError, match="Overflow"):
        dt.manual_seed(2**64)
    with pytest.raises(RuntimeError, match="expected a long"):
        dt.Generator().manual_seed(1.5)
    s = dt.seed()
    assert 0 <= s < 2**64 and dt.initial_seed() == s
    g = dt.Generator()
    assert g.initial_seed() == 67280421310721
    with pytest.raises(RuntimeError, match="size 5056"):
        g.set_state(dt.zeros(10, dtype=dt.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(dt.zeros(5056))
    with pytest.raises(RuntimeError, match="PCG64"):
        g.set_state(dt.tensor(list(b"PCG64\x01" + bytes(50)), dtype=dt.uint8))


def test_randperm_large_n_path_is_inside_out_fisher_yates(monkeypatch):
    # n >= (2**32 - 1) // 20 takes the 64-bit "inside-out" shuffle (too large to compare with
    # PyTorch here): run it on a small n and compare with PyTorch's algorithm written out.
    monkeypatch.setattr(K, "_RANDPERM_WIDE", 10)
    n = 50
    got = K.randperm(MT19937Engine(3), n)
    e = MT19937Engine(3)
    perm = [0] * n
    for i in range(n):
        z = int(e.u64(1)[0]) % (i + 1)
        perm[i] = perm[z]
        perm[z] = i
    assert got.tolist() == perm and sorted(perm) == list(range(n))


# ----------------------------------------------------------------------------- parity
@pytest.mark.parity
@pytest.mark.parametrize("seed", [0, 1, 42, 2**40 + 7])
def test_manual_seed_rand_randn_exact(torch, seed):
    ours, theirs = _both(torch, lambda T: (T.rand(37), T.rand(5, 7, dtype=T.float64), T.randn(1000)), seed)
    for a, b in zip(ours, theirs):
        _same(a, b)
    assert dt.initial_seed() == torch.initial_seed()


@pytest.mark.parity
@pytest.mark.parametrize("n", [1, 5, 15, 16, 17, 31, 100, 1001])
def test_randn_small_and_block_paths(torch, n):
    for dtype in ("float32", "float16", "bfloat16"):
        ours, theirs = _both(torch, lambda T: T.randn(n, dtype=getattr(T, dtype)))
        _same(ours, theirs)
    ours, theirs = _both(torch, lambda T: T.randn(n, dtype=T.float64))
    _close(ours, theirs, 0.8)


@pytest.mark.parity
def test_uniform_normal_in_place_with_bounds_and_strides(torch):
    def draw(T):
        a = T.empty(1000).uniform_(-3.3, 7.1)
        b = T.empty(1000, dtype=T.float64).uniform_(-3.3, 7.1)
        c = T.empty(20, 30).t().uniform_(-1, 2)  # non-contiguous: filled in memory order
        d = T.empty(20, 30).t().normal_(1.0, 2.0)  # non-contiguous: the scalar path
        e = T.empty(100).normal_(0.5, 2.0)
        f = T.empty(100, dtype=T.float16).uniform_(-1, 1)
        g = T.rand(100, dtype=T.bfloat16)
        return a, b, c, d, e, f, g

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parity
def test_randint_and_random_all_dtypes_and_ranges(torch):
    def draw(T):
        out = [
            T.randint(3, 13, (100,)),
            T.randint(-5, 2**40, (100,)),  # range >= 2**32: 64-bit draws
            T.randint(0, 2**29, (50,), dtype=T.int32),  # range >= 2**28: 64-bit draws
            T.randint(-5, 100, (50,), dtype=T.int8),
            T.randint(0, 1000, (50,), dtype=T.float32),
            T.randint(10, (2, 3)),
            T.empty(40, dtype=T.int64).random_(-(2**63), None),  # full 64-bit range
            T.empty(40, dtype=T.uint8).random_(5, None),
            T.empty(40).random_(7),
            T.empty(40).random_(to=9),
        ]
        for dtype in ("uint8", "int8", "int16", "int32", "int64", "float32", "float64", "bool", "float16"):
            out.append(T.empty(60, dtype=getattr(T, dtype)).random_())
        return out

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parity
@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000, 60000])
def test_randperm(torch, n):
    ours, theirs = _both(torch, lambda T: T.randperm(n))
    _same(ours, theirs)
    ours, theirs = _both(torch, lambda T: T.randperm(n, dtype=T.int32))
    _same(ours, theirs)


@pytest.mark.parity
def test_generator_objects_and_state_bytes_interchange(torch):
    g, tg = dt.Generator().manual_seed(77), torch.Generator().manual_seed(77)
    _same(dt.randn(20, generator=g), torch.randn(20, generator=tg))
    _same(dt.randint(0, 5, (9,), generator=g), torch.randint(0, 5, (9,), generator=tg))
    _same(dt.randn(3, dtype=dt.float64, generator=g), torch.randn(3, dtype=torch.float64, generator=tg))
    # same bytes, and each library continues the other's stream (cached normal included)
    _same(g.get_state(), tg.get_state())
    tg2 = torch.Generator().set_state(torch.from_numpy(g.get_state().numpy()))
    g2 = dt.Generator().set_state(dt.from_numpy(tg.get_state().numpy()))
    _same(dt.randn(5, dtype=dt.float64, generator=g2), torch.randn(5, dtype=torch.float64, generator=tg2))
    dt.manual_seed(3)
    torch.manual_seed(3)
    _same(dt.get_rng_state(), torch.get_rng_state())  # freshly seeded: next=0, like PyTorch
    dt.rand(10)
    torch.rand(10)
    _same(dt.get_rng_state(), torch.get_rng_state())


@pytest.mark.parity
def test_bernoulli_dropout_masks(torch):

    def draw(T):
        f = T.nn.functional
        return [
            T.empty(500).bernoulli_(0.3),
            T.empty(50, dtype=T.int32).bernoulli_(0.5),
            T.empty(100).bernoulli_(T.full((100,), 0.3)),
            T.bernoulli(T.full((10, 10), 0.3, dtype=T.float64)),
            T.bernoulli(T.rand(10, 10)),
            T.bernoulli(T.zeros(10, 10), 0.25),
            f.dropout(T.ones(20, 30), 0.3),
            f.dropout2d(T.ones(2, 30, 4, 4), 0.3),
            f.dropout1d(T.ones(3, 8, 5), 0.5),
            f.alpha_dropout(T.ones(20, 30), 0.3, True),
            T.nn.Dropout(0.1)(T.ones(64, 100)),
        ]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


def test_16_bit_dropout_scales_by_the_noise_rounded_to_the_input_dtype():
    """PyTorch's noise is ``bernoulli_(1 - p).div_(1 - p)`` in the input's dtype: a bfloat16
    input with p=0.1 is scaled by 1.109375 (not 1/0.9), and the product rounded once."""
    x = dt.full((64,), 0.330078125, dtype=dt.bfloat16, requires_grad=True)
    y = dt.nn.functional.dropout(x, 0.1)
    kept = y.float()[y.float() != 0]
    assert y.dtype == dt.bfloat16 and len(kept) > 0
    assert set(kept.tolist()) == {0.365234375}  # bfloat16(0.330078125 * 1.109375)
    y.sum().backward()
    assert set(x.grad.float().unique().tolist()) == {0.0, 1.109375}


@pytest.mark.parity
def test_16_bit_dropout_is_pytorchs(torch):
    def draw(T):
        f = T.nn.functional
        x = T.linspace(-3, 3, 300)
        return [f.dropout(x.to(d), p) for d in (T.bfloat16, T.float16) for p in (0.1, 0.3, 0.7)]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parametrize("offset", [0, 1, 623, 624])
@pytest.mark.parametrize("n", [K._BLOCK, K._BLOCK + 311, 3 * 624 * 17 + 5])
def test_compiled_bernoulli_draws_the_numpy_path_bits(monkeypatch, n, offset):
    """The compiled mask loop (numba, kernels/jit.py) against the NumPy blocks: the same mask
    and the same engine state after, from any position in the twister's 624 words (an odd one
    splits a 64-bit draw over two twists)."""
    from disttorch.kernels import jit

    if jit.compiled(K._compile_bernoulli) is None:
        pytest.skip("no compiled loops: numba is not installed (the fast extra) or DISTTORCH_JIT=0")
    masks, after = [], []
    for flag in ("1", "0"):
        monkeypatch.setenv("DISTTORCH_JIT", flag)
        engine = MT19937Engine(7)
        engine.u32(offset)
        masks.append(K.bernoulli_scalar(engine, n, 0.37))
        after.append(engine.get_state())
    np.testing.assert_array_equal(masks[0], masks[1])
    assert after[0] == after[1]
    assert abs(masks[0].mean() - 0.37) < 0.02


@pytest.mark.parity
@pytest.mark.parametrize("jit_flag", ["1", "0"])
def test_large_dropout_masks_are_pytorchs(torch, monkeypatch, jit_flag):
    monkeypatch.setenv("DISTTORCH_JIT", jit_flag)

    def draw(T):
        T.rand(3)  # start mid-way through the twister's words
        return [T.nn.functional.dropout(T.ones(257, 301), 0.2), T.empty(70001).bernoulli_(0.6)]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parity
def test_exponential_cauchy_geometric_log_normal(torch):
    def draw(T):
        return [
            T.empty(200).exponential_(2.0),
            T.empty(200).cauchy_(0.5, 2.0),
            T.empty(200).geometric_(0.3),
            T.empty(200, dtype=T.int64).geometric_(0.3),
            T.empty(201).log_normal_(0.1, 0.5),
        ]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)
    ours, theirs = _both(torch, lambda T: T.empty(300, dtype=T.float64).exponential_(2.0))
    _close(ours, theirs)


@pytest.mark.parity
def test_multinomial_and_poisson(torch):
    def draw(T):
        w = T.rand(3, 20)
        return [
            T.multinomial(w, 5),
            T.multinomial(w, 1),
            T.multinomial(w, 50, replacement=True),
            T.multinomial(T.arange(1.0, 20.0, dtype=T.float64), 7),
            T.poisson(T.tensor([0.0, 0.5, 3.0, 9.9, 10.0, 12.0, 100.0, 1e4] * 5)),
        ]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parity
def test_normal_overloads_exact(torch):
    def draw(T):
        m = T.arange(40.0)
        return [T.normal(m, 2.0), T.normal(1.0, m), T.normal(m, m), T.normal(1.0, 3.0, (40,))]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parity
def test_default_layer_init_and_nn_init(torch):
    def draw(T):
        init = T.nn.init
        return [
            T.nn.Linear(784, 128).weight,
            T.nn.Conv2d(1, 32, 3).weight,
            T.nn.Conv2d(32, 64, 3).bias,
            T.nn.Embedding(10, 20).weight,
            T.nn.LSTM(10, 20).weight_hh_l0,
            T.nn.ConvTranspose2d(4, 8, 3).weight,
            init.xavier_uniform_(T.empty(30, 40)),
            init.xavier_normal_(T.empty(30, 40)),
            init.kaiming_uniform_(T.empty(30, 40), a=0.1),
            init.kaiming_normal_(T.empty(30, 40), mode="fan_out"),
            init.trunc_normal_(T.empty(300, 40)),
            init.trunc_normal_(T.empty(30, 40), a=0.5, b=0.7),
            init.sparse_(T.empty(30, 40), 0.3),
            T.rand(3),  # the stream position after all of it
        ]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)
    ours, theirs = _both(torch, lambda T: T.nn.init.orthogonal_(T.empty(30, 40)))
    np.testing.assert_allclose(_np(ours), _np(theirs), atol=1e-5)  # LAPACK QR rounding


@pytest.mark.parity
def test_data_loading_order(torch):
    def draw(T):
        data = T.utils.data
        ds = data.TensorDataset(T.arange(100))
        first = T.cat([b[0] for b in data.DataLoader(ds, batch_size=10, shuffle=True)])
        second = T.cat([b[0] for b in data.DataLoader(ds, batch_size=10, shuffle=True)])
        g = T.Generator().manual_seed(5)
        seeded = T.cat([b[0] for b in data.DataLoader(ds, batch_size=7, shuffle=True, generator=g)])
        return [
            first,
            second,
            seeded,
            T.tensor(list(data.RandomSampler(range(50), replacement=True, num_samples=70))),
            T.tensor(list(data.SubsetRandomSampler(list(range(0, 100, 3))))),
            T.tensor(list(data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], 30))),
            T.tensor(data.random_split(range(30), [20, 10])[1].indices),
            T.tensor(
                data.random_split(range(30), [0.5, 0.5], generator=T.Generator().manual_seed(4))[0].indices
            ),
        ]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parity
def test_other_samplers_follow(torch):
    def draw(T):
        f = T.nn.functional
        x = T.arange(2 * 3 * 10 * 10.0).reshape(2, 3, 10, 10)
        q = T.arange(64.0).reshape(2, 4, 8)
        return [
            f.rrelu((T.arange(50.0) - 25) / 16, training=True),
            f.fractional_max_pool2d(x, 2, output_size=5),
            f.scaled_dot_product_attention(T.ones(2, 4, 8), T.ones(2, 4, 8), q, dropout_p=0.5),
            T.distributions.Categorical(T.tensor([0.1, 0.2, 0.7])).sample((20,)),
            T.distributions.Bernoulli(T.full((20,), 0.3)).sample(),
            T.distributions.Normal(T.zeros(20), T.ones(20)).sample(),
            T.distributions.Poisson(T.full((20,), 4.0)).sample(),
        ]

    ours, theirs = _both(torch, draw)
    for a, b in zip(ours, theirs):
        _same(a, b)


def test_kernel_uniform_replaces_a_value_rounded_up_to_high():
    e = MT19937Engine(0)
    hi = 1.0 + 2.0**-20
    vals = K.uniform(e, 100000, np.dtype(np.float16), 1.0, hi)  # rounds to 1.0 or hi in float16
    assert np.all(vals == np.float16(1.0))


class _Draws:
    """A dataset whose items are draws of the worker's torch, NumPy and ``random`` streams."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 4

    def __getitem__(self, i):
        import random

        return self.lib.tensor([float(self.lib.rand(1).item()), float(np.random.rand()), random.random()])


@pytest.mark.parity
@pytest.mark.timeout(120)
def test_dataloader_worker_seeds(torch):
    def draw(T):
        loader = T.utils.data.DataLoader(_Draws(T), batch_size=2, num_workers=2)
        return T.cat([b for b in loader])

    ours, theirs = _both(torch, draw, seed=9)
    np.testing.assert_array_equal(_np(ours).astype(np.float64), _np(theirs).astype(np.float64))


@pytest.mark.parity
@pytest.mark.timeout(120)
def test_persistent_workers_draw_the_base_seed_once(torch):
    def draw(T):
        ds = T.utils.data.TensorDataset(T.arange(12))
        loader = T.utils.data.DataLoader(
            ds, batch_size=4, shuffle=True, num_workers=1, persistent_workers=True
        )
        return T.cat([b[0] for _ in range(2) for b in loader] + [T.rand(2)])

    ours, theirs = _both(torch, draw, seed=4)
    np.testing.assert_array_equal(_np(ours).astype(np.float64), _np(theirs).astype(np.float64))


@pytest.mark.parity
@pytest.mark.timeout(120)
def test_persistent_workers_continue_their_random_streams(torch):
    def draw(T):  # the first pass stops after one batch: the worker's prefetched draws still count
        loader = T.utils.data.DataLoader(_Draws(T), batch_size=1, num_workers=1, persistent_workers=True)
        first = next(iter(loader))
        return T.cat([first, *(b for _ in range(2) for b in loader), T.rand(1, 3)])

    ours, theirs = _both(torch, draw, seed=6)
    np.testing.assert_array_equal(_np(ours).astype(np.float64), _np(theirs).astype(np.float64))


@pytest.mark.timeout(120)
def test_default_generator_starts_from_os_entropy():
    import subprocess
    import sys

    code = "import disttorch; print(disttorch.initial_seed())"
    seeds = {
        int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    }
    seeds.add(
        int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    )
    assert len(seeds) == 2 and all(0 <= s < 2**64 for s in seeds)
    assert dt.Generator().initial_seed() == 67280421310721


@pytest.mark.parity
def test_multinomial_without_replacement_runs_into_zero_weights(torch):
    ours, theirs = _both(torch, lambda T: T.multinomial(T.tensor([1.0, 0.0, 0.0]), 2))
    _same(ours, theirs)


def _layout_draws(lib):
    """Draws whose noise PyTorch makes with ``empty_like`` (the input's layout) and fills in
    memory order: a transposed input's values come out in its own order."""
    lib.manual_seed(0)
    x = lib.arange(1.0, 25.0).reshape(4, 6).t()
    lstm = lib.nn.LSTM(3, 4, batch_first=True)  # its output is a transposed view, as PyTorch's
    out, _ = lstm(lib.ones(2, 5, 3))
    lib.manual_seed(1)
    return [
        lib.nn.functional.dropout(x, 0.5),
        lib.nn.functional.alpha_dropout(x, 0.5, training=True),
        lib.nn.functional.dropout(out, 0.5) != 0,
        lib.rand_like(x),
        lib.randn_like(lib.ones(3, 20).t()),
        lib.randint_like(x, 10),
        lib.rand_like(x, memory_format=lib.contiguous_format),
        lib.rand(2),
    ]


@pytest.mark.parity
def test_like_draws_and_dropout_follow_the_inputs_layout_as_pytorch(torch):
    ours, theirs = _layout_draws(dt), _layout_draws(torch)
    for a, b in zip(ours, theirs):
        assert a.stride() == b.stride()
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)
