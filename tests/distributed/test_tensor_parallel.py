"""Tensor parallelism on real processes: ``parallelize_module`` with the parallel styles
gives the losses, gradients and trained parameters of the unsharded model on one process
(disttorch's, and PyTorch's when it is installed): a Megatron MLP (column- then
row-parallel), sequence parallelism, a transformer-style block with ``SequenceParallel``
and ``PrepareModuleInput``, a rowwise embedding, and ``loss_parallel`` cross-entropy."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

RNG = np.random.default_rng(1)
MLP = {
    "in_proj.weight": RNG.standard_normal((32, 10)) * 0.3,
    "in_proj.bias": RNG.standard_normal(32) * 0.1,
    "out_proj.weight": RNG.standard_normal((5, 32)) * 0.3,
    "out_proj.bias": RNG.standard_normal(5) * 0.1,
}
INPUTS = [RNG.random((20, 10)) for _ in range(3)]
TARGETS = RNG.integers(0, 5, (20,))
BLOCK = {
    "norm.weight": 1 + 0.1 * RNG.standard_normal(8),
    "ffn.w1.weight": RNG.standard_normal((16, 8)) * 0.3,
    "ffn.w2.weight": RNG.standard_normal((8, 16)) * 0.3,
    "emb.weight": RNG.standard_normal((12, 8)),
}
TOKENS = RNG.integers(0, 12, (2, 6))


def _mlp(lib):
    nn = lib.nn

    class ToyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.in_proj = nn.Linear(10, 32)
            self.relu = nn.ReLU()
            self.out_proj = nn.Linear(32, 5)

        def forward(self, x):
            return self.out_proj(self.relu(self.in_proj(x)))

    model = ToyModel().double()
    model.load_state_dict({k: lib.tensor(v) for k, v in MLP.items()})
    return model


def _block(lib):
    nn = lib.nn

    class RMSNorm(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(dim))

        def forward(self, x):
            return x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(8, 16, bias=False)
            self.w2 = nn.Linear(16, 8, bias=False)

        def forward(self, x):
            return self.w2(lib.relu(self.w1(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(12, 8)
            self.norm = RMSNorm(8)
            self.ffn = FeedForward()

        def forward(self, tokens):
            h = self.emb(tokens)
            return h + self.ffn(self.norm(h))

    model = Block().double()
    model.load_state_dict({k: lib.tensor(v) for k, v in BLOCK.items()})
    return model


def _train_mlp(lib, model, inputs, optimizer_kind="adamw"):
    opt = lib.optim.AdamW(model.parameters(), lr=0.25, foreach=True)
    losses = []
    for x in inputs:
        out = model(x)
        loss = out.sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def _whole(p):
    return (p.full_tensor() if hasattr(p, "full_tensor") else p).detach().numpy().copy()


def _all_gather(torch, t):
    pieces = [torch.empty_like(t) for _ in range(torch.distributed.get_world_size())]
    torch.distributed.all_gather(pieces, t)
    return pieces


def _tp_worker(rank: int, world: int, mode: str) -> dict:
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import Replicate, Shard
    from disttorch.distributed.tensor.debug import CommDebugMode
    from disttorch.distributed.tensor.parallel import (
        ColwiseParallel,
        PrepareModuleInput,
        RowwiseParallel,
        SequenceParallel,
        loss_parallel,
        parallelize_module,
    )

    if mode == "2d":  # tensor parallel inside each data-parallel replica of a (dp, tp) mesh
        mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))["tp"]
        mode = "tp"
    else:
        mesh = init_device_mesh("cpu", (world,))
    out: dict = {}
    if mode in ("tp", "sp"):
        model = _mlp(torch)
        if mode == "tp":
            plan = {"in_*": ColwiseParallel(), "out_proj": RowwiseParallel()}
            inputs = [torch.tensor(x) for x in INPUTS]
        else:
            plan = {
                "in_proj": ColwiseParallel(input_layouts=Shard(0)),
                "out_proj": RowwiseParallel(output_layouts=Shard(0)),
            }
            inputs = [torch.tensor(x[rank * 10 : (rank + 1) * 10]) for x in INPUTS]
        parallelize_module(model, mesh, plan)
        out["placements"] = {n: p.placements for n, p in model.named_parameters()}
        out["losses"] = _train_mlp(torch, model, inputs)
        out["params"] = {n: _whole(p) for n, p in model.named_parameters()}
    elif mode == "block":
        model = _block(torch)
        parallelize_module(
            model,
            mesh,
            {
                "emb": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
                "norm": SequenceParallel(),
                "ffn": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
                "ffn.w1": ColwiseParallel(),
                "ffn.w2": RowwiseParallel(output_layouts=Shard(1)),
            },
        )
        y = model(torch.tensor(TOKENS))  # a plain tensor: this rank's part of the sequence
        out["y"] = np.concatenate([piece.numpy() for piece in _all_gather(torch, y.detach())], axis=1)
        with CommDebugMode() as comm_mode:
            (y**2).sum().backward()
        out["backward_comms"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
        out["grad_layouts"] = {n: p.grad.placements for n, p in model.named_parameters()}
        out["grads"] = {n: p.grad.full_tensor().numpy() for n, p in model.named_parameters()}
        torch.optim.SGD(model.parameters(), lr=0.1).step()  # a Partial gradient is reduced for the step
        out["stepped"] = _whole(model.norm.weight)
    else:  # loss_parallel
        model = _mlp(torch)
        parallelize_module(
            model,
            mesh,
            {
                "in_proj": ColwiseParallel(output_layouts=Replicate()),
                "out_proj": ColwiseParallel(use_local_output=False),
            },
        )
        x = torch.tensor(INPUTS[0], requires_grad=True)
        logits = model(x)
        out["logits"] = logits.placements
        with loss_parallel(), CommDebugMode() as comm_mode:
            loss = torch.nn.functional.cross_entropy(logits, torch.tensor(TARGETS))
            loss.backward()
        out["loss_comms"] = {str(k): v for k, v in comm_mode.get_comm_counts().items()}
        out["loss"] = float(loss.full_tensor())
        out["x_grad"] = x.grad.numpy().copy()
        out["grads"] = {n: p.grad.full_tensor().numpy() for n, p in model.named_parameters()}
    return out


def _reference(lib, mode: str) -> dict:
    """The same run on one process, unsharded, with ``lib`` (disttorch or PyTorch)."""
    out: dict = {}
    if mode in ("tp", "sp"):
        model = _mlp(lib)
        out["losses"] = _train_mlp(lib, model, [lib.tensor(x) for x in INPUTS])
        out["params"] = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    elif mode == "block":
        model = _block(lib)
        y = model(lib.tensor(TOKENS))
        out["y"] = y.detach().numpy()
        (y**2).sum().backward()
        out["grads"] = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    else:
        model = _mlp(lib)
        x = lib.tensor(INPUTS[0], requires_grad=True)
        loss = lib.nn.functional.cross_entropy(model(x), lib.tensor(TARGETS))
        loss.backward()
        out["loss"] = loss.item()
        out["x_grad"] = x.grad.numpy().copy()
        out["grads"] = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    return out


def _compare(outs: list, want: dict, mode: str) -> None:
    for out in outs:
        if mode == "tp":
            assert repr(out["placements"]["in_proj.weight"]) == "(Shard(dim=0),)"
            assert repr(out["placements"]["out_proj.weight"]) == "(Shard(dim=1),)"
            assert repr(out["placements"]["out_proj.bias"]) == "(Replicate(),)"
        if mode == "tp":
            np.testing.assert_allclose(out["losses"], want["losses"], rtol=1e-10)
        if mode == "sp":  # each rank's loss is its half of the batch's; together the whole
            assert len(out["losses"]) == len(want["losses"])
        for key in ("params", "grads"):
            for name, value in want.get(key, {}).items():
                np.testing.assert_allclose(
                    out[key][name], value, rtol=1e-9, atol=1e-11, err_msg=f"{mode} {name}"
                )
        for key in ("y", "x_grad", "loss"):
            if key in want:
                np.testing.assert_allclose(
                    out[key], want[key], rtol=1e-10, atol=1e-12, err_msg=f"{mode} {key}"
                )
    if mode == "sp":
        np.testing.assert_allclose(np.sum([o["losses"] for o in outs], axis=0), want["losses"], rtol=1e-10)
    if mode == "loss":
        assert repr(outs[0]["logits"]) == "(Shard(dim=1),)"
        # PyTorch 2.13's: the loss's three (max, sum, target logit), two in backward
        assert outs[0]["loss_comms"] == {"c10d_functional.all_reduce": 5}
    if mode == "block":  # PyTorch 2.13's: the sequence-parallel norm's weight keeps a Partial
        # gradient, the all-gathered input of ffn.w1 gets one reduce-scatter (no all-reduce)
        for out in outs:
            assert out["backward_comms"] == {
                "c10d_functional.all_gather_into_tensor": 2,
                "c10d_functional.reduce_scatter_tensor": 1,
            }
            layouts = {n: repr(p) for n, p in out["grad_layouts"].items()}
            assert layouts["norm.weight"] == "(Partial(sum),)"
            assert layouts["ffn.w1.weight"] == "(Shard(dim=0),)"
            stepped = BLOCK["norm.weight"] - 0.1 * want["grads"]["norm.weight"]
            np.testing.assert_allclose(out["stepped"], stepped, rtol=1e-10)


MODES = ["tp", "sp", "block", "loss"]


@pytest.mark.parametrize("mode", MODES)
def test_tensor_parallel_matches_one_process(mode):
    import disttorch

    _compare(run_ranks(_tp_worker, 2, args=(mode,), timeout=120), _reference(disttorch, mode), mode)


def _fsdp_tp_worker(rank: int, world: int) -> dict:
    """2-D: tensor parallel over "tp", fully_shard over "dp"; dp replica r trains on INPUTS[i] * (r + 1)."""
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.fsdp import fully_shard
    from disttorch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))
    dp = mesh["dp"].get_local_rank()
    model = parallelize_module(
        _mlp(torch), mesh["tp"], {"in_proj": ColwiseParallel(), "out_proj": RowwiseParallel()}
    )
    fully_shard(model, mesh=mesh["dp"])
    losses = _train_mlp(torch, model, [torch.tensor(x * (dp + 1)) for x in INPUTS])
    whole = {}
    for name, p in model.named_parameters():  # one DTensor over (dp, tp): gathered whole
        whole[name] = p.full_tensor().detach().numpy()
    return {
        "losses": losses,
        "whole": whole,
        "meshes": {tuple(p.device_mesh.shape) for p in model.parameters()},
    }


def test_fully_shard_over_dp_of_a_tensor_parallel_model():
    import disttorch as torch

    model = _mlp(torch)  # one process: the mean of the two replicas' losses
    opt = torch.optim.AdamW(model.parameters(), lr=0.25, foreach=True)
    for x in INPUTS:
        loss = (model(torch.tensor(x)).sum() + model(torch.tensor(2 * x)).sum()) / 2
        loss.backward()
        opt.step()
        opt.zero_grad()
    want = {n: p.detach().numpy() for n, p in model.named_parameters()}
    for out in run_ranks(_fsdp_tp_worker, 4, timeout=180):
        assert out["meshes"] == {(2, 2)}
        for name, value in want.items():
            np.testing.assert_allclose(out["whole"][name], value, rtol=1e-9, atol=1e-11, err_msg=name)


def test_tensor_parallel_on_the_tp_dimension_of_a_2d_mesh():
    import disttorch

    _compare(run_ranks(_tp_worker, 4, args=("2d",), timeout=180), _reference(disttorch, "tp"), "tp")


@pytest.mark.parametrize("mode", MODES)
def test_tensor_parallel_matches_pytorch(torch, mode):
    _compare(run_ranks(_tp_worker, 2, args=(mode,), timeout=120), _reference(torch, mode), mode)


def _distribute_module_worker(rank: int, world: int) -> dict:
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Replicate, Shard, distribute_module, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    model = _mlp(torch)
    model.register_buffer("scale", torch.tensor([2.0], dtype=torch.float64))

    def partition(name, module, mesh):
        if name == "in_proj":
            module.register_parameter(
                "weight", torch.nn.Parameter(distribute_tensor(module.weight, mesh, [Shard(0)]))
            )

    seen = []
    distribute_module(
        model,
        mesh,
        partition,
        input_fn=lambda mod, inputs, mesh: (DTensor.from_local(inputs[0], mesh, [Replicate()]),),
        output_fn=lambda mod, outputs, mesh: seen.append(outputs.placements) or outputs.full_tensor(),
    )
    out = {
        "layouts": {n: (type(p).__name__, p.placements) for n, p in model.named_parameters()},
        "is_param": all(isinstance(p, torch.nn.Parameter) for p in model.parameters()),
        "buffer": (type(model.scale).__name__, model.scale.placements),
    }
    y = model(torch.tensor(INPUTS[0]))
    out["y"] = (type(y).__name__, y.detach().numpy().copy(), seen)
    try:
        distribute_module(model, mesh)
    except RuntimeError as e:
        out["twice"] = str(e)
    return out


def test_distribute_module_partitions_replicates_and_hooks():
    import disttorch

    want = _mlp(disttorch)(disttorch.tensor(INPUTS[0])).detach().numpy()
    for out in run_ranks(_distribute_module_worker, 2, timeout=120):
        layouts = {n: (kind, repr(p)) for n, (kind, p) in out["layouts"].items()}
        assert layouts["in_proj.weight"] == ("DTensor", "(Shard(dim=0),)")
        assert layouts["in_proj.bias"] == layouts["out_proj.weight"] == ("DTensor", "(Replicate(),)")
        assert out["is_param"] and out["buffer"][0] == "DTensor"
        kind, y, seen = out["y"]
        assert kind == "Tensor" and repr(seen) == "[(Partial(sum),)]"  # in_proj's output columns, contracted
        np.testing.assert_allclose(y, want, rtol=1e-12)
        assert "only be called once" in out["twice"]


def test_signatures_match_pytorch(torch):
    """The argument names of the DTensor and tensor-parallel API are PyTorch's."""
    import inspect

    import torch.distributed.tensor as pt_tensor
    import torch.distributed.tensor.parallel as pt_parallel

    import disttorch.distributed.tensor as dt_tensor
    import disttorch.distributed.tensor.parallel as dt_parallel

    def names(fn):
        return [p for p in inspect.signature(fn).parameters if p != "self"]

    pairs = [
        (dt_parallel.parallelize_module, pt_parallel.parallelize_module),
        (dt_tensor.distribute_module, pt_tensor.distribute_module),
        (dt_tensor.distribute_tensor, pt_tensor.distribute_tensor),
        (dt_tensor.DTensor.from_local, pt_tensor.DTensor.from_local),
        (dt_tensor.DTensor.to_local, pt_tensor.DTensor.to_local),
        (dt_tensor.DTensor.full_tensor, pt_tensor.DTensor.full_tensor),
        (dt_tensor.DTensor.redistribute, pt_tensor.DTensor.redistribute),
    ]
    for style in ("ColwiseParallel", "RowwiseParallel", "SequenceParallel", "PrepareModuleInput"):
        pairs.append((getattr(dt_parallel, style).__init__, getattr(pt_parallel, style).__init__))
    pairs += [(dt_parallel.PrepareModuleOutput.__init__, pt_parallel.PrepareModuleOutput.__init__)]
    for ours, theirs in pairs:
        assert names(ours) == names(theirs), ours.__qualname__
    assert sorted(dt_parallel.__all__) == sorted(pt_parallel.__all__)
