"""``nn.utils.rnn``: ``PackedSequence`` and the functions that pack, pad and unpack batches of
variable-length sequences (implemented beside the recurrent layers, in
``nn/modules/packed_sequence.py``)."""

from ..modules.packed_sequence import (
    PackedSequence,
    PackedSequence_,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)

__all__ = [
    "PackedSequence",
    "PackedSequence_",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]
