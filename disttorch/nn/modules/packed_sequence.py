"""``PackedSequence`` and the functions that pack, pad and unpack batches of
variable-length sequences, as PyTorch's.

A packed sequence stores the time steps of a batch sorted by decreasing length one after
another: ``data`` has ``sum(lengths)`` rows, ``batch_sizes[t]`` is the number of sequences still
running at step ``t``. Packing and padding are index gathers (``index_select``), so gradients
flow through them.

Users find these at PyTorch's path, ``nn.utils.rnn``, which re-exports them; they live here,
beside the layers, because the recurrent layers take packed input and ``nn.utils`` sits
above the layers. Their ``__module__`` is that public path, so pickles name it.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import _creation
from ... import _dtype as _dtypes
from ..._tensor import Tensor
from ...ops._helpers import broadcast_error
from ...ops.comparison import sort
from ...ops.indexing import index_select
from ...ops.shape import cat

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_SORT_MSG = (
    "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
    "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
    "sidestep this requirement if you do not need ONNX exportability."
)


def _long(a: Any) -> Tensor:
    return Tensor._make(np.ascontiguousarray(a, dtype=np.int64))


_PUBLIC_PATH = "disttorch.nn.utils.rnn"
PackedSequence_ = namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"], module=_PUBLIC_PATH
)


class PackedSequence(PackedSequence_):
    """A batch of variable-length sequences packed time step after time step.

    Attributes:
        data: ``(sum(lengths), *)`` the steps' rows.
        batch_sizes: int64 ``(T,)``, the number of sequences at each time step.
        sorted_indices: int64 ``(B,)`` or None: the batch order used for packing (sequence ``j``
            of the packed batch is the input's sequence ``sorted_indices[j]``).
        unsorted_indices: the inverse permutation, or None.

    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`, not directly.
    """

    __module__ = _PUBLIC_PATH

    __slots__ = ()

    def __new__(  # noqa: PYI034
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence(data_and_batch_sizes_tuple) as in PyTorch
            data, batch_sizes = data
        if not isinstance(batch_sizes, Tensor):
            batch_sizes = _long(batch_sizes)
        elif batch_sizes._data.ndim != 1:
            raise ValueError(
                f"batch_sizes should always be a 1D CPU int64 tensor, but got {batch_sizes._data.ndim}D"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move or cast ``data`` (the indices stay int64 on the CPU); same object if unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda", *args, **kwargs)

    def pin_memory(self) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=_dtypes.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_dtypes.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_dtypes.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=_dtypes.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=_dtypes.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=_dtypes.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=_dtypes.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=_dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of an int64 permutation (None stays None)."""
    if permutation is None:
        return None
    p = np.asarray(permutation._data if isinstance(permutation, Tensor) else permutation)
    inv = np.empty_like(p, dtype=np.int64)
    inv[p] = np.arange(p.size, dtype=np.int64)
    return _long(inv)


def _lengths_array(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        arr = lengths._data
    else:
        arr = np.asarray(lengths)
    if arr.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {arr.ndim}D tensor")
    return arr.astype(np.int64)


def _packed_index(lengths_sorted: np.ndarray, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """For sorted lengths: the batch sizes and, per packed row, its ``(t, j)`` as ``t*batch + j``
    where ``j`` is the position in the sorted batch."""
    t_max = int(lengths_sorted[0]) if lengths_sorted.size else 0
    batch_sizes = (lengths_sorted[None, :] > np.arange(t_max)[:, None]).sum(1)
    t_idx = np.repeat(np.arange(t_max), batch_sizes)
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])
    j_idx = np.arange(t_idx.size) - np.repeat(offsets, batch_sizes)
    return batch_sizes.astype(np.int64), t_idx * batch + j_idx


def pack_padded_sequence(
    input: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    r"""Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of sequences of the
    given lengths.

    Args:
        input: the padded batch.
        lengths: list or 1-D int64 tensor of the ``B`` sequence lengths (each > 0).
        batch_first: input is ``(B, T, *)``.
        enforce_sorted: require lengths in decreasing order; with False the batch is sorted
            here and ``sorted_indices`` records the order.

    Returns:
        a :class:`PackedSequence`.
    """
    lens = _lengths_array(lengths)
    if enforce_sorted:
        if lens.size > 1 and np.any(lens[:-1] < lens[1:]):
            raise RuntimeError(_SORT_MSG)
        sorted_indices = None
        lens_sorted = lens
    else:
        # PyTorch's torch.sort(lengths, descending=True): its order of equal lengths decides
        # which rows a layer's dropout mask falls on
        sorted_indices = sort(_long(lens), descending=True)[1]
        lens_sorted = lens[sorted_indices._data]
    if lens.size and lens_sorted[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if batch_first:
        input = input.transpose(0, 1)
    t_len, batch = input.shape[0], input.shape[1]
    if lens.size != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} (batch_size={batch})"
        )
    if lens.size and lens_sorted[0] > t_len:
        raise RuntimeError(
            f"Expected sequence length to be larger than or equal to the largest "
            f"length {lens_sorted[0]}, but got {t_len}"
        )
    batch_sizes, flat = _packed_index(lens_sorted, batch)
    if sorted_indices is not None:  # column j of the sorted batch is input column order[j]
        flat = (flat // batch) * batch + sorted_indices._data[flat % batch]
    data = index_select(input.reshape(t_len * batch, *input.shape[2:]), 0, _long(flat))
    return PackedSequence(data, _long(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple:
    r"""Inverse of :func:`pack_padded_sequence`: ``(padded, lengths)``.

    Args:
        sequence: the packed batch.
        batch_first: return ``(B, T, *)`` instead of ``(T, B, *)``.
        padding_value: value of the padded positions.
        total_length: pad to this many steps (at least the longest sequence).

    Returns:
        the padded tensor and an int64 tensor of the lengths, both in the batch's original
        order.
    """
    data, bs = sequence.data, sequence.batch_sizes._data
    batch = int(bs[0]) if bs.size else 0
    t_max = bs.size
    if total_length is not None:
        if total_length < t_max:
            raise ValueError(
                f"Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max "
                f"sequence length being {t_max}"
            )
        t_max = total_length
    lens_sorted = (bs[None, :] > np.arange(batch)[:, None]).sum(1)
    _, flat = _packed_index(lens_sorted, batch) if bs.size else (None, np.zeros(0, np.int64))
    gather = np.full(t_max * batch, data.shape[0], dtype=np.int64)  # default: the padding row
    gather[flat] = np.arange(flat.size)
    pad_row = _creation.full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    ext = cat([data, pad_row])
    padded = index_select(ext, 0, _long(gather)).reshape(t_max, batch, *data.shape[1:])
    lengths = lens_sorted
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = lens_sorted[sequence.unsorted_indices._data]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _long(lengths)


def pad_sequence(
    sequences: Tensor | Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    r"""Stack tensors ``(L_i, *)`` of different lengths into ``(T, B, *)`` (``(B, T, *)`` if
    ``batch_first``), padding with ``padding_value`` on ``padding_side`` (``"right"`` or
    ``"left"``)."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trail = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != trail:  # (PyTorch copies each into its slot of the first's shape)
            raise broadcast_error((s.shape[0], *trail), tuple(s.shape))
    lens = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    t_max = int(lens.max())
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    total = int(lens.sum())
    steps = np.arange(t_max)[:, None]  # (T, 1)
    shift = (t_max - lens)[None, :] if padding_side == "left" else 0
    src = steps - shift  # step within each sequence
    valid = (src >= 0) & (src < lens[None, :])
    gather = np.where(valid, starts[None, :] + src, total)  # (T, B); total = padding row
    if batch_first:
        gather = gather.T
    dtype = sequences[0].dtype
    pad_row = _creation.full((1, *trail), padding_value, dtype=dtype)
    ext = cat([*sequences, pad_row])
    return index_select(ext, 0, _long(gather.reshape(-1))).reshape(*gather.shape, *trail)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into the list of its sequences of the given lengths."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _lengths_array(lengths)
    return [padded_sequences[i, : int(n)] for i, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors ``(L_i, *)`` (by decreasing length unless ``enforce_sorted`` is
    False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of tensors packed in ``packed_sequences``, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
