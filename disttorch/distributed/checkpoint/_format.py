"""The on-disk form of a distributed checkpoint: a directory with one ``__<rank>_0.distcp`` per
rank (PyTorch's file names; the bytes are NumPy's ``.npz`` of the tensor pieces that rank
holds) and ``.metadata`` (JSON, written by rank 0: every key's dtype, global shape and pieces with their first row and file, and the
plain values, as ``_plain`` keeps them). Nothing in it is pickled, so loading a checkpoint
runs no code.

Every file is written whole or not at all (temporary file, ``fsync``, rename; the next save of
a file removes the temporary files of its writes that were killed); the piece files are
renamed into place only once every rank has written its own, so a save that fails to write
(a full disk, no permission) over an earlier checkpoint leaves that checkpoint whole. Each piece
file carries the id of its save, and the metadata the ids of the files it describes. Before a
rank renames its new piece file over the one the metadata names, it keeps that one as
``.__<rank>_0.distcp.prev`` until the new metadata is written, so a save interrupted between
the renames and its metadata (a rank killed) leaves the earlier checkpoint loadable: loading
takes the kept file where the other holds a newer save's pieces. Files of two saves that no
kept file reconciles are refused rather than mixed. A damaged piece file (its ``.npz`` members fail their CRC-32, a
header is broken) raises ``ValueError`` naming it, never a tensor with other values.
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO, Callable

import numpy as np

from ..._atomic_file import Staged, remove_stale_temporaries, stage_write
from ..._dtype import _by_name, from_numpy, to_numpy
from ..._tensor import Tensor
from ...serialization.zip_reader import ZIP_DAMAGE
from .._shard.sharded_tensor import ShardedTensor

__all__ = [
    "flatten",
    "METADATA",
    "piece_file",
    "read_pieces",
    "keep_previous_piece",
    "drop_previous_piece",
    "write_pieces",
    "write_metadata",
    "read_metadata",
]

METADATA = ".metadata"
_SAVE_ID = "save_id"  # the array of a piece file that holds its save's id


def piece_file(rank: int) -> str:
    return f"__{rank}_0.distcp"  # PyTorch's name; the bytes are NumPy's .npz


def _existing_piece_file(directory: str, rank: int) -> str:
    """Rank ``rank``'s piece file: :func:`piece_file`, or ``__<rank>_0.npz`` as disttorch
    named it before it took PyTorch's name (such checkpoints still load)."""
    path = os.path.join(directory, piece_file(rank))
    older = os.path.join(directory, f"__{rank}_0.npz")
    return older if not os.path.exists(path) and os.path.exists(older) else path


def _descends(value: Any) -> bool:
    """Whether a state dict's ``value`` is gone into, as PyTorch's: a dict always, a list when
    it holds a tensor or something gone into; any other list, a tuple or another value is one
    leaf (kept whole)."""
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(
        isinstance(v, (Tensor, ShardedTensor)) or _descends(v) for v in value
    )


def flatten(obj: Any, prefix: str = "") -> dict[str, tuple[Any, Any]]:
    """Dotted key -> (container, index) for every leaf of nested dicts and lists (lists
    without tensors are leaves, see :func:`_descends`)."""
    out: dict[str, tuple[Any, Any]] = {}
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        key = f"{prefix}{k}"
        if _descends(v):
            out.update(flatten(v, key + "."))
        else:
            out[key] = (obj, k)
    return out


def leaf_paths(obj: Any, prefix: str = "", path: tuple = ()) -> dict[str, list]:
    """Dotted key (as :func:`flatten` names it) -> the dict keys (``str``/``int`` from 0; any
    other key as its ``str``, as PyTorch's paths name every key) and list indices (``[i]``)
    leading to that leaf: the nesting a dotted key loses when names hold dots (``model`` ->
    ``net1.weight``), in a form JSON keeps."""
    out: dict[str, list] = {}
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        step = [k] if not isinstance(obj, dict) else k if isinstance(k, str) or _count(k) else str(k)
        key = f"{prefix}{k}"
        if _descends(v):
            out.update(leaf_paths(v, key + ".", (*path, step)))
        else:
            out[key] = [*path, step]
    return out


def nest(leaves: dict[str, Any], paths: dict[str, list]) -> dict:
    """The nested dicts and lists :func:`leaf_paths` describes, holding ``leaves``."""
    root: dict = {}
    for key, value in leaves.items():
        node: Any = root
        steps = paths[key]
        for step, following in zip(steps, steps[1:]):
            index = step[0] if isinstance(step, list) else step
            if isinstance(node, list):
                node.extend([None] * (index + 1 - len(node)))
            if (node[index] if isinstance(node, list) else node.get(index)) is None:
                node[index] = [] if isinstance(following, list) else {}
            node = node[index]
        last = steps[-1]
        if isinstance(last, list):
            node.extend([None] * (last[0] + 1 - len(node)))
            node[last[0]] = value
        else:
            node[last] = value
    return root


