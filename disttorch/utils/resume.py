"""``Checkpointer``: save a training run and resume it exactly where it stopped.

A run that is killed and restarted (``disttorch-launch --max-restarts N``) should end
with the same parameters, bit for bit, as a run that never stopped. That needs more than
the model: the optimiser's state, the LR schedule, the epoch and how many batches of it
were done, and every rank's random number generators. ``Checkpointer`` keeps all of it::

    ckpt = Checkpointer("checkpoints", model=model, optimizer=opt, scheduler=sched)
    state = ckpt.load_latest()                      # a fresh run starts at epoch 0, step 0
    for epoch in range(state.epoch, epochs):
        sampler.set_epoch(epoch)
        for step, batch in ckpt.batches(loader, epoch):   # skips what was already done
            ...train on batch...
            ckpt.save(epoch, step + 1, every=50)          # every 50 steps (all ranks call it)

Saving is collective: every rank calls ``save``; the ranks' RNG states are gathered, and
rank 0 writes ``step-<n>.pt`` atomically, then points ``latest`` at it (also atomically),
so a crash at any moment leaves the previous complete checkpoint as the latest one. The
temporary files a killed save leaves are removed by rank 0 at the next save or
``load_latest`` (a checkpoint directory belongs to one run at a time).
Exactness needs a deterministic data order: a ``DistributedSampler`` (seeded by epoch)
or a sampler with its own ``generator``.

No file runs code: checkpoints hold only tensors, numbers and strings (the RNG states
too, as plain arrays) and are read with ``weights_only=True``; the ``latest`` pointer must
name a file inside the directory (no ``..``, no absolute path, no symlink leading out),
or ``load_latest`` refuses it. Files get the umask's permissions and a failed write
names the path.
"""

from __future__ import annotations

import io
import os
import random
import socket
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import numpy as np

from .. import _random
from .._atomic_file import atomic_write, remove_stale_temporaries
from .._tensor import Tensor
from ..serialization import load, save
from ..serialization.unpickler import Unpickler

__all__ = ["Checkpointer", "TrainingState"]


@dataclass
class TrainingState:
    """Where a run is: ``epoch``, batches done in it (``step``) and in total."""

    epoch: int = 0
    step: int = 0
    global_step: int = 0
    extra: Any = None


