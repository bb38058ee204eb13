"""``save``: every rank writes the pieces it holds; rank 0 writes where they all are (per
piece: the rank, the global index of its first element, its shape). Of a DTensor's
replicas along its ``Replicate`` mesh dimensions only the first writes; a plain tensor or
value (replicated, or a rank's own key such as ``dp_rank_1``) is written by the lowest rank
that holds its key, as PyTorch keeps one copy of each (the ranks first exchange their keys).

A rank that fails to write (a full disk, say) tells the others: every rank then raises
``CheckpointException`` naming the failed ranks and their errors, no piece file is renamed into
place (an earlier checkpoint in the directory stays whole and loadable) and no metadata is
written (so the directory never looks like a finished checkpoint).

``async_save`` returns a ``concurrent.futures.Future`` of the metadata, as PyTorch's does. Given
a process group of its own it copies the state and writes it from a background thread, as
PyTorch's does; without one it saves before it returns: a disttorch group takes collectives
from one thread at a time, so the default group cannot serve a background thread beside
training (a group of its own has its own communication thread). A later save into the same
directory first waits for the background saves into it (they would remove each other's
temporary files and mix their pieces).

A failed ``async_save`` whose future nobody asked (``result()`` or ``exception()``) is logged
at exit as an error naming the checkpoint (PyTorch's thread leaves it in the future, silent),
and recorded for the launcher, whose report names it; the exit status stays PyTorch's."""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import threading
import warnings
from concurrent.futures import Future, ThreadPoolExecutor, wait
from enum import Enum
from typing import Any

import numpy as np

from ..._atomic_file import Staged
from ..._error_file import LOST_SAVE, write_error_file
from ..._tensor import Tensor
from .. import groups, object_collectives
from .._shard.sharded_tensor import ShardedTensor
from ..tensor import DTensor
from ..tensor._utils import compute_local_shape_and_global_offset
from ._format import (
    drop_previous_piece,
    dtype_name,
    flatten,
    keep_previous_piece,
    leaf_paths,
    write_metadata,
    write_pieces,
)
from ._plain import plain_to_json
from .api import attempt, checkpoint_directory, raise_failures
from .stateful import stateful_to_state_dict

__all__ = ["AsyncCheckpointerType", "async_save", "save", "save_state_dict"]

logger = logging.getLogger("disttorch.distributed.checkpoint")


class AsyncCheckpointerType(Enum):
    """How PyTorch's ``async_save`` runs the save (a thread or a process); disttorch's
    background save is a thread either way."""

    THREAD = "thread"
    PROCESS = "process"


def _rank_and_world(process_group: Any) -> tuple[int, int]:
    if not groups.is_initialized():
        return 0, 1
    return groups.get_rank(process_group), groups.get_world_size(process_group)


def save(
    state_dict: dict,
    *,
    checkpoint_id: str | os.PathLike | None = None,
    storage_writer: Any = None,
    planner: Any = None,
    process_group: Any = None,
    no_dist: bool = False,
    use_collectives: bool = True,
) -> dict:
    """Save ``state_dict`` (nested dicts of tensors, DTensors and plain values) into the
    directory ``checkpoint_id``: each rank writes its own shards, rank 0 the replicated
    tensors and the metadata; a top-level ``Stateful`` value is saved as its
    ``state_dict()``. Every rank of ``process_group`` (default: the world) must call it; the
    files are named by the ranks in it. Returns the metadata."""
    wait_for_background_saves(checkpoint_directory(checkpoint_id, storage_writer))
    return _Save(state_dict, checkpoint_id, storage_writer, process_group, no_dist).commit()


