"""torch.quasirandom.SobolEngine: PyTorch's sequence (plain and scrambled with a seed), the
stratification that makes it low-discrepancy, the engine's state operations and errors."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.quasirandom import SobolEngine


def test_first_points_and_dtype():
    pts = SobolEngine(dimension=5).draw(3)
    assert pts.dtype == dt.float32 and tuple(pts.shape) == (3, 5)
    expected = [[0, 0, 0, 0, 0], [0.5] * 5, [0.75, 0.25, 0.25, 0.25, 0.75]]
    np.testing.assert_array_equal(pts.numpy(), expected)
    assert SobolEngine(2).draw(4, dtype=dt.float64).dtype == dt.float64


@pytest.mark.parametrize("scramble", [False, True])
def test_every_dyadic_interval_holds_one_point(scramble):
    """The first 2**m points put exactly one point in each [i/2**m, (i+1)/2**m) of every
    coordinate (scrambling keeps this)."""
    m = 6
    pts = SobolEngine(40, scramble=scramble, seed=3).draw_base2(m, dtype=dt.float64).numpy()
    cells = np.floor(pts * 2**m).astype(int)
    for d in range(pts.shape[1]):
        assert sorted(cells[:, d]) == list(range(2**m))


def test_draw_in_pieces_equals_one_draw_and_fast_forward_skips():
    whole = SobolEngine(7, scramble=True, seed=11).draw(50).numpy()
    eng = SobolEngine(7, scramble=True, seed=11)
    parts = [eng.draw(1), eng.draw(9), eng.draw(0), eng.draw(40)]
    np.testing.assert_array_equal(np.concatenate([p.numpy() for p in parts]), whole)
    eng = SobolEngine(7, scramble=True, seed=11).fast_forward(13)
    np.testing.assert_array_equal(eng.draw(5).numpy(), whole[13:18])
    eng.fast_forward(2)
    np.testing.assert_array_equal(eng.draw(3).numpy(), whole[20:23])
    assert eng.num_generated == 23
    np.testing.assert_array_equal(eng.reset().draw(4).numpy(), whole[:4])


def test_out_and_repr_and_seeded_reproducibility():
    out = dt.empty(1)
    eng = SobolEngine(3, scramble=True, seed=5)
    res = eng.draw(4, out=out)
    assert res is out and tuple(out.shape) == (4, 3)
    np.testing.assert_array_equal(out.numpy(), SobolEngine(3, scramble=True, seed=5).draw(4).numpy())
    assert repr(eng) == "SobolEngine(dimension=3, scramble=True, seed=5)"
    assert repr(SobolEngine(2)) == "SobolEngine(dimension=2)"
    dt.manual_seed(0)
    a = SobolEngine(4, scramble=True).draw(8)
    dt.manual_seed(0)
    assert dt.equal(a, SobolEngine(4, scramble=True).draw(8))
    assert not dt.equal(a, SobolEngine(4, scramble=True, seed=1).draw(8))


def test_errors():
    with pytest.raises(ValueError, match=r"\[1, 21201\]"):
        SobolEngine(0)
    with pytest.raises(ValueError, match=r"\[1, 21201\]"):
        SobolEngine(21202)
    with pytest.raises(TypeError, match="dimension must be an int"):
        SobolEngine(2.5)
    eng = SobolEngine(2)
    eng.draw(3)
    with pytest.raises(ValueError, match="power of 2"):
        eng.draw_base2(2)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        eng.draw(2, dtype=dt.int64)
    with pytest.raises(ValueError, match="non-negative"):
        eng.draw(-1)
    with pytest.raises(ValueError, match="2\\*\\*30 points"):
        eng.fast_forward(2**30)


@pytest.mark.parity
@pytest.mark.parametrize(
    "dimension,scramble,seed", [(1, False, None), (9, False, None), (33, True, 0), (200, True, 2**40 + 3)]
)
def test_sequence_equals_pytorch(dimension, scramble, seed):
    torch = pytest.importorskip("torch")
    theirs = torch.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed)
    ours = SobolEngine(dimension, scramble=scramble, seed=seed)
    steps = [("draw", 1, None), ("draw", 6, "float64"), ("ff", 9), ("draw", 64, None), ("reset",)]
    steps += [("draw", 4, "float64"), ("ff", 0), ("draw_base2", 2, None), ("draw", 17, None)]
    for step in steps:
        if step[0] == "ff":
            theirs.fast_forward(step[1])
            ours.fast_forward(step[1])
        elif step[0] == "reset":
            theirs.reset()
            ours.reset()
        else:
            t_dt = getattr(torch, step[2]) if step[2] else None
            o_dt = getattr(dt, step[2]) if step[2] else None
            x = getattr(theirs, step[0])(step[1], dtype=t_dt).numpy()
            y = getattr(ours, step[0])(step[1], dtype=o_dt).numpy()
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(ours.sobolstate.numpy(), theirs.sobolstate.numpy())
    np.testing.assert_array_equal(ours.quasi.numpy(), theirs.quasi.numpy())


@pytest.mark.parity
def test_direction_numbers_of_all_21201_dimensions_equal_pytorch():
    torch = pytest.importorskip("torch")
    ours = SobolEngine(21201).sobolstate.numpy()
    np.testing.assert_array_equal(ours, torch.quasirandom.SobolEngine(21201).sobolstate.numpy())


@pytest.mark.parity
def test_unseeded_scrambles_draw_from_the_default_generator_as_pytorch(torch):
    torch.manual_seed(3)
    dt.manual_seed(3)
    want = torch.quasirandom.SobolEngine(5, scramble=True).draw(6).numpy()
    np.testing.assert_array_equal(SobolEngine(5, scramble=True).draw(6).numpy(), want)