def _rng_state() -> dict:
    """This process's generators as plain tensors and numbers: disttorch's default,
    NumPy's global (MT19937) and Python's."""
    name, keys, pos, has_gauss, gauss = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    return {
        "disttorch": _random.get_rng_state(),
        "numpy": {
            "algorithm": name,
            "keys": Tensor._make(np.asarray(keys, np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(gauss),
        },
        "python": {
            "version": version,
            "state": Tensor._make(np.asarray(internal, np.int64)),
            "gauss_next": gauss_next,
        },
    }


def _set_rng_state(state: dict) -> None:
    _random.set_rng_state(state["disttorch"])
    npst, pyst = state["numpy"], state["python"]
    if isinstance(npst, Tensor):  # checkpoints of earlier versions: pickled bytes, read safely
        npst, pyst = (
            _safe_unpickle(
                npst,
                {
                    "numpy.core.multiarray._reconstruct",
                    "numpy.ndarray",
                    "numpy.dtype",
                    "numpy._core.multiarray._reconstruct",
                },
            ),
            _safe_unpickle(pyst, set()),
        )
        np.random.set_state(npst)
        random.setstate(pyst)
        return
    np.random.set_state(
        (
            npst["algorithm"],
            npst["keys"]._data.astype(np.uint32),
            npst["pos"],
            npst["has_gauss"],
            npst["cached_gaussian"],
        )
    )
    random.setstate((pyst["version"], tuple(int(v) for v in pyst["state"]._data), pyst["gauss_next"]))


def _safe_unpickle(t: Tensor, numpy_names: set) -> Any:
    """An RNG state pickled by earlier versions, through the weights-only unpickler plus
    NumPy's array reconstruction (arrays of numbers only)."""
    import importlib

    extra = {}
    for full in numpy_names:
        module, _, name = full.rpartition(".")
        try:
            extra[full] = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    return Unpickler(io.BytesIO(t._data.astype(np.uint8).tobytes()), None, True, extra).load()


#: What every checkpoint holds (see :meth:`Checkpointer.save`).
_CHECKPOINT_KEYS = ("epoch", "step", "global_step", "extra", "model", "rng", "optimizer", "scheduler")


def _checked(ck: Any, path: str) -> dict:
    """``ck`` if it has the shape :meth:`Checkpointer.save` writes; else a RuntimeError naming
    ``path`` and what is wrong (a file crafted or written by another program)."""

    def wrong(what: str) -> RuntimeError:
        return RuntimeError(
            f"{path} is not a checkpoint written by Checkpointer: {what}. Point "
            f"{Checkpointer.LATEST!r} at a step-*.pt file that Checkpointer.save wrote, or remove it"
        )

    if not isinstance(ck, dict):
        raise wrong(f"it holds a {type(ck).__name__}, not a dict")
    missing = [k for k in _CHECKPOINT_KEYS if k not in ck]
    if missing:
        raise wrong(f"it has no {', '.join(map(repr, missing))}")
    for key in ("epoch", "step", "global_step"):
        if type(ck[key]) is not int or ck[key] < 0:
            raise wrong(f"{key!r} is {ck[key]!r}, not a whole number >= 0")
    for key in ("model", "optimizer", "scheduler"):
        if not isinstance(ck[key], dict) and (key == "model" or ck[key] is not None):
            raise wrong(f"{key!r} is a {type(ck[key]).__name__}, not a state dict")
    rngs = ck["rng"]
    if not isinstance(rngs, list) or not rngs:
        raise wrong(f"'rng' is {str(rngs)[:80]}, not a list of every rank's generator states")
    for state in rngs:
        if not isinstance(state, dict) or any(k not in state for k in ("disttorch", "numpy", "python")):
            raise wrong("an entry of 'rng' is not the generator states of a rank")
    return ck


def _dist_info() -> tuple[int, int, Any]:
    from .. import distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size(), dist
    return 0, 1, None


class Checkpointer:
    """Saves and restores everything a run needs to continue exactly.

    Args:
        directory: where checkpoints go (created on rank 0).
        model: the module (pass the inner module of a DDP wrapper, or the wrapper).
        optimizer, scheduler: optional; anything with ``state_dict``/``load_state_dict``.
        keep: how many checkpoints to keep (older ones are deleted after a new save).
    """

    LATEST = "latest"

    def __init__(
        self,
        directory: str | os.PathLike,
        *,
        model: Any,
        optimizer: Any = None,
        scheduler: Any = None,
        keep: int = 2,
    ) -> None:
        self.directory = os.fspath(directory)
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.keep = keep
        self.state = TrainingState()
        self._pending_rng: dict | None = None
        self._global_step = 0

    # ---------------------------------------------------------------- saving
    def save(self, epoch: int, step: int, *, every: int = 1, extra: Any = None) -> str | None:
        """Checkpoint after ``step`` batches of ``epoch`` (when ``global step % every == 0``).

        Every rank must call it (the RNG states are gathered). Returns the path on rank 0.
        """
        self._global_step += 1
        if every > 1 and self._global_step % every:
            return None
        rank, world, dist = _dist_info()
        rngs = [_rng_state()]
        if dist is not None:
            rngs = [None] * world
            dist.all_gather_object(rngs, _rng_state())
        if self.optimizer is not None and hasattr(self.optimizer, "consolidate_state_dict"):
            self.optimizer.consolidate_state_dict(to=0)
        if rank != 0:
            return None
        os.makedirs(self.directory, exist_ok=True)
        self._remove_stale_temporaries()
        payload = {
            "epoch": epoch,
            "step": step,
            "global_step": self._global_step,
            "extra": extra,
            "model": self.model.state_dict(),
            "rng": rngs,
            "optimizer": self.optimizer.state_dict() if self.optimizer is not None else None,
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
        }
        name = f"step-{self._global_step:09d}.pt"
        path = os.path.join(self.directory, name)
        # links planted in the directory are replaced, not written through (as loading refuses them)
        atomic_write(path, lambda f: save(payload, f), follow_links=False)
        atomic_write(
            os.path.join(self.directory, self.LATEST), lambda f: f.write(name.encode()), follow_links=False
        )
        self._prune(name)
        return path

    def _owns(self, name: str) -> bool:
        """Whether ``name`` is one of the files this checkpointer writes."""
        return name == self.LATEST or (name.startswith("step-") and name.endswith(".pt"))

    def _remove_stale_temporaries(self) -> None:
        """Remove what saves killed before their rename left (rank 0, which alone writes)."""
        remove_stale_temporaries(self.directory, self._owns)

    def _prune(self, newest: str) -> None:
        names = sorted(n for n in os.listdir(self.directory) if self._owns(n) and n != self.LATEST)
        for old in names[: -self.keep] if self.keep > 0 else []:
            if old != newest:
                os.unlink(os.path.join(self.directory, old))

    # ---------------------------------------------------------------- resuming
    def latest_path(self) -> str | None:
        """The newest complete checkpoint, or None.

        Raises:
            RuntimeError: the ``latest`` pointer names anything but a file inside the
                directory (an absolute path, ``..``, a subfolder, or a symlink leading out).
        """
        pointer = os.path.join(self.directory, self.LATEST)
        try:
            with open(pointer, "rb") as f:
                raw = f.read(4097)
        except FileNotFoundError:
            return None
        name = raw.decode("utf-8", "replace").strip()
        inside = os.path.realpath(self.directory)
        target = os.path.realpath(os.path.join(inside, name))
        if (
            len(raw) > 4096
            or not name
            or name != os.path.basename(name)
            or name in (".", "..")
            or "\0" in name
            or os.path.dirname(target) != inside
        ):
            raise RuntimeError(
                f"{pointer} names {name[:200]!r}, which is not a checkpoint file inside "
                f"{self.directory}; refusing to follow it. Remove the pointer or write "
                "the name of a step-*.pt file of that folder into it."
            )
        return target if os.path.isfile(target) else None

    def load_latest(self) -> TrainingState:
        """Restore the newest checkpoint if there is one; return where to continue.

        In a process group every rank must call it: the ranks check that they all found the
        same checkpoint (a folder not shared by every node would start its ranks apart).

        RNG states are restored when ``batches`` has skipped the finished batches (or at
        once when there is nothing to skip), so data loading does not disturb them.
        """
        rank, world, dist = _dist_info()
        if rank == 0:
            self._remove_stale_temporaries()
        path = self.latest_path()
        if dist is not None and world > 1:
            self._check_every_rank_found(path, world, dist)
        if path is None:
            self.state = TrainingState()
            return self.state
        ck = _checked(load(path, weights_only=True), path)
        self.model.load_state_dict(ck["model"])
        if self.optimizer is not None and ck["optimizer"] is not None:
            self.optimizer.load_state_dict(ck["optimizer"])
        if self.scheduler is not None and ck["scheduler"] is not None:
            self.scheduler.load_state_dict(ck["scheduler"])
        rngs = ck["rng"]
        self._pending_rng = rngs[rank] if rank < len(rngs) else rngs[0]
        self._global_step = ck["global_step"]
        self.state = TrainingState(ck["epoch"], ck["step"], ck["global_step"], ck["extra"])
        if self.state.step == 0:
            self._restore_rng()
        return self.state

    def _check_every_rank_found(self, path: str | None, world: int, dist: Any) -> None:
        """Raise on every rank unless all ranks found the same newest checkpoint."""
        found: list = [None] * world
        dist.all_gather_object(found, (os.path.basename(path) if path else None, socket.gethostname()))
        if len({name for name, _ in found}) == 1:
            return
        seen: dict = {}
        for r, (name, host) in enumerate(found):
            seen.setdefault(name or "no checkpoint", []).append(f"{r} ({host})")
        what = "; ".join(f"{name} on rank {', '.join(ranks)}" for name, ranks in seen.items())
        raise RuntimeError(
            f"Checkpointer: the ranks found different checkpoints in {self.directory!r}: {what}. "
            "Rank 0 alone writes them, and every rank loads them: resume with a folder every node "
            "sees (a shared filesystem or volume), or copy node 0's folder to the others first"
        )

    def _restore_rng(self) -> None:
        if self._pending_rng is not None:
            _set_rng_state(self._pending_rng)
            self._pending_rng = None

    def batches(self, loader: Iterable, epoch: int) -> Iterator[tuple[int, Any]]:
        """``enumerate(loader)``, skipping the batches of ``epoch`` done before the restart."""
        skip = self.state.step if epoch == self.state.epoch else 0
        it = iter(loader)
        for _ in range(skip):
            next(it)
        self._restore_rng()
        for step, batch in enumerate(it, start=skip):
            yield step, batch
