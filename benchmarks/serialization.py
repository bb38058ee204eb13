"""save/load benchmark: disttorch's PyTorch-format files beside torch.save/torch.load.

    python benchmarks/serialization.py                  # 64 tensors of 1 MiB .. 4 MiB, in /tmp
    python benchmarks/serialization.py --mib 512 --dir /data

For a state dict of ``--tensors`` float32 tensors totalling ``--mib`` MiB, each library
saves it to a file and loads it back (best of ``--repeat`` runs). Loading is timed up to
the point where every value has been read once (a sum), because PyTorch's loader may fault
pages in lazily. disttorch's save also ``fsync``s the file and renames it into place (a
crash never leaves a half-written file); PyTorch's does neither. Ratios > 1: disttorch slower.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--tensors", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    import disttorch as dt

    n = args.mib * 2**20 // 4 // args.tensors
    arrays = {
        f"layer{i}.weight": np.random.default_rng(i).standard_normal(n, dtype=np.float32)
        for i in range(args.tensors)
    }
    libs = {"disttorch": (dt, {k: dt.from_numpy(v) for k, v in arrays.items()})}
    try:
        import torch

        libs["torch"] = (torch, {k: torch.from_numpy(v) for k, v in arrays.items()})
    except ImportError:
        pass
    path = os.path.join(args.dir, f"bench-serialization-{os.getpid()}.pt")
    rows = {}
    try:
        for name, (lib, sd) in libs.items():
            save = _best(lambda lib=lib, sd=sd: lib.save(sd, path), args.repeat)
            load = _best(lambda lib=lib: sum(float(v.sum()) for v in lib.load(path).values()), args.repeat)
            mmap = _best(
                lambda lib=lib: sum(float(v.sum()) for v in lib.load(path, mmap=True).values()), args.repeat
            )
            rows[name] = (save, load, mmap)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    print(f"state dict: {args.tensors} float32 tensors, {args.mib} MiB; best of {args.repeat}")
    print(f"{'library':10s} {'save s':>8s} {'load s':>8s} {'mmap load s':>12s}")
    for name, (s, l_, m) in rows.items():
        print(f"{name:10s} {s:8.3f} {l_:8.3f} {m:12.3f}")
    if "torch" in rows:
        d, t = rows["disttorch"], rows["torch"]
        print(f"{'ratio':10s} {d[0] / t[0]:8.2f} {d[1] / t[1]:8.2f} {d[2] / t[2]:12.2f}")


if __name__ == "__main__":
    main()
