"""2-D parallelism as pytorch/examples' ``fsdp_tp_example.py`` applies it, on a small
Llama-like model of our own: tensor and sequence parallelism over ``tp``, ``fully_shard``
over ``dp`` of a ``(dp, tp)`` mesh, the model written in global sizes
(``xq.view(bsz, seqlen, n_heads, head_dim)`` on column-parallel DTensors). It trains to the
losses of one process, and to PyTorch's; its parameters are DTensors over ``(dp, tp)``
laid out as PyTorch lays them out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dist_helpers import run_ranks

DIM, HEADS, VOCAB, LAYERS = 8, 2, 16, 2
RNG = np.random.default_rng(7)
TOKENS = [RNG.integers(0, VOCAB, (2, 2, 6)) for _ in range(3)]  # per step: (dp replica, batch, seq)
TARGETS = [RNG.integers(0, VOCAB, (2, 2, 6)) for _ in range(3)]


def _model(lib):
    """A Llama-like transformer: RMSNorm, multi-head attention (no mask), SwiGLU feed-forward."""
    nn, F = lib.nn, lib.nn.functional

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(DIM))

        def forward(self, x):
            return x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq, self.wk, self.wv, self.wo = (nn.Linear(DIM, DIM, bias=False) for _ in range(4))

        def forward(self, x):
            bsz, seqlen, _ = x.shape
            head_dim = DIM // HEADS
            q, k, v = (
                w(x).view(bsz, seqlen, HEADS, head_dim).transpose(1, 2) for w in (self.wq, self.wk, self.wv)
            )
            scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
            out = lib.softmax(scores, dim=-1) @ v
            return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(DIM, 2 * DIM, bias=False)
            self.w2 = nn.Linear(2 * DIM, DIM, bias=False)
            self.w3 = nn.Linear(DIM, 2 * DIM, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm, self.attention = RMSNorm(), Attention()
            self.ffn_norm, self.feed_forward = RMSNorm(), FeedForward()

        def forward(self, x):
            h = x + self.attention(self.attention_norm(x))
            return h + self.feed_forward(self.ffn_norm(h))

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(VOCAB, DIM)
            self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
            self.norm = RMSNorm()
            self.output = nn.Linear(DIM, VOCAB, bias=False)

        def forward(self, tokens):
            h = self.tok_embeddings(tokens)
            for layer in self.layers:
                h = layer(h)
            return self.output(self.norm(h))

    model = Transformer().double()
    rng = np.random.default_rng(3)
    for name, p in model.named_parameters():
        value = (
            1 + 0.1 * rng.standard_normal(p.shape) if "norm" in name else 0.3 * rng.standard_normal(p.shape)
        )
        p.data.copy_(lib.tensor(value))
    return model


def _train(lib, model, opt, step_tokens, step_targets):
    """One step per (tokens, targets); the losses."""
    losses = []
    for tokens, targets in zip(step_tokens, step_targets):
        logits = model(lib.tensor(tokens))
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), lib.tensor(targets).reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def _worker(rank: int, world: int, lib: str, directory: str | None = None) -> dict:
    from importlib import import_module

    torch = import_module(lib)
    dist = import_module(f"{lib}.distributed")
    dist.init_process_group("gloo") if lib == "torch" else dist.init_process_group()
    init_device_mesh = import_module(f"{lib}.distributed.device_mesh").init_device_mesh
    fully_shard = import_module(f"{lib}.distributed.fsdp").fully_shard
    placements = import_module(f"{lib}.distributed.tensor")
    Replicate, Shard = placements.Replicate, placements.Shard
    tp_mod = import_module(f"{lib}.distributed.tensor.parallel")
    Col, Row, Seq, Prep = (
        tp_mod.ColwiseParallel,
        tp_mod.RowwiseParallel,
        tp_mod.SequenceParallel,
        tp_mod.PrepareModuleInput,
    )

    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))
    dp = mesh["dp"].get_local_rank()
    model = _model(torch)
    tp_mod.parallelize_module(
        model,
        mesh["tp"],
        {
            "tok_embeddings": Row(input_layouts=Replicate(), output_layouts=Shard(1)),
            "norm": Seq(),
            "output": Col(input_layouts=Shard(1), output_layouts=Replicate()),
        },
    )
    for block in model.layers:
        plan = {
            "attention_norm": Seq(),
            "attention": Prep(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "attention.wq": Col(use_local_output=False),
            "attention.wk": Col(use_local_output=False),
            "attention.wv": Col(use_local_output=False),
            "attention.wo": Row(output_layouts=Shard(1)),
            "ffn_norm": Seq(),
            "feed_forward": Prep(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "feed_forward.w1": Col(),
            "feed_forward.w2": Row(output_layouts=Shard(1)),
            "feed_forward.w3": Col(),
        }
        tp_mod.parallelize_module(block, mesh["tp"], plan)
    fully_shard(model, mesh=mesh["dp"])
    layout = {
        name: (
            repr(p.placements),
            tuple(p.device_mesh.shape),
            tuple(p.shape),
            tuple(p.to_local().shape),
            p.stride(),
        )
        for name, p in model.named_parameters()
    }
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, foreach=True)
    losses = _train(torch, model, opt, [t[dp] for t in TOKENS], [t[dp] for t in TARGETS])
    whole = {name: p.full_tensor().detach().numpy().copy() for name, p in model.named_parameters()}
    if directory is not None:  # the sharded state dict: one 2-D DTensor per parameter
        dcp = import_module(f"{lib}.distributed.checkpoint")
        state = import_module(f"{lib}.distributed.checkpoint.state_dict").get_model_state_dict(model)
        dcp.save({"model": state}, checkpoint_id=directory)
    dist.destroy_process_group()
    return {"layout": layout, "losses": losses, "whole": whole}


def _one_process() -> tuple[list, dict]:
    """Both replicas' batches on one process: the mean of their losses is what FSDP averages."""
    import disttorch as torch

    model = _model(torch)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, foreach=True)
    losses = []
    for tokens, targets in zip(TOKENS, TARGETS):
        per_replica = [
            torch.nn.functional.cross_entropy(
                model(torch.tensor(tokens[r])).reshape(-1, VOCAB), torch.tensor(targets[r]).reshape(-1)
            )
            for r in range(2)
        ]
        ((per_replica[0] + per_replica[1]) / 2).backward()
        opt.step()
        opt.zero_grad()
        losses.append([x.item() for x in per_replica])
    return losses, {name: p.detach().numpy() for name, p in model.named_parameters()}


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> tuple[list, str]:
    """disttorch's four ranks (one launch for the tests below) and their checkpoint's folder."""
    directory = str(tmp_path_factory.mktemp("fsdp_tp") / "ckpt")
    return run_ranks(_worker, 4, args=("disttorch", directory), timeout=240), directory


