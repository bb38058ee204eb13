"""The operators a ``TorchDispatchMode`` is handed for calls PyTorch routes to differently
named or differently filled ATen operators: ``unique`` (``aten._unique2``,
``aten.unique_dim``), ``view(dtype)`` (then ``aten.detach``) and the random ``*_like``
factories (``pin_memory=False``, the overload by ``low``/``generator``)."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt


def _plain(lib, value):
    """A tensor as its shape, a dtype or generator by name: comparable between libraries."""
    if isinstance(value, lib.Tensor):
        return list(value.shape)
    if isinstance(value, (lib.dtype, lib.Generator)):
        return str(value).split(".")[-1] if isinstance(value, lib.dtype) else "Generator"
    return value


def _handed(lib) -> list:
    pd = importlib.import_module(f"{lib.__name__}.utils._python_dispatch")
    log: list = []

    class Log(pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            shown = [_plain(lib, a) for a in args]
            log.append([str(func), shown, {k: _plain(lib, v) for k, v in kwargs.items()}])
            return func(*args, **kwargs)

    x = lib.tensor([3.0, 1.0, 3.0, 2.0])
    g = lib.Generator().manual_seed(0)
    with Log():  # the results are read outside: disttorch hands a mode tolist and repr too
        out = [
            lib.unique(x),
            lib.unique(x, return_inverse=True, return_counts=True),
            lib.unique(x, sorted=False).sort().values,
            x.reshape(2, 2).unique(dim=0, return_counts=True),
            x.view(lib.int32),
            lib.randn_like(x),
            lib.rand_like(x, dtype=lib.float64, generator=g),
            lib.randint_like(x, 2, 3),
            lib.randint_like(x, 5, generator=g),
        ]
    results = [[t.tolist() for t in o] if isinstance(o, tuple) else o.tolist() for o in out[:5]]
    results += [[list(t.shape), _plain(lib, t.dtype)] for t in out[5:]]
    return [log, results]


def test_a_dispatch_mode_is_handed_pytorchs_operators():
    log, results = _handed(dt)
    assert [entry[0] for entry in log] == [
        "aten._unique2.default",
        "aten._unique2.default",
        "aten._unique2.default",
        "aten.sort.default",
        "aten.view.default",
        "aten.unique_dim.default",
        "aten.view.dtype",
        "aten.detach.default",
        "aten.randn_like.default",
        "aten.rand_like.generator",
        "aten.randint_like.low_dtype",
        "aten.randint_like.generator",
    ]
    assert log[1][1] == [[4], True, True, True] and log[2][1] == [[4], False]
    assert log[5][1] == [[2, 2], 0, True, False, True]
    assert all(entry[2]["pin_memory"] is False for entry in log[8:])
    assert results[:4] == [
        [1.0, 2.0, 3.0],
        [[1.0, 2.0, 3.0], [2, 0, 2, 1], [1, 1, 2]],
        [1.0, 2.0, 3.0],
        [[[3.0, 1.0], [3.0, 2.0]], [1, 1]],
    ]
    assert results[7] == [[4], "float32"]


@pytest.mark.parity
def test_a_dispatch_mode_is_handed_what_pytorch_hands(torch):
    assert _handed(dt) == _handed(torch)
