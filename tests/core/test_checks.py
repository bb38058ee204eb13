"""``torch._check`` and its family (transformers' ``torch_compilable_check`` calls
``_check_with`` and ``_check_tensor_all_with`` in eager code): each error type, the default
and callable messages, PyTorch's type checks, and parity with PyTorch's messages."""

import pytest

import disttorch as dt

DEFAULT = "Expected cond to be True, but got False."


def test_each_check_raises_its_error_with_the_message():
    for fn in (dt._check, dt._check_index, dt._check_value, dt._check_type, dt._check_not_implemented):
        fn(True)
        fn(1 == 1, lambda: "never evaluated")
    with pytest.raises(RuntimeError, match=DEFAULT):
        dt._check(False)
    with pytest.raises(IndexError, match="^bad index 3$"):
        dt._check_index(False, lambda: f"bad index {3}")
    with pytest.raises(ValueError):
        dt._check_value(False)
    with pytest.raises(TypeError):
        dt._check_type(False)
    with pytest.raises(NotImplementedError):
        dt._check_not_implemented(False)
    with pytest.raises(KeyError, match="k"):
        dt._check_with(KeyError, False, lambda: "k")
    with pytest.raises(RuntimeError):
        dt._check_is_size(-1)
    dt._check_is_size(3, max=3)
    with pytest.raises(RuntimeError):
        dt._check_is_size(4, max=3)


def test_tensor_checks_and_argument_errors():
    dt._check_tensor_all(dt.tensor([True, True]))
    dt._check_tensor_all_with(ValueError, dt.ones(2, 3) > 0, lambda: "unused")
    with pytest.raises(ValueError, match="^All examples must have the same number of <eos> tokens.$"):
        dt._check_tensor_all_with(
            ValueError,
            dt.tensor([True, False]),
            lambda: "All examples must have the same number of <eos> tokens.",
        )
    with pytest.raises(TypeError, match="cond must be a bool, but got a Tensor"):
        dt._check(dt.tensor(True))
    with pytest.raises(TypeError, match="cond must be a bool, but got <class 'int'>"):
        dt._check(1)
    with pytest.raises(TypeError, match="message must be a callable"):
        dt._check(False, "text")
    with pytest.raises(AssertionError, match="error_type must be a subclass of Exception but not Warning"):
        dt._check_with(UserWarning, False)
    with pytest.raises(TypeError, match="cond must be a tensor, but got <class 'bool'>"):
        dt._check_tensor_all(True)
    with pytest.raises(TypeError, match="cond tensor must have dtype .*bool, but got .*int64"):
        dt._check_tensor_all(dt.tensor([1]))


def test_assert_async():
    dt._assert_async(dt.tensor(True))
    dt._assert_async(dt.tensor([2]))
    with pytest.raises(RuntimeError, match="Expected Tensor with single nonzero value, but got zero"):
        dt._assert_async(dt.tensor(0.0))
    with pytest.raises(RuntimeError, match="^custom$"):
        dt._assert_async(dt.tensor(False), "custom")
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        dt._assert_async(dt.tensor([True, True]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        dt._assert_async(dt.tensor([]))


@pytest.mark.parity
def test_messages_match_pytorch(torch):
    cases = [
        lambda lib: lib._check(False),
        lambda lib: lib._check_value(False, lambda: "v"),
        lambda lib: lib._check(lib.tensor(True)),
        lambda lib: lib._check(False, "text"),
        lambda lib: lib._check_tensor_all_with(IndexError, lib.tensor([False]), lambda: "i"),
        lambda lib: lib._assert_async(lib.tensor(0)),
    ]
    for case in cases:
        errors = []
        for lib in (dt, torch):
            with pytest.raises(Exception) as info:
                case(lib)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]
