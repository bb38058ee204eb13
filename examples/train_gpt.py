"""A character-level GPT trained on Shakespeare with data-parallel training, printing samples.

    disttorch-launch --nproc 2 examples/train_gpt.py
    python examples/train_gpt.py --steps 200

The text (about 1.1 million characters of Shakespeare's plays, public domain) ships with
disttorch. The model reads ``--block-size`` characters and predicts, at every position,
the next one: token and position embeddings, ``--layers`` transformer blocks (causal
self-attention and an MLP, each behind a LayerNorm and added back to the residual
stream), a final LayerNorm and a linear map to one score per character.

Each rank draws its own random windows of the training text (the generator is seeded
with the rank), DistributedDataParallel averages the gradients, and all ranks take the
same AdamW step. Rank 0 reports the loss on held-out text (the last 10 %) and prints
samples: characters drawn one at a time from ``softmax(logits / temperature)``. A low
temperature picks likely characters (safe, repetitive); a high one takes more risks.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import disttorch as torch
import disttorch.distributed as dist
import disttorch.nn as nn
import disttorch.nn.functional as F
from disttorch.datasets import CharVocab, load_shakespeare
from disttorch.nn.parallel import DistributedDataParallel as DDP
from disttorch.viz import MetricsLog, ProgressBar


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch-size", type=int, default=16, help="windows per rank and step")
    p.add_argument("--block-size", type=int, default=64, help="characters of context")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--eval-every", type=int, default=200, help="held-out loss and a sample every N steps")
    p.add_argument("--sample-chars", type=int, default=300)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--log-metrics", default=None, metavar="DIR", help="write DIR/rank<k>.jsonl (for disttorch-plot)"
    )
    return p.parse_args()


class CausalSelfAttention(nn.Module):
    """Every position attends to itself and the positions before it, in ``heads`` heads."""

    def __init__(self, embd: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(embd, 3 * embd)
        self.proj = nn.Linear(embd, embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = (
            t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in self.qkv(x).split(C, dim=2)
        )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, heads, T, C // heads]
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, embd: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(embd)
        self.attn = CausalSelfAttention(embd, heads)
        self.ln2 = nn.LayerNorm(embd)
        self.mlp = nn.Sequential(nn.Linear(embd, 4 * embd), nn.GELU(), nn.Linear(4 * embd, embd))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int, block_size: int, layers: int, embd: int, heads: int) -> None:
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab, embd)
        self.pos = nn.Embedding(block_size, embd)
        self.blocks = nn.Sequential(*[Block(embd, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(embd)
        self.head = nn.Linear(embd, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Token ids ``[B, T]`` -> scores for the next character ``[B, T, vocab]``."""
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        return self.head(self.ln_f(self.blocks(x)))

    @torch.no_grad()
    def generate(
        self, idx: torch.Tensor, length: int, temperature: float, generator: torch.Generator
    ) -> torch.Tensor:
        """Append ``length`` characters to ``idx`` ``[1, T]``, each drawn from softmax(logits / temperature)."""
        for _ in range(length):
            logits = self(idx[:, -self.block_size :])[:, -1, :]
            probs = F.softmax(logits / temperature, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
        return idx


def windows(data: torch.Tensor, batch_size: int, block_size: int, g: torch.Generator):
    """``batch_size`` random windows: inputs ``[B, T]`` and the same shifted by one (targets)."""
    starts = torch.randint(0, len(data) - block_size - 1, (batch_size,), generator=g).tolist()
    x = torch.stack([data[s : s + block_size] for s in starts])
    y = torch.stack([data[s + 1 : s + block_size + 1] for s in starts])
    return x, y


@torch.no_grad()
def held_out_loss(model: nn.Module, data: torch.Tensor, args: argparse.Namespace, batches: int = 4) -> float:
    g = torch.Generator().manual_seed(1234)  # the same held-out windows every time
    model.eval()
    losses = []
    for _ in range(batches):
        x, y = windows(data, args.batch_size, args.block_size, g)
        losses.append(F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item())
    model.train()
    return sum(losses) / len(losses)


def sample(model: GPT, vocab: CharVocab, args: argparse.Namespace, prompt: str = "ROMEO:\n") -> str:
    g = torch.Generator().manual_seed(args.seed)
    out = model.generate(vocab.encode(prompt)[None], args.sample_chars, args.temperature, g)
    return vocab.decode(out[0])


def main() -> None:
    args = parse_args()
    launched = "WORLD_SIZE" in os.environ  # set by disttorch-launch (and torchrun)
    if launched:
        dist.init_process_group()
    rank = dist.get_rank() if launched else 0
    world = dist.get_world_size() if launched else 1

    text = load_shakespeare()
    vocab = CharVocab(text)
    data = vocab.encode(text)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]

    torch.manual_seed(args.seed)  # the same initial weights on every rank (DDP also broadcasts rank 0's)
    net = GPT(len(vocab), args.block_size, args.layers, args.embd, args.heads)
    model = DDP(net) if launched else net
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, args.steps // 20)
    scheduler = torch.optim.lr_scheduler.LambdaLR(  # linear warm-up, then cosine decay to 10 %
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * (0.55 + 0.45 * math.cos(math.pi * s / args.steps))
    )
    g = torch.Generator().manual_seed(args.seed * 1000 + rank)  # each rank its own windows
    metrics = MetricsLog(args.log_metrics) if args.log_metrics else None
    if rank == 0:
        params = sum(p.numel() for p in net.parameters())
        print(
            f"{world} rank(s); {len(text):,} characters, vocabulary of {len(vocab)}; GPT with {params:,} "
            f"parameters; {args.steps} steps of {world} x {args.batch_size} windows of {args.block_size}",
            flush=True,
        )
        print(
            f"held-out loss before training: {held_out_loss(net, val_data, args):.3f} "
            f"(guessing uniformly: ln {len(vocab)} = {math.log(len(vocab)):.3f})",
            flush=True,
        )

    started = time.perf_counter()
    bar = ProgressBar(args.steps, desc="training", disable=rank != 0)
    for step in range(1, args.steps + 1):
        x, y = windows(train_data, args.batch_size, args.block_size, g)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        optimizer.zero_grad()
        loss.backward()  # DDP averages the gradients across ranks here
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        bar.update(1, loss=loss.item(), samples=len(x) * world)  # a sample is a window, not a character
        if metrics is not None:
            metrics.write(step=step, loss=loss.item())
        if rank == 0 and (step % args.eval_every == 0 or step == args.steps):
            bar.close()
            print(
                f"step {step}: held-out loss {held_out_loss(net, val_data, args):.3f}; sample at temperature "
                f"{args.temperature}:\n{sample(net, vocab, args)}\n",
                flush=True,
            )
    if rank == 0:
        elapsed = time.perf_counter() - started
        windows_per_s = args.steps * args.batch_size * world / elapsed
        print(
            f"trained {args.steps} steps in {elapsed:.1f} s: {windows_per_s:,.1f} windows/s "
            f"({windows_per_s * args.block_size:,.0f} characters/s)",
            flush=True,
        )
    if metrics is not None:
        metrics.close()
    if launched:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
