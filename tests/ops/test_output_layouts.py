"""Result layouts of ops given a channels-last, transposed or expanded input, as PyTorch's:
``masked_fill``, ``tril``/``triu``, ``renorm``, ``roll``, ``stack`` and the reductions over a
dim (``max``, ``norm``, ``logsumexp``, ...) give row-major results, ``clone`` of an expanded
tensor a dense one in the dim order PyTorch infers, ``rms_norm`` a row-major one unless the
input is channels-last. A ``max_pool2d`` row-major unless channels-last. A ``.view`` after these raised here where it works under PyTorch.
(An element-wise op of operands of different layouts, ``t - t.amax(-1, keepdim=True)``, is
laid out by NumPy's rule, row-major winning, where PyTorch's follows its first operand: a
view works after both.) The values (and gradients)
are those of the same op of a row-major input, bit for bit."""

import numpy as np
import pytest

import disttorch as dt

# ops whose result PyTorch makes row-major (contiguous) for every layout below
ROW_MAJOR = {
    "masked_fill": lambda L, t: t.masked_fill(t > 0, 1.0),
    "masked_fill_bcast_mask": lambda L, t: t.masked_fill(L.ones(t.shape[-1], dtype=L.bool), 2.0),
    "tril": lambda L, t: t.tril(),
    "triu": lambda L, t: t.triu(1),
    "renorm": lambda L, t: t.renorm(2, 1, 1.0),
    "max": lambda L, t: t.max(1)[0],
    "min_keepdim": lambda L, t: t.min(-1, keepdim=True)[0],
    "argmax": lambda L, t: t.argmax(1),
    "amax": lambda L, t: t.amax(0),
    "amin": lambda L, t: t.amin(-1),
    "norm": lambda L, t: t.norm(dim=1),
    "vector_norm": lambda L, t: L.linalg.vector_norm(t, dim=2),
    "logsumexp": lambda L, t: t.logsumexp(1),
    "std": lambda L, t: t.std(1),
    "var": lambda L, t: t.var(2),
    "prod": lambda L, t: t.prod(1),
    "any": lambda L, t: (t > 0).any(1),
    "all": lambda L, t: (t > 0).all(-1),
    "count_nonzero": lambda L, t: L.count_nonzero(t > 0, dim=1),
    "sum": lambda L, t: t.sum(1),
}
# ops whose result PyTorch lays out otherwise for some inputs (compared with its strides)
OTHER = {
    "roll": lambda L, t: t.roll(1, 2),
    "roll_dims": lambda L, t: t.roll((1, 2), (1, 3)),
    "roll_whole_turn": lambda L, t: t.roll(4, 2),
    "stack": lambda L, t: L.stack([t, t]),
    "stack_dim1": lambda L, t: L.stack([t, t], 1),
    "stack_last": lambda L, t: L.stack([t, t], -1),
    "clone": lambda L, t: t.clone(),
    "rms_norm": lambda L, t: L.nn.functional.rms_norm(t, (5,)),
    "cat_empty": lambda L, t: L.cat([t, t[:, :, :0]], 2),
    "max_pool": lambda L, t: L.nn.functional.max_pool2d(t, 2),
}
# element-wise ops of a tensor and its reduction (values and views checked, not strides)
MIXED = {
    "sub_amax": lambda L, t: t - t.amax(-1, keepdim=True),
    "div_norm": lambda L, t: t / t.norm(dim=1, keepdim=True),
    "normalize": lambda L, t: L.nn.functional.normalize(t, dim=1),
}
OPS = {**ROW_MAJOR, **OTHER, **MIXED}
# ops that only select or copy (the rest sum in an order that may follow the input's layout,
# as PyTorch's do: close, not always bitwise, to the row-major input's)
EXACT = {
    "masked_fill",
    "masked_fill_bcast_mask",
    "tril",
    "triu",
    "max",
    "min_keepdim",
    "argmax",
    "amax",
    "amin",
    "any",
    "all",
    "count_nonzero",
    "roll",
    "roll_dims",
    "roll_whole_turn",
    "stack",
    "stack_dim1",
    "stack_last",
    "clone",
    "sub_amax",
    "cat_empty",
    "max_pool",
}


def _inputs(L, dtype):
    base = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    x = L.tensor(base, dtype=dtype)
    return {
        "contiguous": x,
        "channels_last": x.to(memory_format=L.channels_last),
        "transposed": x.transpose(2, 3).contiguous().transpose(2, 3),
        "permuted": x.permute(3, 1, 0, 2).contiguous().permute(2, 1, 3, 0),
        "expanded": x[:, :1].expand(-1, 3, -1, -1),
    }


