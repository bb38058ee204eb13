"""torch.utils.checkpoint: real recomputation (forward counted), identical gradients
(dropout included), less memory held between forward and backward, nesting,
autograd.grad, checkpoint_sequential, PyTorch's reentrant rules and errors."""

import gc
import tracemalloc

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential


def _model():
    dt.manual_seed(0)
    return nn.Sequential(
        nn.Linear(6, 16), nn.Tanh(), nn.Dropout(0.3), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 2)
    )


def _grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_recomputes_and_gives_same_gradients(use_reentrant):
    model = _model()
    calls = []

    def run(inp):
        calls.append(1)
        return model(inp)

    x = dt.randn(5, 6, requires_grad=True)
    dt.manual_seed(7)
    out = checkpoint(run, x, use_reentrant=use_reentrant)
    assert len(calls) == 1
    (out * out).sum().backward()
    assert len(calls) == 2  # forward ran again in backward
    got = _grads(model, x)
    model.zero_grad()
    x.grad = None
    dt.manual_seed(7)
    ref = run(x)
    (ref * ref).sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    for a, b in zip(got, _grads(model, x)):
        np.testing.assert_array_equal(a, b)  # same dropout mask: bit-identical gradients


def test_gradcheck_through_checkpoint():
    w = dt.randn(3, 3, dtype=dt.float64, requires_grad=True)
    x = dt.randn(2, 3, dtype=dt.float64, requires_grad=True)
    assert dt.autograd.gradcheck(
        lambda a, b: checkpoint(lambda u: (u @ b).sin().exp(), a, use_reentrant=False), (x, w)
    )


def test_less_memory_held_between_forward_and_backward():
    dt.manual_seed(0)
    blocks = [nn.Sequential(nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh()) for _ in range(6)]
    x = dt.randn(512, 256, requires_grad=True)

    def held(use_checkpoint):
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        h = x
        for b in blocks:
            h = checkpoint(b, h, use_reentrant=False) if use_checkpoint else b(h)
        loss = h.sum()
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        loss.backward()
        return used, [b[0].weight.grad.numpy().copy() for b in blocks]

    plain, g_plain = held(False)
    for b in blocks:
        b.zero_grad()
    ckpt, g_ckpt = held(True)
    # plain keeps 4 activations of 512x256 float32 per block; checkpointed keeps each block's output
    assert ckpt < 0.5 * plain, (ckpt, plain)
    for a, b in zip(g_plain, g_ckpt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_nested_checkpoints_and_autograd_grad():
    lin1, lin2 = nn.Linear(4, 4), nn.Linear(4, 4)
    x = dt.randn(2, 4, requires_grad=True)
    counts = {"inner": 0, "outer": 0}

    def inner(h):
        counts["inner"] += 1
        return lin2(h).relu()

    def outer(h):
        counts["outer"] += 1
        return checkpoint(inner, lin1(h).tanh(), use_reentrant=False)

    out = checkpoint(outer, x, use_reentrant=False)
    grads = dt.autograd.grad(out.sum(), [lin1.weight, lin2.weight, x])
    ref = dt.autograd.grad(lin2(lin1(x).tanh()).relu().sum(), [lin1.weight, lin2.weight, x])
    for a, b in zip(grads, ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    assert counts["outer"] == 2 and counts["inner"] >= 2


def test_closed_over_non_leaf_and_kwargs():
    w = dt.randn(3, requires_grad=True)
    scale = w * 2  # a non-leaf the function closes over
    x = dt.randn(3, requires_grad=True)
    out = checkpoint(lambda a, *, k: (a * scale).pow(k), x, use_reentrant=False, k=3)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), (3 * (x * 2 * w) ** 2 * 2 * x).detach().numpy(), rtol=1e-5)


def test_checkpoint_sequential_matches_plain():
    model = nn.Sequential(*[nn.Linear(5, 5) if i % 2 == 0 else nn.ReLU() for i in range(8)])
    x = dt.randn(4, 5, requires_grad=True)
    out = checkpoint_sequential(model, 3, x, use_reentrant=False)
    out.sum().backward()
    got = _grads(model, x)
    model.zero_grad()
    x.grad = None
    model(x).sum().backward()
    for a, b in zip(got, _grads(model, x)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_reentrant_rules_and_errors():
    lin = nn.Linear(3, 3)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lin, dt.randn(2, 3, requires_grad=True))
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(lin, dt.randn(2, 3), use_reentrant=True)
    assert not out.requires_grad
    assert checkpoint(lin, dt.randn(2, 3), use_reentrant=False).requires_grad
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(lin, dt.randn(2, 3), use_reentrant=True, k=1)
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(lin, dt.randn(2, 3), use_reentrant=False, determinism_check="x")
    a = dt.randn(3, requires_grad=True)
    for restricted in (lambda o: dt.autograd.grad(o.sum(), a), lambda o: o.sum().backward(inputs=[a])):
        out = checkpoint(lambda t: t.exp() * t, a, use_reentrant=True)
        with pytest.raises(
            RuntimeError, match=r"use_reentrant=True, torch.utils.checkpoint is incompatible with \.grad\(\)"
        ):
            restricted(out)
        out = checkpoint(lambda t: t.exp() * t, a, use_reentrant=False)
        restricted(out)
    flip = [False]

    def unstable(a):
        flip[0] = not flip[0]
        return a.exp() if flip[0] else a.sin().cos()

    out = checkpoint(unstable, dt.randn(3, requires_grad=True), use_reentrant=False)
    with pytest.raises(CheckpointError, match="different operations"):
        out.sum().backward()