class _Save:
    """One save: what this rank writes, gathered from the state dict when it is made (the
    arrays as they are, or copies with ``staged``), then :meth:`commit` writes the files and
    agrees with the other ranks of ``process_group`` on the metadata."""

    def __init__(
        self,
        state_dict: dict,
        checkpoint_id: Any,
        storage_writer: Any,
        process_group: Any,
        no_dist: bool,
        staged: bool = False,
    ) -> None:
        state_dict = stateful_to_state_dict(state_dict)
        self.directory = checkpoint_directory(checkpoint_id, storage_writer)
        self.group = process_group
        self.rank, self.world = (0, 1) if no_dist else _rank_and_world(process_group)
        rank = self.rank
        pieces: dict[str, np.ndarray] = {}
        entries: dict[str, dict] = {}
        plain: dict[str, Any] = {}
        shared: list[str] = []  # plain tensors and values: the lowest rank holding one writes it
        for key, (container, index) in flatten(state_dict).items():
            value = container[index]
            if isinstance(value, ShardedTensor):  # this rank's shard (one at most), at its offsets
                shards = value.local_shards()
                if len(shards) > 1:
                    raise ValueError(
                        f"save: '{key}' holds {len(shards)} local shards; one per rank is supported"
                    )
                entries[key] = {"dtype": value.dtype.name, "shape": list(value.size()), "pieces": []}
                for shard in shards:
                    pieces[key] = shard.tensor._data
                    meta = shard.metadata
                    entries[key]["pieces"].append([rank, list(meta.shard_offsets), list(meta.shard_sizes)])
            elif isinstance(value, DTensor):
                mesh, placements = value.device_mesh, value.placements
                # a 0-d tensor is laid out as one row (FSDP's convention)
                _, offset = compute_local_shape_and_global_offset(
                    value.global_shape or (1,), mesh, placements
                )
                first_replica = all(
                    mesh.get_local_rank(m) == 0 for m, p in enumerate(placements) if not p.is_shard()
                )
                spec = {"dtype": dtype_name(value._data), "shape": list(value.global_shape)}
                entries[key] = spec
                if first_replica:
                    pieces[key] = value._data
                    spec["pieces"] = [[rank, list(offset), list(value._data.shape)]]
            elif isinstance(value, Tensor):
                entries[key] = {"dtype": dtype_name(value._data), "shape": list(value._data.shape)}
                pieces[key] = value._data
                entries[key]["pieces"] = [[rank, 0, list(value._data.shape)]]
                shared.append(key)
            else:
                plain[key] = value
                shared.append(key)
        self.pieces, self.entries, self.plain, self.shared = pieces, entries, plain, shared
        self.paths = leaf_paths(state_dict)  # the nesting, for format_utils
        # the state may change as soon as the caller has it back: the plain values are kept
        # as the metadata holds them (a copy) at once, the arrays copied too with ``staged``; a
        # value of no kept type, or a copy that fails, is this rank's failure, which commit
        # reports to every rank
        self.failure = attempt(self._keep_plain) or (attempt(self._stage) if staged else None)

    def _keep_plain(self) -> None:
        self.plain = {key: plain_to_json(value, key) for key, value in self.plain.items()}

    def _stage(self) -> None:
        self.pieces = {k: np.array(v, copy=True) for k, v in self.pieces.items()}

    def _everyone(self, value: Any) -> list:
        """``value`` of every rank of the group, by rank (all-gathered)."""
        if self.world == 1:
            return [value]
        every = [None] * self.world
        object_collectives.all_gather_object(every, value, group=self.group)
        return every

    def commit(self) -> dict:
        """Write this rank's files, gather every rank's entries, and (rank 0) the metadata."""
        rank, world, group = self.rank, self.world, self.group
        save_id = secrets.token_hex(8)
        if world > 1:  # a plain tensor or value that a lower rank holds is that rank's to write
            lower = set().union(*self._everyone(self.shared)[:rank])
            for key in lower.intersection(self.shared):
                self.pieces.pop(key, None)
                self.plain.pop(key, None)
                if key in self.entries:
                    del self.entries[key]["pieces"]
        staged: list = []  # this rank's piece file, written to a temporary (None: written directly)
        failure = self.failure or attempt(
            lambda: staged.append(_write_pieces(self.directory, rank, self.pieces, save_id))
        )
        written = [s for s in staged if s is not None]
        try:
            every = self._everyone(
                (
                    self.entries,
                    list(self.pieces),
                    save_id,
                    self.plain if failure is None else {},
                    self.paths,
                    failure,
                )
            )
            failures = {r: failed for r, (*_, failed) in enumerate(every) if failed is not None}
            raise_failures(failures, "save")
        except BaseException:  # a rank failed or died: an earlier checkpoint here stays whole
            for piece in written:
                piece.discard()
            raise

        def rename() -> None:  # the earlier checkpoint's piece is kept until the metadata is written
            keep_previous_piece(self.directory, rank)
            for piece in written:
                piece.commit()

        renamed = attempt(rename) if written else None
        # every piece file is in place before the metadata names it
        raise_failures(
            {r: failed for r, failed in enumerate(self._everyone(renamed)) if failed is not None}, "save"
        )
        metadata: dict[str, Any] = {
            "tensors": {},
            "plain": {},
            "world_size": world,
            "save_ids": [ids for _, _, ids, *_ in every],
            "paths": {},
        }
        for _, _, _, plain, paths, _ in every:  # by rank: the lowest rank's first
            for key, value in plain.items():
                metadata["plain"].setdefault(key, value)
            for key, path in paths.items():
                metadata["paths"].setdefault(key, path)
        for rank_entries, order, *_ in every:
            for key, spec in rank_entries.items():
                merged = metadata["tensors"].setdefault(
                    key, {"dtype": spec["dtype"], "shape": spec["shape"], "pieces": []}
                )
                for piece in spec.get("pieces", []):
                    merged["pieces"].append(piece + [order.index(key)])
        failure = attempt(lambda: write_metadata(self.directory, metadata)) if rank == 0 else None
        if world > 1:  # rank 0's outcome, and no rank returns before the metadata is written
            outcome = [failure]
            src = groups.get_global_rank(groups.resolve_group(group), 0)
            object_collectives.broadcast_object_list(outcome, src=src, group=group)
            failure = outcome[0]
        raise_failures({0: failure} if failure is not None else {}, "save")
        if written:
            drop_previous_piece(self.directory, rank)
        return metadata