@pytest.mark.parametrize("name", list(OPS))
def test_values_are_those_of_a_row_major_input_and_view_works(name):
    for layout, x in _inputs(dt, dt.float32).items():
        out = OPS[name](dt, x)
        want = OPS[name](dt, x.contiguous())
        if name in EXACT:
            assert dt.equal(out, want), (name, layout)
        else:
            assert dt.allclose(out, want, rtol=1e-5, atol=1e-6), (name, layout)
        assert out.reshape(-1).shape == (out.numel(),)
        if name in ROW_MAJOR:
            assert out.is_contiguous(), (name, layout, out.stride())
            assert out.view(-1).shape == (out.numel(),)


@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
def test_view_after_each_op(layout):
    """The program that broke: ``.view(-1)`` after the op, for the ops PyTorch makes
    row-major for these layouts."""
    x = _inputs(dt, dt.float32)[layout]
    ops = dict(ROW_MAJOR)
    ops["clone_of_expand"] = lambda L, t: t[:, :1].expand(-1, 3, -1, -1).clone()
    if layout == "transposed":  # (channels-last ones stay so, as PyTorch's)
        ops.update(roll=OTHER["roll"], rms_norm=OTHER["rms_norm"], stack=OTHER["stack"])
    for name, op in ops.items():
        out = op(dt, x)
        if name == "clone_of_expand" and layout == "transposed":
            continue  # (transposed, as PyTorch's)
        assert out.view(-1).shape == (out.numel(),), (name, layout, out.stride())


def test_clone_layouts():
    x = _inputs(dt, dt.float32)
    assert x["channels_last"].clone().stride() == (60, 1, 15, 3)  # dense: its strides kept
    assert x["expanded"].clone().stride() == (60, 20, 5, 1)
    tr = x["transposed"][:, :1].expand(-1, 3, -1, -1)
    assert tr.clone().stride() == (60, 20, 1, 4)  # (dims ordered by stride, as PyTorch's)
    assert x["contiguous"][:, :, ::2].clone().stride() == (30, 10, 5, 1)


def test_rms_norm_keeps_channels_last():
    x = _inputs(dt, dt.float32)["channels_last"]
    out = dt.nn.functional.rms_norm(x, (5,))
    assert out.is_contiguous(memory_format=dt.channels_last)


def test_large_reduction_is_row_major_as_a_small_one():
    """The threaded path already gave a row-major result; the small one followed the input."""
    for shape in ((2, 3, 4, 5), (64, 32, 32, 8)):
        x = dt.ones(shape).to(memory_format=dt.channels_last)
        for out in (x.amax(1), x.max(-1)[0], x.prod(1), x.norm(dim=1), x.logsumexp(1)):
            assert out.is_contiguous(), (shape, out.stride())


@pytest.mark.parametrize(
    "name", ["masked_fill", "tril", "renorm", "max", "norm", "logsumexp", "prod", "roll", "stack"]
)
def test_gradients_match_a_row_major_input(name):
    for layout, x in _inputs(dt, dt.float64).items():
        if layout == "expanded":
            continue
        a = x.detach().requires_grad_()
        b = x.detach().contiguous().requires_grad_()
        oa, ob = OPS[name](dt, a), OPS[name](dt, b)
        w = dt.arange(oa.numel(), dtype=dt.float64).reshape(oa.shape)
        (oa * w).sum().backward()
        (ob * w).sum().backward()
        assert dt.allclose(a.grad, b.grad, rtol=1e-12, atol=1e-12), (name, layout)
    y = _inputs(dt, dt.float64)["contiguous"].detach().requires_grad_()
    # (a transposed layout made inside: gradcheck takes contiguous inputs)
    assert dt.autograd.gradcheck(
        lambda t: OPS[name](dt, t.transpose(2, 3).contiguous().transpose(2, 3)), (y,)
    )


@pytest.mark.parity
def test_strides_match_pytorch(torch):
    for name, op in {**ROW_MAJOR, **OTHER}.items():
        ours, theirs = _inputs(dt, dt.float32), _inputs(torch, torch.float32)
        for layout in ours:
            a, b = op(dt, ours[layout]), op(torch, theirs[layout])
            assert a.stride() == b.stride() or (a.is_contiguous() and b.is_contiguous()), (
                name,
                layout,
                a.stride(),
                b.stride(),
            )
