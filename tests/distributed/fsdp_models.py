"""Shared pieces of the FSDP tests: the models (those of ``benchmarks/models.py`` and one
with tied weights, all float64), their data, and one training run, sharded or not."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(
    0,
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks"),
)

STEPS, BATCH = 3, 4


def build(kind: str):
    """The model ``kind`` (``mlp``, ``cnn``, ``gpt``, ``gpt-ckpt``, ``tied``), seeded, float64."""
    from models import build_cnn, build_gpt, build_mlp

    import disttorch as torch
    import disttorch.nn as nn

    torch.manual_seed(0)
    if kind == "mlp":
        model = build_mlp(torch, (12, 10, 7, 3))
    elif kind == "cnn":
        model = build_cnn(torch)
    elif kind in ("gpt", "gpt-ckpt"):
        model = build_gpt(torch, vocab_size=11, block_size=8, n_layer=2, n_embd=16, n_head=2)
        if kind == "gpt-ckpt":  # activation checkpointing: each block runs again in backward
            from disttorch.utils.checkpoint import checkpoint

            class Checkpointed(nn.Module):
                def __init__(self, blocks) -> None:
                    super().__init__()
                    self.inner = blocks

                def forward(self, x):
                    for block in self.inner:
                        x = checkpoint(block, x, use_reentrant=False)
                    return x

            model.blocks = Checkpointed(model.blocks)
    else:

        class Tied(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.emb = nn.Embedding(11, 6)
                self.body = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 6))
                self.head = nn.Linear(6, 11, bias=False)
                self.head.weight = self.emb.weight

            def forward(self, idx):
                return self.head(self.body(self.emb(idx)))

        model = Tied()
    return model.double()


def units(model, kind: str) -> list:
    """The submodules that become FSDP units before the root."""
    if kind == "mlp":
        return [model[0], model[2]]
    if kind == "cnn":
        return [model[0], model[3]]
    if kind == "gpt":
        return list(model.blocks)
    if kind == "gpt-ckpt":
        return list(model.blocks.inner)
    return [model.body]


def data(kind: str, world: int):
    """Per step, the global batch (``world * BATCH`` samples) as NumPy arrays."""
    rng = np.random.default_rng(3)
    n = world * BATCH
    if kind == "mlp":
        x = rng.standard_normal((STEPS, n, 12))
        y = rng.integers(0, 3, (STEPS, n))
    elif kind == "cnn":
        x = rng.standard_normal((STEPS, n, 1, 28, 28))
        y = rng.integers(0, 10, (STEPS, n))
    else:
        x = rng.integers(0, 11, (STEPS, n, 8))
        y = rng.integers(0, 11, (STEPS, n, 8))
    return x, y


def train(model, kind: str, x, y, opt_params=None, steps: int = STEPS):
    """``steps`` Adam steps of cross-entropy on ``x``/``y`` (the rank's part of each batch);
    returns the optimiser."""
    import disttorch as torch
    import disttorch.nn.functional as F

    opt = torch.optim.Adam(model.parameters() if opt_params is None else opt_params, lr=1e-2)
    for s in range(steps):
        xs = torch.tensor(x[s]) if kind in ("mlp", "cnn") else torch.tensor(x[s], dtype=torch.long)
        out = model(xs)
        loss = F.cross_entropy(
            out.reshape(-1, out.shape[-1]), torch.tensor(y[s].reshape(-1), dtype=torch.long)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    return opt


def full_params(model) -> dict:
    """Every parameter by name as a NumPy array (whole: sharded ones are gathered)."""
    out = {}
    for name, p in model.named_parameters():
        out[name] = p.full_tensor().detach().numpy() if hasattr(p, "full_tensor") else p.detach().numpy()
    return out