def save_state_dict(
    state_dict: dict,
    storage_writer: Any,
    process_group: Any = None,
    coordinator_rank: int = 0,
    no_dist: bool = False,
    planner: Any = None,
) -> dict:
    """Deprecated (PyTorch's too, with a ``FutureWarning``): :func:`save` into ``storage_writer``."""
    warnings.warn(
        "`save_state_dict` is deprecated and will be removed in future versions.Please use `save` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return save(state_dict, storage_writer=storage_writer, process_group=process_group, no_dist=no_dist)


def _write_pieces(directory: str, rank: int, pieces: dict[str, np.ndarray], save_id: str) -> Staged | None:
    os.makedirs(directory, exist_ok=True)
    return write_pieces(directory, rank, pieces, save_id)


def async_save(
    state_dict: dict,
    *,
    checkpoint_id: str | os.PathLike | None = None,
    storage_writer: Any = None,
    planner: Any = None,
    process_group: Any = None,
    async_checkpointer_type: AsyncCheckpointerType = AsyncCheckpointerType.THREAD,
    async_stager: Any = None,
    no_dist: bool = False,
    use_collectives: bool = True,
) -> Future:
    """:func:`save` returning a ``Future`` of its metadata (or its error). With a
    ``process_group`` of the checkpoint's own (``new_group(backend="gloo")``, as PyTorch's
    recipe makes), the state is copied now and written by a background thread whose
    collectives run over that group, beside training's; otherwise the files are written when
    it returns. Every rank must call it; the state may change as soon as it returns."""
    if not isinstance(async_checkpointer_type, AsyncCheckpointerType):
        raise TypeError(
            f"async_save: async_checkpointer_type must be an AsyncCheckpointerType, got {async_checkpointer_type!r}"
        )
    if not no_dist and _own_group(process_group):
        job = _Save(state_dict, checkpoint_id, storage_writer, process_group, no_dist, staged=True)
        future = _SaveFuture(job.directory)
        _background().submit(_settle, future, job.commit)
        return _track(job.directory, future)
    done = _SaveFuture(checkpoint_id if checkpoint_id is not None else getattr(storage_writer, "path", None))
    _settle(
        done,
        lambda: save(
            state_dict,
            checkpoint_id=checkpoint_id,
            storage_writer=storage_writer,
            planner=planner,
            process_group=process_group,
            no_dist=no_dist,
            use_collectives=use_collectives,
        ),
    )
    return done


class _SaveFuture(Future):
    """An ``async_save``'s future, which remembers whether its outcome was asked for: a
    failure nobody retrieved is logged at exit, naming the checkpoint."""

    def __init__(self, checkpoint: Any) -> None:
        super().__init__()
        self.checkpoint = checkpoint
        self.failure: list | None = None  # [what failed, retrieved] once the save failed

    def result(self, timeout: float | None = None) -> Any:
        try:
            return super().result(timeout)
        finally:
            self._retrieved()

    def exception(self, timeout: float | None = None) -> BaseException | None:
        try:
            return super().exception(timeout)
        finally:
            self._retrieved()

    def _retrieved(self) -> None:
        """Mark a failure as seen, once asking returned (a call waiting for the save when it
        failed saw it too; one that timed out before did not)."""
        if self.failure is not None:
            self.failure[1] = True


# the failed saves, for the report at exit: their text only (a failed save's traceback holds
# its staged copy of the state, which a long run must not keep for each failure)
_failed: list[list] = []


def _settle(future: _SaveFuture, save_now: Any) -> None:
    """Run ``save_now`` and hand its metadata or error to ``future`` (PyTorch hands a failed
    save back through the future)."""
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(save_now())
    except BaseException as error:  # noqa: B902 - CheckpointException is a BaseException
        where = os.fspath(future.checkpoint) if future.checkpoint is not None else "(no checkpoint_id)"
        future.failure = [f"'{where}' failed: {type(error).__name__}: {str(error).rstrip()}", False]
        _failed.append(future.failure)
        future.set_exception(error)
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise


def _one_line(text: str) -> str:
    """A failure's first line and, from a longer text (a ``CheckpointException``'s ranks and
    tracebacks), its last: the error the failed rank raised."""
    lines = [line.strip() for line in text.strip().split("\n") if line.strip()]
    return lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1]}"


