"""Block layout and argument checks shared by the algorithms.

A collective over ``size`` ranks treats its 1-D buffer as ``size`` consecutive blocks.
Block ``i`` has ``counts[i]`` elements and starts at ``offsets[i]``; blocks may differ in
size and may be empty. Large blocks are further cut into *segments* (pieces) so that one
message, and the scratch buffer that receives it, stays around ``segment_bytes``.

Nothing here communicates: these helpers compute index ranges and check arguments.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def check_buffer(buf: np.ndarray, name: str = "buf") -> None:
    """Raise ``ValueError`` unless ``buf`` is a 1-D C-contiguous NumPy array."""
    if not isinstance(buf, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(buf).__name__}")
    if buf.ndim != 1 or not buf.flags.c_contiguous:
        raise ValueError(
            f"{name} must be a 1-D contiguous array, got shape {buf.shape} with strides "
            f"{buf.strides}; flatten it (e.g. numpy.ascontiguousarray(x).reshape(-1)) first"
        )


def check_root(root: int, size: int) -> None:
    """Raise ``ValueError`` unless ``root`` is a rank of a group of ``size``."""
    if not 0 <= root < size:
        raise ValueError(f"root must be a rank in [0, {size}), got {root}")


def even_counts(numel: int, size: int) -> list[int]:
    """Split ``numel`` elements into ``size`` blocks whose sizes differ by at most one.

    The first ``numel % size`` blocks get one extra element, e.g.
    ``even_counts(7, 3) == [3, 2, 2]``.
    """
    base, extra = divmod(numel, size)
    return [base + (1 if i < extra else 0) for i in range(size)]


def block_offsets(counts: Sequence[int], numel: int, size: int) -> list[int]:
    """Return the ``size + 1`` start offsets of the blocks described by ``counts``.

    Raises ``ValueError`` if there is not one non-negative count per rank or the counts do
    not add up to the buffer's ``numel``.
    """
    if len(counts) != size:
        raise ValueError(f"expected one count per rank ({size} counts), got {len(counts)}")
    offsets = [0]
    for c in counts:
        if c < 0:
            raise ValueError(f"block counts must be non-negative, got {list(counts)}")
        offsets.append(offsets[-1] + int(c))
    if offsets[-1] != numel:
        raise ValueError(
            f"block counts {list(counts)} add up to {offsets[-1]} elements but the buffer holds {numel}"
        )
    return offsets


def segment_count(counts: Sequence[int], itemsize: int, segment_bytes: int) -> int:
    """Number of pieces every block is cut into so that no piece exceeds ``segment_bytes``.

    One count serves all blocks, so in every ring step the piece a rank sends and the
    piece it receives are paired one to one, even when blocks differ in size.
    """
    if segment_bytes <= 0:
        raise ValueError(f"segment_bytes must be positive, got {segment_bytes}")
    largest = max(counts, default=0) * itemsize
    return max(1, -(-largest // segment_bytes))


def piece_bounds(offset: int, count: int, pieces: int) -> list[int]:
    """The ``pieces + 1`` boundaries cutting block ``[offset, offset + count)`` evenly."""
    return [offset + count * i // pieces for i in range(pieces + 1)]


def largest_piece(counts: Sequence[int], pieces: int) -> int:
    """Length of the longest piece produced by :func:`piece_bounds` over all blocks."""
    return -(-max(counts, default=0) // pieces)
