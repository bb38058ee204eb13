"""The benchmark models (MLP, small CNN, small GPT), written once for any PyTorch-shaped
library: each builder takes the library module (``disttorch`` or ``torch``) and returns an
``nn.Module`` built from that library's layers, so the same code builds both sides of a
comparison (``benchmarks/train_step.py``) and can be reused by other benchmarks and examples.
"""

from __future__ import annotations

from typing import Any


def build_mlp(lib: Any, sizes: tuple = (784, 512, 256, 10)) -> Any:
    """An MLP ``784-512-256-10`` with ReLU between the Linear layers."""
    nn = lib.nn
    layers: list = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(a, b))
    return nn.Sequential(*layers)


def build_cnn(lib: Any, num_classes: int = 10) -> Any:
    """conv 1->16 3x3 pad 1, ReLU, maxpool 2; conv 16->32 3x3 pad 1, ReLU, maxpool 2;
    flatten; linear 1568->10 (for 1x28x28 inputs)."""
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, num_classes),
    )


def build_gpt(
    lib: Any, vocab_size: int = 65, block_size: int = 64, n_layer: int = 2, n_embd: int = 128, n_head: int = 4
) -> Any:
    """A small decoder-only transformer: token + position embeddings, ``n_layer`` pre-norm
    blocks (LayerNorm, causal multi-head self-attention through
    ``scaled_dot_product_attention``, LayerNorm, GELU MLP), a final LayerNorm and a
    linear head. ``model(idx)`` maps ``(B, T)`` token ids to ``(B, T, vocab_size)`` logits."""
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(n_embd, 3 * n_embd)
            self.proj = nn.Linear(n_embd, n_embd)

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(n_embd, dim=2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(B, T, C))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(vocab_size, n_embd)
            self.pos = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab_size)

        def forward(self, idx: Any) -> Any:
            T = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(T))
            return self.head(self.ln_f(self.blocks(x)))

    return GPT()
