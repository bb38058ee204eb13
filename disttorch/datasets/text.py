"""Tiny Shakespeare (public domain plays, collected by the char-rnn project) and a character vocabulary."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._tensor import Tensor
from ._files import read_text

__all__ = ["load_shakespeare", "CharVocab"]


def load_shakespeare() -> str:
    """About 1.1 million characters of Shakespeare's plays, as one string."""
    return read_text("tinyshakespeare.txt.gz")


class CharVocab:
    """Maps characters to integer ids and back; the ids are the sorted distinct characters of ``text``.

    Args:
        text (str): the text whose characters make up the vocabulary.
    """

    def __init__(self, text: str) -> None:
        self.chars: list[str] = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> Tensor:
        """The ids of ``text`` as an int64 tensor of shape ``[len(text)]``."""
        try:
            ids = [self.index[c] for c in text]
        except KeyError as exc:
            raise ValueError(
                f"character {exc.args[0]!r} is not in the vocabulary of {len(self)} characters"
            ) from None
        return Tensor._make(np.array(ids, dtype=np.int64))

    def decode(self, ids: Sequence[int] | Tensor) -> str:
        """The text of a sequence of ids."""
        values = ids.tolist() if isinstance(ids, Tensor) else ids
        return "".join(self.chars[int(i)] for i in values)
