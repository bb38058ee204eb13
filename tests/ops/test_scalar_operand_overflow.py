"""Python numbers an op converts into a tensor's dtype, checked as PyTorch checks them:
``float16_t ** 1e10`` and ``where(c, int8_t, 1000)`` are its RuntimeError, ``alpha`` and
``value`` too; ``t.add(1e10)`` and ``int8_t + 1000`` are not checked (inf, wrapped). An
integer ``fmod`` by a number that wraps to zero divides by zero; a float ``remainder``'s
zeros carry the dividend's sign."""

import math

import pytest

import disttorch as dt

OVERFLOWS = {
    "float16_pow": (lambda L: L.tensor([1.0, 2.0], dtype=L.float16) ** 1e10, "c10::Half"),
    "bfloat16_pow_": (lambda L: L.tensor([1.0], dtype=L.bfloat16).pow_(1e39), "c10::BFloat16"),
    "int8_pow": (lambda L: L.tensor([1, 2], dtype=L.int8).pow(300), "int8_t"),
    "int8_where": (
        lambda L: L.where(L.tensor([True, False]), L.tensor([1, 2], dtype=L.int8), 1000),
        "int8_t",
    ),
    "int64_where_float": (lambda L: L.where(L.tensor([True, False]), L.tensor([1, 2]), 1e39), "float"),
    "float32_scalar_tensor": (lambda L: L.scalar_tensor(1e39), "float"),
    "int16_scalar_tensor": (lambda L: L.scalar_tensor(70000, dtype=L.int16), "int16_t"),
    "float16_alpha": (
        lambda L: L.ones(2, dtype=L.float16).add(L.ones(2, dtype=L.float16), alpha=1e10),
        "c10::Half",
    ),
    "float16_addcmul": (
        lambda L: L.ones(2, dtype=L.float16).addcmul(
            L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16), value=1e39
        ),
        "float",
    ),
    "int8_addcmul": (
        lambda L: L.ones(2, dtype=L.int8).addcmul(
            L.ones(2, dtype=L.int8), L.ones(2, dtype=L.int8), value=1000
        ),
        "int8_t",
    ),
    "float32_lerp": (lambda L: L.ones(2).lerp(L.zeros(2), 1e39), "float"),
}

TAKEN = {
    "float16_add": lambda L: L.tensor([1.0], dtype=L.float16).add(1e10),
    "int8_add": lambda L: L.tensor([1], dtype=L.int8) + 1000,
    "float16_where": lambda L: L.where(L.tensor([True, False]), L.tensor([1.0, 2.0], dtype=L.float16), 1e39),
    "float16_scalar_tensor": lambda L: L.scalar_tensor(1e39, dtype=L.float16),
    "float16_pow_inf": lambda L: L.tensor([2.0], dtype=L.float16) ** math.inf,
    "uint8_where_negative": lambda L: L.where(L.tensor([True]), L.tensor([1], dtype=L.uint8), -1),
}


@pytest.mark.parametrize("name", sorted(OVERFLOWS))
def test_overflowing_number_is_a_runtime_error(name):
    call, type_name = OVERFLOWS[name]
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {type_name} without overflow"):
        call(dt)


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_unchecked_numbers_compute(name):
    TAKEN[name](dt)


def test_integral_alpha_and_negative_integer_powers():
    with pytest.raises(RuntimeError, match="argument alpha must not be a floating point number"):
        dt.tensor([1, 2]).add(dt.tensor([1, 2]), alpha=0.5)
    with pytest.raises(RuntimeError, match="argument alpha must not be a complex number"):
        dt.ones(2).add(dt.ones(2), alpha=1j)
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        dt.ones(2).lerp(dt.zeros(2), 1j)  # (a complex weight of a real tensor)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        dt.tensor([1, 2], dtype=dt.int8) ** -1000


def test_integer_division_by_a_number_wrapping_to_zero():
    x = dt.tensor([1, 2], dtype=dt.int8)
    for call in (lambda: x.fmod(256), lambda: x.remainder(2**40), lambda: x // 256):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            call()


def test_float_remainder_zero_has_the_dividends_sign():
    got = dt.tensor([1.0, -2.0, 3.0]).remainder(-1)
    assert [math.copysign(1, v) for v in got.tolist()] == [1, -1, 1]
    got = (-1) % dt.tensor([1.0, 2.0], dtype=dt.float64)
    assert math.copysign(1, got[0].item()) == -1 and got[1].item() == 1.0


@pytest.mark.parity
def test_pytorch_answers_the_same(torch):
    for name, (call, _) in OVERFLOWS.items():
        with pytest.raises(RuntimeError):
            call(torch)
            pytest.fail(name)
    for call in TAKEN.values():
        call(torch)
    assert str(torch.tensor([1.0, -2.0, 3.0]).remainder(-1).tolist()) == str(
        dt.tensor([1.0, -2.0, 3.0]).remainder(-1).tolist()
    )
