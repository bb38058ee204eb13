"""The on-disk form of a distributed checkpoint: a directory with one ``__<rank>_0.distcp`` per
rank (PyTorch's file names; the bytes are NumPy's ``.npz`` of the tensor pieces that rank
holds) and ``.metadata`` (JSON, written by rank 0: every key's dtype, global shape and pieces with their first row and file, and the
plain values). Nothing in it is pickled, so loading a checkpoint runs no code.

Every file is written whole or not at all (temporary file, ``fsync``, rename). Each piece
file carries the id of its save, and the metadata the ids of the files it describes: a save
interrupted over an earlier checkpoint leaves files of two saves, which loading refuses
rather than mixing them.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ..._atomic_file import atomic_write
from ..._dtype import _by_name, from_numpy, to_numpy
from ..._tensor import Tensor

__all__ = [
    "flatten",
    "METADATA",
    "piece_file",
    "read_pieces",
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


def flatten(obj: Any, prefix: str = "") -> dict[str, tuple[Any, Any]]:
    """Dotted key -> (container, index) for every leaf of nested dicts and lists."""
    out: dict[str, tuple[Any, Any]] = {}
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        key = f"{prefix}{k}"
        if isinstance(v, (dict, list)) and not isinstance(v, Tensor):
            out.update(flatten(v, key + "."))
        else:
            out[key] = (obj, k)
    return out


def leaf_paths(obj: Any, prefix: str = "", path: tuple = ()) -> dict[str, list]:
    """Dotted key (as :func:`flatten` names it) -> the dict keys (``str``/``int``) and list
    indices (``[i]``) leading to that leaf: the nesting a dotted key loses when names hold
    dots (``model`` -> ``net1.weight``), in a form JSON keeps."""
    out: dict[str, list] = {}
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        key, step = f"{prefix}{k}", (k if isinstance(obj, dict) else [k])
        if isinstance(v, (dict, list)) and not isinstance(v, Tensor):
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


def write_pieces(directory: str, rank: int, pieces: dict[str, np.ndarray], save_id: str) -> None:
    """This rank's pieces, as raw bytes (the dtype is in the metadata), and ``save_id``."""
    arrays = {
        f"p{i}": np.ascontiguousarray(a).view(np.uint8).reshape(-1) for i, a in enumerate(pieces.values())
    }
    arrays[_SAVE_ID] = np.frombuffer(save_id.encode(), np.uint8)
    atomic_write(os.path.join(directory, piece_file(rank)), lambda f: np.savez(f, **arrays))


def read_pieces(directory: str, rank: int, save_id: str | None) -> Any:
    """Rank ``rank``'s pieces; refused unless they belong to save ``save_id`` (``None``: a
    checkpoint written before saves had ids)."""
    path = _existing_piece_file(directory, rank)
    files = np.load(path, allow_pickle=False)
    if save_id is not None:
        found = files[_SAVE_ID].tobytes().decode() if _SAVE_ID in files.files else None
        if found != save_id:
            raise RuntimeError(
                f"{path} was written by another save than {os.path.join(directory, METADATA)} "
                "(a save that did not finish, over an earlier checkpoint?): the checkpoint mixes "
                "two saves; load an earlier checkpoint or save this one again"
            )
    return files


def write_metadata(directory: str, metadata: dict) -> None:
    data = json.dumps(metadata).encode()
    atomic_write(os.path.join(directory, METADATA), lambda f: f.write(data))


def read_metadata(directory: str) -> dict:
    path = os.path.join(directory, METADATA)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{directory} is not a distributed checkpoint: it has no {METADATA} file")
    with open(path) as f:
        return json.load(f)
