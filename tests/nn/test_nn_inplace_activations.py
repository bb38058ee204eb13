"""``inplace=True`` activations and dropout (and the ``*_`` forms) modify their input as
PyTorch's do: the same tensor returned, its version bumped, PyTorch's node names, its errors
(a leaf that requires grad; a value saved for backward then overwritten), gradients through
a chain and through a view; ``relu_`` and friends written straight into the input's memory."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."

# name -> f(F, t): the in-place call; the random ones reseed first (disttorch draws as PyTorch)
CASES = {
    "relu": lambda F, t: F.relu(t, inplace=True),
    "relu_": lambda F, t: F.relu_(t),
    "relu_method": lambda F, t: t.relu_(),
    "leaky_relu": lambda F, t: F.leaky_relu(t, 0.2, inplace=True),
    "hardtanh": lambda F, t: F.hardtanh(t, -0.5, 0.7, inplace=True),
    "relu6": lambda F, t: F.relu6(t * 4, inplace=True),
    "elu": lambda F, t: F.elu(t, 0.8, inplace=True),
    "selu": lambda F, t: F.selu(t, inplace=True),
    "celu": lambda F, t: F.celu(t, 1.3, inplace=True),
    "silu": lambda F, t: F.silu(t, inplace=True),
    "mish": lambda F, t: F.mish(t, inplace=True),
    "hardsigmoid": lambda F, t: F.hardsigmoid(t * 4, inplace=True),
    "hardswish": lambda F, t: F.hardswish(t * 4, inplace=True),
    "threshold": lambda F, t: F.threshold(t, 0.1, 2.0, inplace=True),
    "rrelu_eval": lambda F, t: F.rrelu(t, inplace=True),
    "dropout": lambda F, t: F.dropout(t, 0.4, inplace=True),
    "dropout2d": lambda F, t: F.dropout2d(t.view(2, 3, 2, 2), 0.5, inplace=True),
}
RANDOM = {"dropout", "dropout2d"}


def _run(lib, name, x0, w0):
    """``f(x * 1)`` (in place), then ``(out * w).sum()`` backward: what is observed."""
    if name in RANDOM:
        lib.manual_seed(3)
    x = lib.tensor(x0, requires_grad=True)
    y = x * 1
    v = y._version
    out = CASES[name](lib.nn.functional, y)
    seen = (out is y or out._base is y, y._version - v, type(out.grad_fn).__name__, out.grad_fn.name())
    (out.reshape(-1) * lib.tensor(w0)).sum().backward()
    return seen, out.detach().numpy().copy(), x.grad.numpy().copy()


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_in_place_activation_matches_pytorch(torch, name):
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal(24), rng.standard_normal(24)
    (same, bumps, _, node), out, grad = _run(dt, name, x0, w0)
    (t_same, t_bumps, _, t_node), t_out, t_grad = _run(torch, name, x0, w0)
    assert (same, bumps, node) == (t_same, t_bumps, t_node)
    np.testing.assert_allclose(out, t_out, rtol=1e-12, atol=1e-14)
    # (PyTorch's float64 celu and hardsigmoid backward use float32 constants: 1e-8 apart)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-7, atol=1e-14)


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "hardtanh", "elu", "silu", "dropout"])
def test_in_place_activation_gradcheck(name):
    """float64 gradients (away from the kinks) of the in-place forms."""
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal(12)
    x0 += np.sign(x0) * 0.05  # no input within 0.05 of a kink (0, -0.5, 0.7)
    x0[np.abs(x0 - 0.7) < 0.05] += 0.1
    x0[np.abs(x0 + 0.5) < 0.05] -= 0.1
    x = dt.tensor(x0, dtype=dt.float64, requires_grad=True)

    def fn(t):
        if name in RANDOM:
            dt.manual_seed(3)
        return CASES[name](dt.nn.functional, t * 1.5)

    assert gradcheck(fn, (x,), eps=1e-6, atol=1e-6)


def test_relu_in_place_writes_the_input_memory_bitwise_as_out_of_place():
    """Large enough for the kernel's threaded rows; -0.0 and NaN kept; no graph: the same buffer."""
    a = np.random.default_rng(2).standard_normal(40000).astype(np.float32)
    a[:3] = [-0.0, np.nan, 0.0]
    x = dt.tensor(a)
    buf = x.numpy()
    expected = dt.relu(x).numpy()
    assert dt.nn.functional.relu(x, inplace=True) is x and x.numpy() is buf and x._version == 1
    assert x.numpy().tobytes() == expected.tobytes()
    y = dt.tensor(a)
    buf = y.numpy()
    dt.nn.functional.leaky_relu_(y, 0.1)
    dt.nn.functional.hardtanh_(y, 0.0, 0.5)
    assert y.numpy() is buf and y._version == 2


