"""Function transforms and the linear-algebra long tail: disttorch beside PyTorch.

    python benchmarks/func_transforms.py

For each case, the best of ``--repeat`` timings of one call in disttorch and in PyTorch (CPU,
float64, same inputs; the ``vmap`` cases of PyTorch's tutorials in float32) and their ratio
(>1: disttorch slower). Jacobians are ``vmap`` over one batched run of the function here, as
in PyTorch; ``vmap`` runs the function once on batched tensors.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import disttorch as dt


def best_of(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def cases(lib, n: int) -> dict:
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.normal(size=n))
    w = lib.tensor(rng.normal(size=(n, n)) / n**0.5)
    img = lib.tensor(rng.normal(size=(1, 3, 8, 8)))
    k = lib.tensor(rng.normal(size=(4, 3, 3, 3)))
    q, _ = np.linalg.qr(rng.normal(size=(200, 200)))
    spd = lib.tensor((q * np.linspace(1, 100, 200)) @ q.T)
    low = lib.tensor(rng.normal(size=(500, 10)) @ rng.normal(size=(10, 300)))
    F = lib.nn.functional

    def mlp(v):
        return (w @ (w @ v).tanh()).sin()

    def conv(a):
        return F.conv2d(a, k, padding=1).relu().sum((2, 3))

    return {
        f"jacrev MLP ({n} -> {n})": lambda: lib.func.jacrev(mlp)(x),
        f"jacfwd MLP ({n} -> {n})": lambda: lib.func.jacfwd(mlp)(x),
        f"hessian of sum(MLP) ({n})": lambda: lib.func.hessian(lambda v: mlp(v).sum())(x),
        f"jvp MLP ({n})": lambda: lib.func.jvp(mlp, (x,), (x,)),
        "jvp conv2d (1x3x8x8)": lambda: lib.func.jvp(conv, (img,), (img,)),
        f"autograd.functional.hvp ({n})": lambda: lib.autograd.functional.hvp(lambda v: mlp(v).sum(), x, x),
        "lobpcg k=3 (200x200)": lambda: lib.lobpcg(
            spd, k=3, X=lib.tensor(np.ones((200, 3)) + np.eye(200, 3))
        ),
        "svd_lowrank q=10 (500x300)": lambda: lib.svd_lowrank(low, q=10),
        "geqrf + ormqr (500x300)": lambda: lib.ormqr(*lib.geqrf(low), low[:, :5]),
        **vmap_cases(lib),
    }


def vmap_cases(lib) -> dict:
    """The tutorials' uses of ``vmap``: per-sample gradients of a small CNN, the Hessian of
    ``tanh(linear(x))`` at 512 inputs, per-sample Jacobians, an ensemble of MLPs."""
    rng = np.random.default_rng(1)
    F = lib.nn.functional

    def f32(*shape):
        return lib.tensor(rng.normal(size=shape), dtype=lib.float32)

    cnn = {"c1": f32(8, 1, 3, 3), "c2": f32(16, 8, 3, 3), "fc": f32(10, 16 * 12 * 12) / 50}
    data, targets = f32(64, 1, 28, 28), lib.tensor(rng.integers(0, 10, size=64))

    def loss(p, x, t):
        h = F.max_pool2d(F.conv2d(F.conv2d(x.unsqueeze(0), p["c1"]).relu(), p["c2"]).relu(), 2)
        return F.cross_entropy(F.linear(h.flatten(1), p["fc"]), t.unsqueeze(0))

    w, b, x = f32(32, 512), f32(32), f32(512)
    wb, bb, xb = f32(33, 31), f32(33), f32(64, 31)
    ens = {"w1": f32(10, 128, 784) / 28, "w2": f32(10, 10, 128) / 11}
    images = f32(64, 784)

    def predict(weight, bias, v):
        return F.linear(v, weight, bias).tanh()

    return {
        "vmap(grad) per-sample CNN (64)": lambda: lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            cnn, data, targets
        ),
        "hessian tanh(linear) (512 -> 32)": lambda: lib.func.hessian(predict, argnums=2)(w, b, x),
        "vmap(jacrev) (64 x 31 -> 33)": lambda: lib.func.vmap(
            lib.func.jacrev(predict, argnums=2), in_dims=(None, None, 0)
        )(wb, bb, xb),
        "vmap ensemble of 10 MLPs": lambda: lib.func.vmap(
            lambda p, v: F.linear(F.linear(v, p["w1"]).relu(), p["w2"]), in_dims=(0, None)
        )(ens, images),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=32, help="width of the MLP cases")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:  # one BLAS thread on both sides (PyTorch below), as the machine may be shared
        import threadpoolctl

        threadpoolctl.threadpool_limits(1)
    except ImportError:
        pass
    ours = cases(dt, args.size)
    try:
        import torch

        torch.set_num_threads(1)
        theirs = cases(torch, args.size)
    except ImportError:
        theirs = {}
    print(f"{'case':34s} {'disttorch':>11s} {'torch':>11s} {'ratio':>7s}")
    for name, fn in ours.items():
        a = best_of(fn, args.repeat)
        b = best_of(theirs[name], args.repeat) if name in theirs else float("nan")
        print(f"{name:34s} {a * 1e3:9.2f}ms {b * 1e3:9.2f}ms {a / b:7.1f}")


if __name__ == "__main__":
    main()
