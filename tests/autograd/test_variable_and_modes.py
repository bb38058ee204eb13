"""The legacy ``autograd.Variable`` call and the grad modes used as bare decorators."""

import warnings

import pytest

import disttorch as dt


def test_variable_returns_a_detached_tensor():
    a = dt.ones(2, requires_grad=True)
    v = dt.autograd.Variable(a * 2)
    assert isinstance(v, dt.Tensor) and v.grad_fn is None and not v.requires_grad
    w = dt.autograd.Variable(a * 2, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0] and a.grad is None
    assert isinstance(dt.ones(1), dt.autograd.Variable)
    assert dt.autograd.Variable().shape == (0,)


def test_variable_errors_and_volatile_warning():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        dt.autograd.Variable([1, 2])
    with pytest.raises(RuntimeError, match="floating point"):
        dt.autograd.Variable(dt.arange(3), requires_grad=True)
    with pytest.warns(UserWarning, match="volatile was removed"):
        dt.autograd.Variable(dt.ones(1), volatile=True)


def test_grad_modes_decorate_without_brackets():
    @dt.no_grad
    def off():
        return dt.is_grad_enabled()

    @dt.enable_grad
    def on():
        return dt.is_grad_enabled()

    @dt.inference_mode
    def inference():
        return dt.is_inference_mode_enabled(), dt.is_grad_enabled()

    assert off() is False and off.__name__ == "off"
    with dt.no_grad():
        assert on() is True
    assert inference() == (True, False)
    assert dt.is_grad_enabled() and not dt.is_inference_mode_enabled()
    with dt.autograd.no_grad():
        assert not dt.is_grad_enabled()


@pytest.mark.parity
def test_variable_and_bare_decorators_match_pytorch(torch):
    for lib in (dt, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            v = lib.autograd.Variable(lib.ones(2), requires_grad=True)
        assert type(v) is lib.Tensor and v.requires_grad and v.is_leaf

        @lib.no_grad
        def off():
            return lib.is_grad_enabled()

        @lib.inference_mode
        def inference():
            return lib.is_inference_mode_enabled()

        assert off() is False and inference() is True


def test_grad_mode_is_per_thread_as_pytorchs():
    import threading

    seen = {}

    def other_thread():
        a = dt.ones(2, requires_grad=True)
        seen["enabled"] = dt.is_grad_enabled()
        seen["inference"] = dt.is_inference_mode_enabled()
        seen["recorded"] = (a * 2).requires_grad
        seen["inference tensor"] = dt.ones(1).is_inference()

    with dt.inference_mode():
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert not dt.is_grad_enabled()
    assert seen == {"enabled": True, "inference": False, "recorded": True, "inference tensor": False}


def test_set_multithreading_enabled_keeps_its_flag():
    from disttorch.autograd import grad_mode

    with dt.autograd.set_multithreading_enabled(False):
        assert grad_mode._multithreading == [False]
        a = dt.ones(2, requires_grad=True)
        (a * 2).sum().backward()
        assert a.grad.tolist() == [2.0, 2.0]
    assert grad_mode._multithreading == [True]
    switch = dt.autograd.set_multithreading_enabled(False)
    assert grad_mode._multithreading == [False] and switch.clone().mode is False
    switch.__exit__(None, None, None)
    assert grad_mode._multithreading == [True]


@pytest.mark.parity
def test_set_grad_enabled_repr_matches_pytorch(torch):
    def shown(lib):
        prev = lib.is_grad_enabled()
        try:
            return [repr(lib.set_grad_enabled(False)), str(lib.set_grad_enabled(True))]
        finally:
            lib.set_grad_enabled(prev)

    assert [s.replace("disttorch.", "torch.") for s in shown(dt)] == shown(torch)