def dtype_name(arr: np.ndarray) -> str:
    return from_numpy(arr.dtype).name


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a dtype name in the metadata (an unknown name is refused)."""
    try:
        return to_numpy(_by_name(name))
    except KeyError:
        raise ValueError(f"the checkpoint names an unknown dtype {name!r}") from None


def write_pieces(directory: str, rank: int, pieces: dict[str, np.ndarray], save_id: str) -> Staged | None:
    """This rank's pieces, as raw bytes (the dtype is in the metadata), and ``save_id``, written
    to a temporary file that the caller renames into place (``Staged.commit``) once every rank
    has written its own (so a save that fails on one rank leaves an earlier checkpoint whole)."""
    arrays = {
        f"p{i}": np.ascontiguousarray(a).view(np.uint8).reshape(-1) for i, a in enumerate(pieces.values())
    }
    arrays[_SAVE_ID] = np.frombuffer(save_id.encode(), np.uint8)
    return _stage(directory, piece_file(rank), lambda f: np.savez(f, **arrays))


def _previous_piece_file(directory: str, rank: int) -> str:
    return os.path.join(directory, f".{piece_file(rank)}.prev")


def _save_id_of(path: str) -> str | None:
    """The save id a piece file carries (``None``: no such file, or not a piece file)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            return npz[_SAVE_ID].tobytes().decode() if _SAVE_ID in npz.files else None
    except (*ZIP_DAMAGE, TypeError):  # (TypeError: a .npy file, one array)
        return None


def keep_previous_piece(directory: str, rank: int) -> None:
    """Before rank ``rank``'s new piece file is renamed into place: keep the piece file that
    the current metadata names (the earlier checkpoint's) beside it as a hard link, unless an
    interrupted save kept it already; :func:`drop_previous_piece` removes it once the new
    metadata is written. Nothing is kept where links cannot be made."""
    try:
        wanted = read_metadata(directory).get("save_ids", [])[rank]
    except (OSError, ValueError, IndexError):
        return  # no earlier checkpoint here, or one written before saves had ids
    path, kept = os.path.join(directory, piece_file(rank)), _previous_piece_file(directory, rank)
    if _save_id_of(kept) == wanted or _save_id_of(path) != wanted:
        return
    drop_previous_piece(directory, rank)
    try:
        os.link(path, kept)
    except OSError:
        pass


def drop_previous_piece(directory: str, rank: int) -> None:
    """Remove the piece file :func:`keep_previous_piece` kept (the new metadata is written)."""
    try:
        os.unlink(_previous_piece_file(directory, rank))
    except OSError:
        pass


def read_pieces(directory: str, rank: int, save_id: str | None) -> Any:
    """Rank ``rank``'s pieces; refused unless they belong to save ``save_id`` (``None``: a
    checkpoint written before saves had ids), taken from the file an interrupted later save
    kept (:func:`keep_previous_piece`) where the piece file holds that save's."""
    path = _existing_piece_file(directory, rank)
    if save_id is not None and _save_id_of(path) != save_id:
        kept = _previous_piece_file(directory, rank)
        path = kept if _save_id_of(kept) == save_id else path
    try:
        npz = np.load(path, allow_pickle=False)
    except ZIP_DAMAGE as exc:
        raise ValueError(f"{path} is not a piece file of a distributed checkpoint: {exc}") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise ValueError(f"{path} is not a piece file of a distributed checkpoint: it holds one array")
    files = PieceFile(path, npz)
    if save_id is not None:
        found = files[_SAVE_ID].tobytes().decode() if _SAVE_ID in files.files else None
        if found != save_id:
            raise RuntimeError(
                f"{path} was written by another save than {os.path.join(directory, METADATA)} "
                "(a save that did not finish over an earlier checkpoint, or one still running?): the checkpoint mixes "
                "two saves; load an earlier checkpoint or save this one again"
            )
    return files


class PieceFile:
    """A rank's piece file, read member by member (``files[name]``, ``files.files``); a
    damaged member raises ``ValueError`` naming the file."""

    def __init__(self, path: str, npz: Any) -> None:
        self.path, self._npz = path, npz
        self.files = npz.files

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._npz[name]
        except ZIP_DAMAGE as exc:
            raise ValueError(f"{self.path} is damaged: its member {name}: {exc}") from None


