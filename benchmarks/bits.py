"""Bits against PyTorch: the share of result elements whose float32 bits differ from the
installed PyTorch's, for the ops whose rounding disttorch replays (random shapes, strides
and seeds; 1 and 2 threads on both sides).

Run by hand: ``python benchmarks/bits.py [--seed N] [--cases N]`` (PyTorch required; numba
for the compiled kernels that give PyTorch's bits). Prints one table: op, result (0 the output,
then the gradients in argument order; under vmap the gradients only), threads, mismatching
elements / elements. A difference means a rounding disttorch does not
follow yet; a row of zeros is PyTorch's numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np

import disttorch as dt

Case = Callable[[object], list]  # lib -> result arrays


def _arrays(results: list) -> list:
    return [r.detach().numpy() if hasattr(r, "detach") else np.asarray(r) for r in results]


def _layout(lib, t, how: str):
    if how == "channels_last":
        return t.contiguous(memory_format=lib.channels_last)
    if how == "transposed":
        return t.transpose(0, -1)
    if how == "sliced":
        return t[..., ::2]
    return t


def batch_norm_cases(rng: np.random.Generator, n: int) -> Iterator[tuple[str, Case]]:
    """Training and evaluation, forward and gradients, of (N, C), (N, C, *) and channels-last."""
    for _ in range(n):
        kind = ["(N, C)", "(N, C, *)", "channels_last"][int(rng.integers(3))]
        spatial = () if kind == "(N, C)" else tuple(int(v) for v in rng.integers(1, 9, 2))
        shape = (int(rng.integers(2, 24)), int(rng.integers(1, 24)), *spatial)
        x, g = (rng.standard_normal((2, *shape)) * 3 + 1).astype(np.float32)
        w, b, rm, rv = rng.standard_normal((4, shape[1])).astype(np.float32)
        training = bool(rng.integers(2))

        def case(lib, x=x, g=g, w=w, b=b, rm=rm, rv=rv, training=training, kind=kind):
            xt = _layout(lib, lib.from_numpy(x.copy()), kind).requires_grad_(True)
            wt, bt = (lib.from_numpy(a.copy()).requires_grad_(True) for a in (w, b))
            stats = [lib.from_numpy(rm.copy()), lib.from_numpy(np.abs(rv) + 0.5)]
            out = lib.nn.functional.batch_norm(xt, *stats, wt, bt, training=training)
            out.backward(_layout(lib, lib.from_numpy(g), kind))
            return [out, xt.grad, wt.grad, bt.grad]

        yield f"batch_norm {kind} {'train' if training else 'eval'}", case


def elementwise_cases(rng: np.random.Generator, n: int) -> Iterator[tuple[str, Case]]:
    """softplus, logsigmoid and log_softmax (every dim) of odd shapes and strides."""
    for _ in range(n):
        shape = tuple(int(v) for v in rng.integers(1, 70, int(rng.integers(1, 4))))
        x = (rng.standard_normal(shape) * 4).astype(np.float32)
        how = ["contiguous", "transposed", "sliced"][int(rng.integers(3))]
        dim = int(rng.integers(len(shape)))
        for name, fn in (
            ("softplus", lambda lib, t: lib.nn.functional.softplus(t)),
            ("logsigmoid", lambda lib, t: lib.nn.functional.logsigmoid(t)),
            ("log_softmax", lambda lib, t, dim=dim: lib.nn.functional.log_softmax(t, dim=dim)),
        ):

            def case(lib, x=x, how=how, fn=fn):
                xt = _layout(lib, lib.from_numpy(x.copy()), how).requires_grad_(True)
                out = fn(lib, xt)
                g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
                out.backward(lib.from_numpy(g))
                return [out, xt.grad]

            yield name, case


def layer_norm_vmap_cases(rng: np.random.Generator, n: int) -> Iterator[tuple[str, Case]]:
    """layer_norm's gradients for a batch of cotangents under vmap."""
    for _ in range(n):
        shape = tuple(int(v) for v in rng.integers(1, 12, int(rng.integers(1, 3)))) + (
            int(rng.integers(2, 200)),
        )
        d = shape[-1]
        x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
        w, b = rng.standard_normal((2, d)).astype(np.float32)
        cot = rng.standard_normal((3, *shape)).astype(np.float32)

        def case(lib, x=x, w=w, b=b, cot=cot, d=d):
            _, vjp_fn = lib.func.vjp(
                lambda xi, wi, bi: lib.nn.functional.layer_norm(xi, (d,), wi, bi),
                *(lib.from_numpy(a) for a in (x, w, b)),
            )
            return list(lib.func.vmap(vjp_fn)(lib.from_numpy(cot)))

        yield "layer_norm grads under vmap", case


def recurrent_cases(rng: np.random.Generator, n: int) -> Iterator[tuple[str, Case]]:
    """GRUCell, LSTMCell and a GRU layer (float32): output and every gradient (input, state,
    weights and biases)."""
    for _ in range(n):
        kind = ["GRUCell", "LSTMCell", "GRU"][int(rng.integers(3))]
        isz, hsz, batch = (int(v) for v in rng.integers(1, 40, 3))
        lead = (int(rng.integers(1, 10)),) if kind == "GRU" else ()
        x = rng.standard_normal((*lead, batch, isz)).astype(np.float32)
        h = rng.standard_normal((batch, hsz)).astype(np.float32)
        gates = {"GRUCell": 3, "LSTMCell": 4, "GRU": 3}[kind] * hsz
        params = [
            rng.uniform(-0.4, 0.4, shape).astype(np.float32)
            for shape in ((gates, isz), (gates, hsz), (gates,), (gates,))
        ]

        def case(lib, kind=kind, x=x, h=h, params=params):
            m = getattr(lib.nn, kind)(x.shape[-1], h.shape[1])
            with lib.no_grad():
                for p, a in zip(m.parameters(), params):
                    p.copy_(lib.from_numpy(a))
            xt, ht = (lib.from_numpy(a.copy()).requires_grad_(True) for a in (x, h))
            state = (ht, ht * 0.5) if kind == "LSTMCell" else ht[None] if kind == "GRU" else ht
            out = m(xt, state)
            out = out[0]
            g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
            out.backward(lib.from_numpy(g))
            return [out, xt.grad, ht.grad, *(p.grad for p in m.parameters())]

        yield kind, case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=30, help="random cases per family")
    args = parser.parse_args()
    import torch

    totals: dict = defaultdict(lambda: [0, 0])
    for threads in (1, 2):
        dt.set_num_threads(threads)
        torch.set_num_threads(threads)
        rng = np.random.default_rng(args.seed)
        for family in (batch_norm_cases, elementwise_cases, layer_norm_vmap_cases, recurrent_cases):
            for name, case in family(rng, args.cases):
                for i, (ours, theirs) in enumerate(zip(_arrays(case(dt)), _arrays(case(torch)))):
                    what = f"result {i}"
                    bad = int((ours.view(np.int32) != theirs.view(np.int32)).sum())
                    totals[(name, what, threads)][0] += bad
                    totals[(name, what, threads)][1] += ours.size
    print(f"{'op':<34} {'result':<11} {'threads':>7} {'mismatching':>24}")
    for (name, what, threads), (bad, size) in sorted(totals.items()):
        print(f"{name:<34} {what:<11} {threads:>7} {bad:>10} / {size:<9} {100 * bad / max(size, 1):5.1f}%")


if __name__ == "__main__":
    main()