def test_fsdp_tp_llama_trains_as_one_process_and_its_checkpoint_loads_whole(ours):
    import disttorch
    import disttorch.distributed.checkpoint as dcp

    losses, params = _one_process()
    results, directory = ours
    for rank, out in enumerate(results):
        np.testing.assert_allclose(out["losses"], [step[rank // 2] for step in losses], rtol=1e-9)
        for name, value in params.items():
            np.testing.assert_allclose(out["whole"][name], value, rtol=1e-9, atol=1e-12, err_msg=name)
        wq, wo = out["layout"]["layers.0.attention.wq.weight"], out["layout"]["layers.0.attention.wo.weight"]
        assert wq[:3] == ("(_StridedShard(dim=0, sf=2), Shard(dim=0))", (2, 2), (DIM, DIM))
        assert wo[:4] == ("(Shard(dim=0), Shard(dim=1))", (2, 2), (DIM, DIM), (DIM // 2, DIM // 2))
    state = _model(disttorch).state_dict()  # the sharded checkpoint, whole in one process
    dcp.load({"model": state}, checkpoint_id=directory, no_dist=True)
    for name, value in params.items():
        np.testing.assert_allclose(state[name].numpy(), value, rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parity
def test_fsdp_tp_llama_matches_pytorch(torch, ours):
    theirs = run_ranks(_worker, 4, args=("torch",), timeout=240)
    for mine, want in zip(ours[0], theirs):
        assert mine["layout"] == want["layout"]
        np.testing.assert_allclose(mine["losses"], want["losses"], rtol=1e-9)
        for name, value in want["whole"].items():
            np.testing.assert_allclose(mine["whole"][name], value, rtol=1e-9, atol=1e-12, err_msg=name)