@atexit.register
def _report_unretrieved_failures() -> None:
    """Log the failed saves whose futures nobody asked (the background thread is joined
    before ``atexit`` handlers run)."""
    lost = [what for what, retrieved in _failed if not retrieved]
    for what in lost:
        logger.error("async_save of checkpoint %s\n(its future was never asked for its result)", what)
    if lost:  # for the launcher's report: the exit status stays PyTorch's
        write_error_file(LOST_SAVE, "; ".join(f"async_save of checkpoint {_one_line(what)}" for what in lost))
    _failed.clear()


def _own_group(process_group: Any) -> bool:
    """Whether ``process_group`` is a group of its own (not the default one, which training
    uses): only its collectives may run from another thread."""
    if process_group is None or not groups.is_initialized():
        return False
    pg = groups.resolve_group(process_group)
    return pg is not None and pg is not groups.resolve_group(None)


_saver: list[ThreadPoolExecutor] = []
_in_flight: dict[Future, str] = {}  # background saves not yet done, by their directory
_in_flight_lock = threading.Lock()


def _track(directory: str, future: Future) -> Future:
    with _in_flight_lock:
        _in_flight[future] = os.path.realpath(directory)

    def forget(done: Future) -> None:
        with _in_flight_lock:
            _in_flight.pop(done, None)

    future.add_done_callback(forget)
    return future


def wait_for_background_saves(directory: str | os.PathLike) -> None:
    """Wait until this process's background saves into ``directory`` are done (their
    outcome stays with their futures)."""
    where = os.path.realpath(os.fspath(directory))
    with _in_flight_lock:
        pending = [future for future, target in _in_flight.items() if target == where]
    wait(pending)


def _background() -> ThreadPoolExecutor:
    """The thread that writes asynchronous saves, one after another (joined at exit)."""
    if not _saver:
        _saver.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="disttorch-async-save"))
    return _saver[0]
