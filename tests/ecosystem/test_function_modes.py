"""``torch.overrides.TorchFunctionMode``: a mode sees the torch functions and Tensor methods
user code calls inside it (Lightning's empty-init mode, transformers' mask helpers rely on
it), as PyTorch's does; with no mode entered the functions are the originals."""

import threading

import pytest
from parity_helpers import name_recorder

import disttorch as dt
from disttorch.overrides import TorchFunctionMode, _get_current_function_mode_stack


def _calls(lib):
    x, w = lib.ones(3), lib.empty(2, 3)
    layer, conv, inputs = lib.nn.Linear(3, 2), lib.nn.Conv1d(1, 1, 2), lib.ones(1, 1, 4)
    with name_recorder(lib) as rec:
        layer(x)  # a layer's own functional call is seen, as in PyTorch
        conv(inputs)
        lib.add(x, x)
        x.sum()
        lib.nn.functional.relu(x)
        lib.nn.init.normal_(w)
        x[0]
        len(x)
        lib.stack([x, x])
    return rec.names


def test_a_mode_sees_functions_methods_and_init_calls():
    assert _calls(dt) == [
        "linear",
        "conv1d",
        "add",
        "sum",
        "relu",
        "normal_",
        "__getitem__",
        "__len__",
        "stack",
    ]


@pytest.mark.parity
def test_a_mode_sees_what_pytorchs_sees(torch):
    assert _calls(dt) == _calls(torch)


class _SkipInit(TorchFunctionMode):
    """Lightning's empty-init idea: ``nn.init`` calls return their tensor untouched."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func.__module__ == "disttorch.nn.init":
            return args[0]
        return func(*args, **(kwargs or {}))


def test_a_mode_can_replace_what_a_call_does():
    dt.manual_seed(0)
    with _SkipInit():
        dt.nn.Linear(4, 3)  # its reset_parameters calls nn.init: skipped, no random draw
    after_skipped = dt.rand(2)
    dt.manual_seed(0)
    untouched = dt.rand(2)
    dt.manual_seed(0)
    dt.nn.Linear(4, 3)
    assert dt.equal(after_skipped, untouched) and not dt.equal(dt.rand(2), untouched)


def _nested(lib, base):
    order = []

    class Tag(base):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_function__(self, func, types, args=(), kwargs=None):
            order.append(f"{self.tag} {func.__name__}")
            return func(*args, **(kwargs or {})) * 2  # this call reaches the next mode out

    x = lib.ones(2)
    with Tag("outer"), Tag("inner"):
        out = lib.add(x, x)
    return order, out.tolist()


def test_the_handler_reaches_the_next_mode_out_and_nothing_recurses():
    order, out = _nested(dt, TorchFunctionMode)
    assert order == ["inner add", "outer add", "outer __mul__"]
    assert out == [16.0, 16.0]  # outer doubles inner's doubling too


@pytest.mark.parity
def test_nested_modes_as_pytorchs(torch):
    from torch.overrides import TorchFunctionMode as TheirMode

    ours, theirs = _nested(dt, TorchFunctionMode), _nested(torch, TheirMode)
    assert ours[1] == theirs[1]
    assert [o.split()[0] for o in ours[0]] == [t.split()[0] for t in theirs[0]]  # operator names differ


def test_functions_are_the_originals_again_after_the_mode_and_other_threads_see_no_mode():
    before = (dt.add, dt.Tensor.__getitem__, dt.nn.functional.relu, dt.nn.init.normal_)
    seen = []

    class Count(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Count() as mode:
        assert _get_current_function_mode_stack() == [mode]
        worker = threading.Thread(target=lambda: dt.add(dt.ones(1), 1))
        worker.start()
        worker.join()
        assert seen == []  # the other thread has no mode entered
        dt.ones(1).add(1)
    assert seen == ["ones", "add"]
    assert (dt.add, dt.Tensor.__getitem__, dt.nn.functional.relu, dt.nn.init.normal_) == before
    assert _get_current_function_mode_stack() == []


def _empty_init_dtypes(lib):
    """lit-llama's ``EmptyInitOnDevice``: a dtype for every device constructor called without
    one, including those a layer's constructor calls; the set of constructors consulted
    before the mode as well as inside it."""
    import importlib

    constructors = importlib.import_module(lib.__name__ + ".utils._device")._device_constructors
    constructors()  # looked up once outside any mode
    base = type(name_recorder(lib)).__mro__[1]

    class EmptyInitOnDevice(base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in constructors() and kwargs.get("dtype") is None:
                kwargs["dtype"] = lib.float64
            return func(*args, **kwargs)

    with EmptyInitOnDevice():
        layers = [lib.nn.Linear(2, 3), lib.nn.LayerNorm(3), lib.nn.Embedding(4, 2)]
        layers += [lib.nn.Conv1d(1, 2, 3), lib.nn.BatchNorm1d(2), lib.nn.GRU(2, 3), lib.nn.PReLU()]
        made = lib.empty(2)
    return [str(t.dtype).split(".")[-1] for m in layers for t in m.state_dict().values()] + [
        str(made.dtype).split(".")[-1]
    ]


def test_a_layers_constructor_calls_factories_a_mode_sees():
    dtypes = _empty_init_dtypes(dt)
    assert dtypes.count("float64") == len(dtypes) - 1  # num_batches_tracked: int64
    with name_recorder() as rec:
        dt.nn.Linear(2, 2)
    assert rec.names[:2] == ["empty", "empty"]  # the Parameter's flag is not a call it sees


@pytest.mark.parity
def test_empty_init_on_device_as_pytorchs(torch):
    assert _empty_init_dtypes(dt) == _empty_init_dtypes(torch)
