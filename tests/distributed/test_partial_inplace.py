"""In-place ops on ``Partial`` (summand) gradients on real processes, as PyTorch 2.13 answers
(measured under ``torch.distributed.run`` with gloo): the weight of a sequence-parallel
``LayerNorm`` gets a ``Partial(sum)`` gradient; ``clip_grad_value_`` on it raises (an
in-place clamp cannot keep ``Partial``) and changes nothing, a tensor hook that scales the
incoming summand in place scales the whole gradient, one that clamps it raises; on a
``Partial`` DTensor the linear in-place ops run and the others raise."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

_REFUSED = "in-place operations that require placement changes are not supported"
_OPS = {  # op -> arguments; PyTorch: runs (True) or refuses (False) on a Partial DTensor
    "mul_": ((3.0,), True),
    "div_": ((2.0,), True),
    "neg_": ((), True),
    "zero_": ((), True),
    "fill_": ((1.0,), True),
    "clamp_": ((-1.0, 1.0), False),
    "clamp_min_": ((0.0,), False),
    "add_": ((1.0,), False),
    "abs_": ((), False),
    "pow_": ((2,), False),
    "nan_to_num_": ((), False),
}


def _error(fn) -> str | None:
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    return None


def _worker(rank: int, world: int) -> dict:
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from disttorch.distributed.tensor.parallel import SequenceParallel, parallelize_module

    mesh = init_device_mesh("cpu", (world,))
    x = (torch.arange(48, dtype=torch.float64).reshape(2, 6, 4).sin() * 3).chunk(world, dim=1)[rank]

    def grad_of(hook=None):
        m = parallelize_module(torch.nn.LayerNorm(4, dtype=torch.float64), mesh, SequenceParallel())
        if hook is not None:
            m.weight.register_hook(hook)
        (m(x).full_tensor() * torch.arange(4, dtype=torch.float64)).pow(2).sum().backward()
        return m

    m = grad_of()
    before = m.weight.grad.full_tensor().numpy().copy()
    out = {
        "placements": repr(m.weight.grad.placements),
        "whole": before,
        "clip": _error(lambda: torch.nn.utils.clip_grad_value_(m.parameters(), 3.0)),
        "clip_loop": _error(lambda: torch.nn.utils.clip_grad_value_(m.parameters(), 3.0, foreach=False)),
        "after_clip": m.weight.grad.full_tensor().numpy(),
        "hook_scaled": grad_of(lambda g: g.mul_(10)).weight.grad.full_tensor().numpy(),
        "hook_clamp": _error(lambda: grad_of(lambda g: g.clamp_(-0.5, 0.5))),
        "ops": {},
    }
    for name, (args, _) in _OPS.items():
        d = DTensor.from_local(torch.arange(4.0) - 1.5, mesh, [Partial()])
        out["ops"][name] = (_error(lambda: getattr(d, name)(*args)), d.full_tensor().tolist())
    seen = []

    def doubling(g):
        seen.append((type(g).__name__, repr(g.placements), g.full_tensor().numpy()))
        return g * 2

    doubled = grad_of(doubling).weight.grad
    out["hook_saw"], out["hook_doubled"] = seen[0], (repr(doubled.placements), doubled.full_tensor().numpy())
    out["add_"] = {}
    for kind in ("partial", "replicate", "shard"):
        d = DTensor.from_local(torch.arange(4.0) - 1.5 + rank, mesh, [Partial()])
        other = {
            "partial": lambda: DTensor.from_local(torch.ones(4) * (rank + 1), mesh, [Partial()]),
            "replicate": lambda: DTensor.from_local(torch.ones(4), mesh, [Replicate()]),
            "shard": lambda: DTensor.from_local(torch.ones(2), mesh, [Shard(0)]),
        }[kind]()
        error = _error(lambda: d.add_(other))
        out["add_"][kind] = (error, repr(d.placements), d.to_local().tolist(), d.full_tensor().tolist())
    return out


@pytest.fixture(scope="module")
def ranks() -> list:
    return run_ranks(_worker, 2, timeout=120)


def test_clip_grad_value_refuses_a_partial_gradient(ranks):
    for out in ranks:
        assert out["placements"] == "(Partial(sum),)"
        assert out["clip"].startswith(
            f"aten.clamp_min.default: {_REFUSED}. The input has placement (Partial(sum),)"
        )
        assert out["clip_loop"].startswith(f"aten.clamp_.default: {_REFUSED}")
        np.testing.assert_array_equal(out["after_clip"], out["whole"])


def test_hook_changes_the_summand_in_place_as_pytorch(ranks):
    for out in ranks:
        np.testing.assert_allclose(out["hook_scaled"], 10 * out["whole"], rtol=1e-12)
        assert out["hook_clamp"].startswith(f"aten.clamp_.default: {_REFUSED}")


def test_inplace_ops_on_a_partial_dtensor(ranks):
    summands = np.arange(4.0) - 1.5
    for out in ranks:
        for name, (_, runs) in _OPS.items():
            error, whole = out["ops"][name]
            if runs:
                assert error is None, name
            else:
                assert error is not None and _REFUSED in error, name
                np.testing.assert_array_equal(whole, 2 * summands, err_msg=name)


def test_a_hook_sees_the_summand_as_a_partial_dtensor(ranks):
    for out in ranks:
        kind, placements, whole = out["hook_saw"]
        assert (kind, placements) == ("DTensor", "(Partial(sum),)")
        np.testing.assert_allclose(whole, out["whole"], rtol=1e-12)
        placements, doubled = out["hook_doubled"]  # g * 2 stays Partial, and so does .grad
        assert placements == "(Partial(sum),)"
        np.testing.assert_allclose(doubled, 2 * out["whole"], rtol=1e-12)


# PyTorch 2.13's Partial(sum) d (rank r's summand arange(4) - 1.5 + r) after d.add_(other)
# on rank 0: (error, placements, local, whole); a replicated operand is added as 1/n summands
_ADD_ = {
    "partial": (None, "(Partial(sum),)", [-0.5, 0.5, 1.5, 2.5], [1.0, 3.0, 5.0, 7.0]),
    "replicate": (None, "(Partial(sum),)", [-1.0, 0.0, 1.0, 2.0], [-1.0, 1.0, 3.0, 5.0]),
    "shard": (
        "redistribute from S(0) to P(sum) not supported yet",
        "(Partial(sum),)",
        [-1.5, -0.5, 0.5, 1.5],
        [-2.0, 0.0, 2.0, 4.0],
    ),
}


def test_add_into_a_partial_dtensor_as_pytorch(ranks):
    assert ranks[0]["add_"] == _ADD_
