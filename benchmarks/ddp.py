"""DDP step time for the three models of ``train_step.py`` (MLP, CNN, GPT) at world
sizes 1, 2 and 4, beside PyTorch DDP with gloo on the same models when PyTorch is
installed, in one run.

    python benchmarks/ddp.py [--steps 15] [--rounds 3] [--worlds 1,2,4] [--models mlp,cnn,gpt]

Every rank runs one thread and the per-rank batch of ``train_step.py`` (128, 128, 32),
so throughput = world x batch / step time (weak scaling). NumPy's OpenBLAS chooses its
kernels for this CPU, as PyTorch does, unless ``--keep-openblas-coretype`` keeps a pin from
the environment (see ``machine.py``). "exposed comm" is the share of the step that
communication adds over the same step without synchronisation (``(t_sync - t_no_sync) /
t_sync``, measured with ``no_sync()`` in both libraries): the part not hidden behind
backward. Targets on this 2-core machine: disttorch / PyTorch step time <= 0.8 at 2 ranks
for all three models, and 2-rank throughput >= 1.8x the 1-rank throughput for the CNN and
the GPT.

A step time is the median over ``--steps`` steps. The whole sweep runs ``--rounds`` times,
the two libraries taking turns, and each row keeps its fastest round: on a 2-core machine
a round now and then loses a core to something else, and that should not decide a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import multirank  # noqa: E402
from machine import KEEP_FLAG, describe, prepare_blas  # noqa: E402


def worker(lib_name: str, model: str, steps: int) -> None:
    """One rank: build the model, wrap it in DDP, time synced and unsynced steps."""
    lib = multirank.open_library(lib_name)
    multirank.init_group(lib_name, lib)
    dist = lib.distributed
    rank = dist.get_rank()
    net = multirank.build_model(lib, model)
    ddp = lib.nn.parallel.DistributedDataParallel(net)
    opt = lib.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    step = multirank.training_step(lib, ddp, opt, model, multirank.BATCH[model], rank)
    for _ in range(3):
        step()
    t_sync = multirank.median_step(step, steps, dist.barrier)
    with ddp.no_sync():
        t_local = multirank.median_step(step, steps, dist.barrier)
    if rank == 0:
        print("RESULT " + json.dumps({"sync": t_sync, "local": t_local}), flush=True)
    dist.destroy_process_group()


def run(lib_name: str, model: str, world: int, steps: int, script: str = __file__, extra: tuple = ()) -> dict:
    """Start ``world`` rank processes of ``script --worker lib model steps *extra`` (this
    file's by default) and return rank 0's ``RESULT`` line."""
    (out, err), *_ = multirank.launch([script, "--worker", lib_name, model, str(steps), *extra], world)
    for result in multirank.results_of(out):
        return result
    raise RuntimeError(f"{lib_name} {model} world {world} failed:\n{err[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--worlds", default="1,2,4")
    ap.add_argument("--models", default="mlp,cnn,gpt")
    ap.add_argument("--rounds", type=int, default=3, help="sweeps; each row keeps its fastest")
    ap.add_argument(
        KEEP_FLAG, action="store_true", help="keep the environment's OPENBLAS_CORETYPE (see machine.py)"
    )
    args = ap.parse_args()
    prepare_blas()  # one thread per rank and OpenBLAS's own kernels, inherited by the ranks
    libs = multirank.libraries()
    worlds = [int(w) for w in args.worlds.split(",")]
    results: dict = {}
    for _ in range(args.rounds):
        for model in args.models.split(","):
            for world in worlds:
                for lib in libs:
                    r = run(lib, model, world, args.steps)
                    best = results.get((model, world, lib))
                    if best is None or r["sync"] < best["sync"]:
                        results[(model, world, lib)] = r
    print(
        f"median step of {args.steps}, fastest of {args.rounds} rounds; {describe(sys.modules.get('torch'))}"
    )
    head = (
        f"{'model':5} {'world':>5} {'disttorch ms':>12} {'exposed':>8} {'samples/s':>10}"
        + (f" {'torch ms':>9} {'exposed':>8} {'ratio':>6}" if "torch" in libs else "")
        + f" {'scaling':>8}"
    )
    print(head)
    print("-" * len(head))
    for model in args.models.split(","):
        base = None
        for world in worlds:
            d = results[(model, world, "disttorch")]
            thr = world * multirank.BATCH[model] / d["sync"]
            base = base or (thr if world == 1 else None)
            row = (
                f"{model:5} {world:>5} {d['sync'] * 1e3:>12.1f} "
                f"{max(0.0, (d['sync'] - d['local']) / d['sync']):>8.0%} {thr:>10.0f}"
            )
            if "torch" in libs:
                t = results[(model, world, "torch")]
                row += (
                    f" {t['sync'] * 1e3:>9.1f} {max(0.0, (t['sync'] - t['local']) / t['sync']):>8.0%}"
                    f" {d['sync'] / t['sync']:>6.2f}"
                )
            row += f" {thr / base:>7.2f}x" if base else f" {'':>8}"
            print(row)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