def write_metadata(directory: str, metadata: dict) -> None:
    data = json.dumps(metadata).encode()
    staged = _stage(directory, METADATA, lambda f: f.write(data))
    if staged is not None:
        staged.commit()


def _stage(directory: str, name: str, write: Callable[[BinaryIO], None]) -> Staged | None:
    """Write file ``name`` whole to a temporary (see ``stage_write``), first removing what
    writes to it that were killed before their rename (a rank SIGKILLed mid-save) left: only
    this rank writes it."""
    remove_stale_temporaries(directory, lambda target: target == name)
    return stage_write(os.path.join(directory, name), write)


def read_metadata(directory: str) -> dict:
    """The checkpoint's metadata, checked: every piece lies inside its tensor, in a file of
    the checkpoint (a malformed file raises ``ValueError`` naming it and what is wrong)."""
    path = os.path.join(directory, METADATA)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{directory} is not a distributed checkpoint: it has no {METADATA} file")
    with open(path, "rb") as f:
        data = f.read()
    if data[:1] == b"\x80":  # a pickle's first byte: PyTorch's own .metadata
        raise ValueError(
            f"{path} is a pickle, as PyTorch writes a checkpoint's metadata: disttorch reads the "
            "checkpoints it writes and never unpickles one (it could run code); convert it with "
            "PyTorch's torch.distributed.checkpoint.format_utils.dcp_to_torch_save and torch.load the file"
        )
    try:
        metadata = json.loads(data)
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deep
        raise ValueError(f"{path} is not a distributed checkpoint's metadata: {exc}") from None
    problem = _metadata_problem(metadata)
    if problem is not None:
        raise ValueError(f"{path} is malformed: {problem}")
    return metadata


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _metadata_problem(metadata: Any) -> str | None:
    """What is wrong with ``metadata`` (as :func:`write_metadata` writes it), or ``None``."""
    if not isinstance(metadata, dict):
        return "it is not a JSON object"
    tensors, plain = metadata.get("tensors"), metadata.get("plain")
    if not isinstance(tensors, dict) or not isinstance(plain, dict):
        return "'tensors' and 'plain' must be objects"
    ids = metadata.get("save_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return "'save_ids' must be a list of strings"
    world = metadata.get("world_size", len(ids) or None)
    if world is not None and (not _count(world) or (ids and world != len(ids))):
        return f"'world_size' {world!r} must be the number of save ids, {len(ids)}"
    for key, spec in tensors.items():
        problem = _tensor_problem(spec, world)
        if problem is not None:
            return f"tensor {key!r}: {problem}"
    paths = metadata.get("paths", {})
    leaves = len(tensors) + len(plain)
    if not isinstance(paths, dict) or not all(
        isinstance(steps, list)
        and steps
        and all(
            isinstance(step, str)
            or _count(step)
            or (isinstance(step, list) and len(step) == 1 and _count(step[0]) and step[0] < leaves)
            for step in steps
        )
        for steps in paths.values()
    ):
        return "'paths' must map keys to lists of keys and [list index]"
    return None


def _tensor_problem(spec: Any, world: int | None) -> str | None:
    if not isinstance(spec, dict) or not isinstance(spec.get("dtype"), str):
        return "expected an object with a 'dtype'"
    try:
        numpy_dtype(spec["dtype"])
    except ValueError as exc:
        return str(exc)
    shape, pieces = spec.get("shape"), spec.get("pieces")
    if not isinstance(shape, list) or not all(_count(n) for n in shape):
        return f"its shape {shape!r} is not a list of sizes"
    if not isinstance(pieces, list) or (world is not None and len(pieces) > world):
        return f"its pieces must be a list of at most one per rank ({world})"
    rows = shape or [1]  # a 0-d tensor is laid out as one row
    for piece in pieces:
        if not isinstance(piece, list) or len(piece) != 4:
            return f"piece {piece!r} is not [rank, first index, shape, number]"
        rank, first, piece_shape, index = piece
        piece_shape = piece_shape or [1]
        if _count(first):  # a row, in checkpoints written before pieces had several dimensions
            first = [first] + [0] * (len(rows) - 1)
        if not (
            _count(rank)
            and (world is None or rank < world)
            and _count(index)
            and isinstance(first, list)
            and isinstance(piece_shape, list)
            and len(first) == len(piece_shape) == len(rows)
            and all(_count(a) and _count(n) and a + n <= m for a, n, m in zip(first, piece_shape, rows))
        ):
            return f"piece {piece!r} is not one of rank 0..{world - 1 if world else 'N'}'s lying inside shape {shape}"
    return None