@pytest.mark.parity
def test_in_place_errors_match_pytorch(torch):
    """A leaf that requires grad refuses at once; a value saved for backward (or the kept
    result of relu_/leaky_relu_/hardtanh_) then overwritten refuses at backward."""

    def outcome(lib, op):
        try:
            op(lib, lib.nn.functional)
        except RuntimeError as e:
            return str(e).split("\n")[0]
        return None

    def saved_then_relu(L, F):
        y = L.ones(3, requires_grad=True) * 1
        z = y * y
        F.relu(y, inplace=True)
        z.sum().backward()

    def kept_result_modified(inplace_op):
        def op(L, F):
            y = L.ones(3, requires_grad=True) * 1
            inplace_op(F, y).mul_(2).sum().backward()

        return op

    ops = [
        lambda L, F: F.relu(L.ones(3, requires_grad=True), inplace=True),
        lambda L, F: F.dropout(L.ones(3, requires_grad=True), inplace=True),
        lambda L, F: F.elu(L.ones(3, requires_grad=True)[:2], inplace=True),
        saved_then_relu,
        kept_result_modified(lambda F, y: F.relu_(y)),
        kept_result_modified(lambda F, y: F.leaky_relu_(y)),
        kept_result_modified(lambda F, y: F.elu_(y)),
        kept_result_modified(lambda F, y: F.selu(y, inplace=True)),
        kept_result_modified(lambda F, y: F.celu_(y)),
        kept_result_modified(lambda F, y: F.rrelu_(y)),
        kept_result_modified(lambda F, y: F.hardtanh_(y)),  # these keep no result
        kept_result_modified(lambda F, y: F.threshold_(y, 0.0, 1.0)),
        kept_result_modified(lambda F, y: F.silu(y, inplace=True)),
        kept_result_modified(lambda F, y: F.dropout(y, 0.5, inplace=True)),
    ]
    seen = [outcome(dt, op) for op in ops]
    assert seen == [outcome(torch, op) for op in ops]
    assert seen[0] == LEAF_MSG and seen[3] is not None and seen[-1] is None


def _conv_relu_pool(lib, x0, w0, view):
    x = lib.tensor(x0, requires_grad=True)
    w = lib.tensor(w0, requires_grad=True)
    F = lib.nn.functional
    h = F.conv2d(x, w, padding=1)
    if view:
        h[:, :2].relu_()  # rebases h onto CopySlices
    else:
        F.relu(h, inplace=True)
    out = F.max_pool2d(h, 2)
    (out * out).sum().backward()
    return out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), h.grad_fn.name()


@pytest.mark.parity
@pytest.mark.parametrize("view", [False, True], ids=["whole", "view"])
def test_conv_relu_pool_chain_matches_pytorch(torch, view):
    rng = np.random.default_rng(4)
    x0, w0 = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    ours, theirs = _conv_relu_pool(dt, x0, w0, view), _conv_relu_pool(torch, x0, w0, view)
    assert ours[3] == theirs[3].replace("torch::autograd::", "")
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_modules_with_inplace_modify_their_input():
    x = dt.randn(4, 5) * 1
    for layer in (dt.nn.ReLU(inplace=True), dt.nn.LeakyReLU(0.2, True), dt.nn.Dropout(0.3, True)):
        v = x._version
        assert layer(x) is x and x._version == v + 1


@pytest.mark.parity
@pytest.mark.parametrize("slope", [0.01, 1.0, 1.5, -0.3, 0.0])
def test_leaky_relu_bits_match_pytorch_in_and_out_of_place(torch, slope):
    """The select ``x if x > 0 else slope * x`` as a max (min for slopes above 1): the same
    bits, infinities, NaN and -0.0 included."""
    a = np.random.default_rng(5).standard_normal(20000).astype(np.float32)
    a[:6] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-45]
    expected = torch.nn.functional.leaky_relu(torch.tensor(a), slope).numpy().tobytes()
    assert dt.nn.functional.leaky_relu(dt.tensor(a), slope).numpy().tobytes() == expected
    x = dt.tensor(a)
    dt.nn.functional.leaky_relu_(x, slope)
    assert x.numpy().tobytes() == expected


PRODUCERS = {  # an op, then an in-place activation on its result, then backward
    "batch_norm": lambda L, t: L.nn.functional.batch_norm(t, None, None, training=True),
    "layer_norm": lambda L, t: L.nn.functional.layer_norm(t, (6,)),
    "linear": lambda L, t: L.nn.functional.linear(t, L.ones(3, 6)),
    "max_pool": lambda L, t: L.nn.functional.max_pool2d(t, 2),
    "add": lambda L, t: t + 1,
    "sigmoid": lambda L, t: t.sigmoid(),  # keeps its result: backward raises, in PyTorch too
    "exp": lambda L, t: t.exp(),
    "softmax": lambda L, t: t.softmax(-1),
    "gelu": lambda L, t: L.nn.functional.gelu(t),
    "silu": lambda L, t: L.nn.functional.silu(t),
}


@pytest.mark.parity
def test_which_producers_allow_an_in_place_activation_matches_pytorch(torch):
    def outcome(L, producer, act):
        x = L.ones(2, 4, 6, 6).cumsum(-1).sub(3).requires_grad_()
        try:
            act(L.nn.functional, PRODUCERS[producer](L, x)).sum().backward()
        except RuntimeError as e:
            return str(e).split("\n")[0]
        return None

    acts = [
        lambda F, h: F.relu(h, True),
        lambda F, h: F.leaky_relu(h, 0.1, True),
        lambda F, h: F.elu(h, 1.0, True),
    ]
    for producer in PRODUCERS:
        for act in acts:
            assert outcome(dt, producer, act) == outcome(torch, producer, act), producer
