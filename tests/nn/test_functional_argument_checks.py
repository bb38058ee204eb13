"""nn.functional's argument checks in PyTorch's order (found by differential fuzzing):
``interpolate``'s option checks before its input-dims check, ``pad``'s mode before its
lengths, ``embedding``'s index dtype before ``max_norm`` rewrites the weight, and the
dtypes ``grid_sample`` takes."""

import pytest
from parity_helpers import raised

import disttorch as dt
import disttorch.nn.functional as F


def test_interpolate_checks_options_before_dims():
    x1 = dt.ones(5)  # no (N, C) dims at all
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x1, size=7, align_corners=True)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x1)
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors supported \(got 1D\)"):
        F.interpolate(x1, size=7)
    x = dt.ones(1, 2, 5)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(x, scale_factor=0.5, mode="bogus", antialias=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(x, size=0, mode="bilinear")
    with pytest.raises(TypeError, match="expected size to be one of int"):
        F.interpolate(x, size=7.0)
    assert F.interpolate(x, size=0, mode="area").shape == (1, 2, 0)


def test_pad_mode_first_and_at_most_three_dims():
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode bogus"):
        F.pad(dt.ones(2, 3), (1,), mode="bogus")
    with pytest.raises(NotImplementedError, match="Padding size 8 is not supported for 5D input"):
        F.pad(dt.ones(1, 2, 3, 4, 3), (1,) * 8, mode="reflect")
    assert F.pad(dt.ones(1, 2, 3, 4, 3), (1,) * 6, mode="reflect").shape == (1, 2, 5, 6, 5)
    with pytest.raises(TypeError, match="must be tuple of ints, not Tensor"):
        F.pad(dt.ones(2, 3), dt.tensor([1, 1]))
    with pytest.raises(TypeError, match="found element of type float at pos 0"):
        F.pad(dt.ones(2, 3), (1.0, 1))
    assert F.pad(dt.ones(2, 3), [1, dt.tensor(1)]).shape == (2, 5)


def test_embedding_checks_before_renormalising():
    w = dt.arange(18.0).view(6, 3)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types"):
        F.embedding(dt.tensor([0.0, 5.0]), w, max_norm=1.0)
    assert w[5].tolist() == [15.0, 16.0, 17.0]  # untouched
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(dt.tensor([0, 1]), dt.ones(5))


def test_grid_sample_dtypes_must_match():
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.grid_sample(dt.ones(1, 2, 4, 5), dt.zeros(1, 3, 2, 2, dtype=dt.float64), align_corners=False)


def test_unfold_fold_geometry_checks_in_pytorchs_order():
    x = dt.ones(1, 2, 5, 6)
    with pytest.raises(
        RuntimeError, match="dilation should be greater than zero, but got dilation_height: 0"
    ):
        F.unfold(x, 2, dilation=0, stride=0, padding=-1)
    with pytest.raises(RuntimeError, match="padding should be non-negative, but got pad_height: -1"):
        F.unfold(x, 2, padding=-1, stride=0)
    with pytest.raises(RuntimeError, match="It is expected kernel_size equals to 2, but got size 3"):
        F.unfold(x, (2, 2, 2))
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor"):
        F.unfold(dt.ones(1, 1, 2, 5, 6), 2)
    with pytest.raises(RuntimeError, match=r"Expected 2D or 3D \(batch mode\) tensor"):
        F.fold(dt.ones(1, 8, 20, 1), (5, 6), 2)
    with pytest.raises(NotImplementedError, match="\"im2col_out_cpu\" not implemented for 'Long'"):
        F.unfold(dt.ones(1, 1, 3, 3, dtype=dt.int64), 2)
    with pytest.raises(NotImplementedError, match="\"reflection_pad2d\" not implemented for 'Bool'"):
        F.pad(dt.ones(1, 1, 3, 3, dtype=dt.bool), (1, 1, 1, 1), mode="reflect")


def _mixed_dtype_errors(lib) -> list:
    """What linear, addmm, convolutions and attention raise for operands of different dtypes."""
    f, d, h = lib.float32, lib.float64, lib.float16
    fn = lib.nn.functional

    def t(*shape, dtype=f):
        return lib.ones(shape, dtype=dtype)

    calls = [
        lambda: fn.linear(t(2, 2, dtype=d), t(3, 2)),
        lambda: fn.linear(t(4, 2, 2, dtype=d), t(3, 2), t(3)),
        lambda: fn.linear(t(2, 2), t(3, 2), t(3, dtype=d)),
        lambda: fn.linear(t(2, 2, dtype=h), t(3, 2)),
        lambda: fn.linear(t(2, dtype=lib.int64), t(3, 2), t(3)),
        lambda: lib.addmm(t(3), t(2, 2, dtype=d), t(2, 3)),
        lambda: fn.conv2d(t(1, 1, 5, 5, dtype=d), t(1, 1, 3, 3)),
        lambda: fn.conv2d(t(1, 1, 5, 5, dtype=d), t(1, 1, 3, 3), t(1)),
        lambda: fn.conv1d(t(1, 1, 5), t(1, 1, 3), t(1, dtype=d)),
        lambda: fn.conv2d(t(1, 1, 5, 5, dtype=d), t(1, 1, 3, 3), t(1, dtype=d)),
        lambda: fn.conv_transpose1d(t(1, 1, 5, dtype=d), t(1, 1, 3), t(1)),
        lambda: fn.scaled_dot_product_attention(t(1, 2, 3), t(1, 2, 3, dtype=d), t(1, 2, 3)),
    ]
    return raised(calls)


def test_operands_of_different_dtypes_fail_with_pytorchs_words(torch):
    # linear with a bias said mm's words (addmm's are PyTorch's), and computed a float16 input
    # with a float32 weight; convolutions added "(input is float64, weight is float32)" and
    # checked the weight before the bias; attention named only the key
    assert _mixed_dtype_errors(dt) == _mixed_dtype_errors(torch)


def _rank_errors(lib) -> list:
    """Pooling inputs of a wrong rank (each kernel words it its own way), flatten of a 0-dim
    tensor, pad_sequence of mismatched trailing sizes, weight_norm of a missing name."""
    fn, x1, x2 = lib.nn.functional, lib.ones(4), lib.ones(2, 2)
    calls = [
        lambda: fn.max_pool1d(x1, 2),
        lambda: fn.max_pool2d(x2, 2),
        lambda: fn.avg_pool1d(x1, 2),
        lambda: fn.avg_pool2d(x2, 2),
        lambda: fn.avg_pool3d(lib.ones(2, 2, 2), 2),
        lambda: fn.adaptive_avg_pool1d(x1, 2),
        lambda: fn.adaptive_max_pool2d(lib.ones(2), 2),
        lambda: fn.adaptive_avg_pool2d(lib.ones(2), (2, 2)),
        lambda: lib.nn.Flatten()(lib.tensor(1.0)),
        lambda: lib.nn.utils.rnn.pad_sequence([lib.ones(2, 3), lib.ones(2, 4)]),
        lambda: lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(2, 2), name="foo"),
    ]
    return raised(calls, (RuntimeError, IndexError, ValueError))


def test_wrong_ranks_and_shapes_fail_with_pytorchs_words(torch):
    # pooling said one message of disttorch's for every op, flatten of a 0-dim tensor took any
    # dim, pad_sequence wrote the sizes as tuples ("tensor a ((3,))"), weight_norm used
    # orthogonal's words
    assert _rank_errors(dt) == _rank_errors(torch)
