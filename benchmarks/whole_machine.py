"""The whole machine, split every way: one global batch, the usable cores divided into
ranks x threads (1 x N, ..., N x 1), for disttorch and (when installed) PyTorch, in one run.

    python benchmarks/whole_machine.py [--models cnn,gpt] [--steps 8] [--cores N]
                                       [--batch cnn=128,gpt=32]

Each rank is its own process, pinned to its own ``threads`` cores (as ``disttorch-launch``
pins them), with ``OMP_NUM_THREADS`` and ``set_num_threads`` at ``threads``; with more than
one rank the model is wrapped in DDP (disttorch's process group; PyTorch's gloo) and each
rank trains on ``batch / ranks`` samples. A row gives the median wall time of a step (SGD
with momentum, the models of ``models.py``), samples/s, the peak memory of all ranks
together (the sum of their peak resident sizes) and the step time over PyTorch's best row
for that model (lower is better). NumPy's OpenBLAS chooses its kernels for this CPU, as
PyTorch does, unless ``--keep-openblas-coretype`` (see ``machine.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import multirank  # noqa: E402
from machine import KEEP_FLAG, describe  # noqa: E402

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def worker(lib_name: str, model: str, batch: int, threads: int, steps: int) -> None:
    """One rank: its share of the batch, ``threads`` threads, DDP when there are several."""
    import resource

    lib = multirank.open_library(lib_name, threads)
    world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    dist = lib.distributed
    if world > 1:
        multirank.init_group(lib_name, lib)
    net = multirank.build_model(lib, model)
    if world > 1:
        net = lib.nn.parallel.DistributedDataParallel(net)
    opt = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    step = multirank.training_step(lib, net, opt, model, batch // world, rank)
    for _ in range(2):
        step()
    median = multirank.median_step(step, steps, dist.barrier if world > 1 else None)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("RESULT " + json.dumps({"step": median, "peak_kib": peak_kib}), flush=True)
    if world > 1:
        dist.destroy_process_group()


def run(lib_name: str, model: str, batch: int, ranks: int, threads: int, cores: list, steps: int) -> dict:
    """Start ``ranks`` processes of ``threads`` threads each; rank 0's step time, all ranks' peak."""
    outputs = multirank.launch(
        [__file__, "--worker", lib_name, model, str(batch), str(threads), str(steps)],
        ranks,
        env={name: str(threads) for name in _THREAD_VARS},
        cores=[cores[r * threads : (r + 1) * threads] for r in range(ranks)],
        timeout=1800,
    )
    results, errors = [], []
    for out, err in outputs:
        found = multirank.results_of(out)
        results += found
        if not found:
            errors.append(err[-2000:])
    if errors:
        raise RuntimeError(f"{lib_name} {model} {ranks}x{threads} failed:\n{errors[0]}")
    return {"step": results[0]["step"], "peak_mib": sum(r["peak_kib"] for r in results) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="cnn,gpt")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)), help="cores to split")
    ap.add_argument("--batch", default="", help="global batch per model, e.g. cnn=1024,gpt=128")
    ap.add_argument(KEEP_FLAG, action="store_true", help="keep OPENBLAS_CORETYPE (see machine.py)")
    args = ap.parse_args()
    if KEEP_FLAG not in sys.argv:
        os.environ.pop("OPENBLAS_CORETYPE", None)
    batches = dict(
        multirank.BATCH, **{k: int(v) for k, v in (kv.split("=") for kv in args.batch.split(",") if kv)}
    )
    cores = sorted(os.sched_getaffinity(0))[: args.cores]
    splits = [(r, len(cores) // r) for r in range(1, len(cores) + 1) if len(cores) % r == 0]
    libs = multirank.libraries()
    print(f"{len(cores)} cores, median step of {args.steps}, wall time; {describe(sys.modules.get('torch'))}")
    print(
        f"{'model':5} {'library':9} {'ranks x threads':>15} {'step ms':>9} {'samples/s':>10} {'peak MiB':>9} {'/ best torch':>12}"
    )
    for model in args.models.split(","):
        rows = []
        for ranks, threads in splits:
            for lib in libs:
                rows.append(
                    (lib, ranks, threads, run(lib, model, batches[model], ranks, threads, cores, args.steps))
                )
        best = min((r["step"] for lib, *_, r in rows if lib == "torch"), default=None)
        for lib, ranks, threads, r in rows:
            ratio = f"{r['step'] / best:12.2f}" if best else f"{'-':>12}"
            print(
                f"{model:5} {lib:9} {f'{ranks} x {threads}':>15} {r['step'] * 1e3:9.1f} "
                f"{batches[model] / r['step']:10.0f} {r['peak_mib']:9.0f} {ratio}"
            )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    else:
        main()
