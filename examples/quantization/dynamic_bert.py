"""Dynamic quantization of a small BERT-style encoder, in the style of PyTorch's tutorial
"(beta) Dynamic Quantization on BERT" (no download: random weights and token ids).

Runs as is under PyTorch, and under disttorch with ``python -m disttorch.as_torch``.
"""

import io
import math
import time

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.query, self.key, self.value = (
            nn.Linear(hidden, hidden),
            nn.Linear(hidden, hidden),
            nn.Linear(hidden, hidden),
        )
        self.dense = nn.Linear(hidden, hidden)
        self.heads = heads

    def forward(self, x):
        b, t, h = x.shape
        split = lambda y: y.view(b, t, self.heads, h // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(h // self.heads), dim=-1)
        return self.dense((scores @ v).transpose(1, 2).reshape(b, t, h))


class Layer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.intermediate, self.output = nn.Linear(hidden, intermediate), nn.Linear(intermediate, hidden)

    def forward(self, x):
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.output(torch.nn.functional.gelu(self.intermediate(x))))


class TinyBert(nn.Module):
    def __init__(self, vocab=3000, hidden=128, layers=2, heads=4, intermediate=512, labels=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([Layer(hidden, heads, intermediate) for _ in range(layers)])
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, ids):
        x = self.embeddings(ids)
        for layer in self.layers:
            x = layer(x)
        return self.classifier(x[:, 0])


def print_size_of_model(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    print("Size (MB):", len(buf.getvalue()) / 1e6)


def main():
    torch.manual_seed(0)
    model = TinyBert().eval()
    ids = torch.randint(0, 3000, (16, 32))
    quantized_model = torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    print(quantized_model)
    print_size_of_model(model)
    print_size_of_model(quantized_model)
    with torch.no_grad():
        start = time.time()
        reference = model(ids)
        middle = time.time()
        logits = quantized_model(ids)
        end = time.time()
    agree = (reference.argmax(-1) == logits.argmax(-1)).float().mean().item()
    print(f"float {middle - start:.3f} s, quantized {end - middle:.3f} s")
    print(
        f"max |float - quantized| logit {(reference - logits).abs().max().item():.6f}, same label {agree:.3f}"
    )
    print("first logits:", [round(v, 6) for v in logits[0].tolist()])


if __name__ == "__main__":
    main()