def test_preserve_rng_state_false_draws_new_mask():
    drop = nn.Dropout(0.5)
    x = dt.ones(2000, requires_grad=True)
    out = checkpoint(drop, x, use_reentrant=False, preserve_rng_state=False)
    out.sum().backward()
    # the recomputation drew another mask: the gradient's mask differs from the output's
    assert not np.array_equal(x.grad.numpy() != 0, out.detach().numpy() != 0)


@pytest.mark.parity
def test_gradients_match_pytorch_checkpoint():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w1, w2, xv = (rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (3, 5), (6, 4)))

    def run(lib):
        a, b = lib.tensor(w1, requires_grad=True), lib.tensor(w2, requires_grad=True)
        x = lib.tensor(xv, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda h: (h @ a.t()).tanh() @ b.t(), x, use_reentrant=False)
        out.pow(2).sum().backward()
        return [t.grad.numpy() for t in (a, b, x)]

    for ours, theirs in zip(run(dt), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_checkpoint_under_autocast_replays_casts_and_leaves_cache_clean():
    # seeded: the default generator starts from a random seed (as PyTorch's), and for some
    # weights the two bfloat16 gradient sums below round one ulp apart
    dt.manual_seed(0)
    lin = nn.Linear(4, 4)
    x = dt.randn(3, 4, requires_grad=True)
    with dt.autocast("cpu"):
        warm = lin(x)  # the weight's cast is cached before the checkpointed call
        out = checkpoint(lambda h: lin(h).relu() + lin(h), x, use_reentrant=False)
        assert out.dtype is dt.bfloat16
    (out.float().sum() + warm.float().sum()).backward()  # recomputation: same casts, no error
    assert not dt.autograd.autocast_state._state.cache  # the recomputation did not fill the live cache
    g = lin.weight.grad.clone()
    lin.zero_grad()
    with dt.autocast("cpu"):
        ref = lin(x).relu() + lin(x)
        warm = lin(x)
    (ref.float().sum() + warm.float().sum()).backward()
    np.testing.assert_allclose(g.numpy(), lin.weight.grad.numpy(), rtol=1e-6)


@pytest.mark.parity
def test_reentrant_checkpoint_is_one_node_as_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    wv, xv = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((2, 4)).astype(np.float32)

    def run(lib):
        w, x = lib.tensor(wv, requires_grad=True), lib.tensor(xv, requires_grad=True)
        calls = []

        def fn(h, scale):
            calls.append(lib.is_grad_enabled())
            return (h @ w.t()).tanh() * scale, h.exp()

        out, other = lib.utils.checkpoint.checkpoint(fn, x, 2.0, use_reentrant=True)
        node = out.grad_fn
        seen = (node.name(), other.grad_fn is node, [type(n).__name__ for n, _ in node.next_functions])
        (out.sum() + other.sum()).backward()
        return seen, calls, [t.grad.numpy() for t in (w, x)]

    ours, theirs = run(dt), run(torch)
    assert ours[0] == theirs[0] == ("CheckpointFunctionBackward", True, ["AccumulateGrad"])
    assert ours[1] == theirs[1] == [False, True]  # forward without recording, backward recomputes
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_device_state_helpers_for_hand_written_recomputation():
    # the pattern of reversible layers: record the RNG states, later replay them to redraw
    # the same dropout mask (no accelerator here: no device states to record or restore)
    from disttorch.utils.checkpoint import (
        DefaultDeviceType,
        check_backward_validity,
        get_device_states,
        set_device_states,
    )

    x = dt.ones(4, 8)
    cpu_state = dt.get_rng_state()
    devices, states = get_device_states(x)
    assert (devices, states) == ([], [])
    first = nn.functional.dropout(x, 0.5)
    with dt.random.fork_rng(devices=devices):
        dt.set_rng_state(cpu_state)
        set_device_states(devices, states)
        again = nn.functional.dropout(x, 0.5)
    assert dt.equal(first, again)
    assert DefaultDeviceType.get_device_type() == "cpu"
    with pytest.raises(RuntimeError, match="without CUDA"):
        set_device_states([0], [cpu_state], device_type="cuda")
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        check_backward_validity((x, 3))


def test_reentrant_checkpoint_with_none_arguments():
    """None among the arguments (transformers' layers pass encoder_hidden_states=None
    positionally under use_reentrant=True) is not a tensor's place."""
    dt.manual_seed(0)
    lin = nn.Linear(3, 3).double()
    x = dt.randn(2, 3, dtype=dt.float64, requires_grad=True)
    scale = dt.tensor(2.0, dtype=dt.float64, requires_grad=True)

    def run(h, mask, s, extra):
        assert mask is None and extra is None
        return lin(h).tanh() * s

    out = checkpoint(run, x, None, scale, None, use_reentrant=True)
    out.pow(2).sum().backward()
    got = [x.grad.numpy().copy(), scale.grad.numpy().copy(), lin.weight.grad.numpy().copy()]
    x.grad = scale.grad = None
    lin.zero_grad()
    run(x, None, scale, None).pow(2).sum().backward()
    for a, b in zip(got, [x.grad.numpy(), scale.grad.numpy(), lin.weight.grad.numpy()]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
