"""The UCI optical handwritten digits: 8x8 images of the digits 0-9 (E. Alpaydin, C. Kaynak, 1998).

3,823 training images and 1,797 test images; the test set was written by other people
than the training set, so test accuracy measures how well a model generalises to new
writers. Pixels are counts 0..16 of set pixels in 4x4 blocks of a 32x32 bitmap.
"""

from __future__ import annotations

import io

import numpy as np

from .._tensor import Tensor
from ..utils.data import Dataset
from ._files import read_text

__all__ = ["load_digits", "OptDigits"]

_FILES = {"train": "optdigits.tra.csv.gz", "test": "optdigits.tes.csv.gz"}
NUM_CLASSES = 10
MAX_PIXEL = 16.0


def _load_arrays(split: str) -> tuple[np.ndarray, np.ndarray]:
    if split not in _FILES:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    table = np.loadtxt(io.StringIO(read_text(_FILES[split])), delimiter=",", skiprows=1, dtype=np.int64)
    images = (table[:, :64].astype(np.float32) / MAX_PIXEL).reshape(-1, 1, 8, 8)
    return np.ascontiguousarray(images), np.ascontiguousarray(table[:, 64])


def load_digits(split: str = "train") -> tuple[Tensor, Tensor]:
    """The digits of one split as two tensors.

    Args:
        split (str): ``"train"`` (3,823 images) or ``"test"`` (1,797 images).

    Returns:
        ``(images, labels)``: images float32 of shape ``[N, 1, 8, 8]`` scaled to [0, 1],
        labels int64 of shape ``[N]`` with classes 0-9.
    """
    images, labels = _load_arrays(split)
    return Tensor._make(images), Tensor._make(labels)


class OptDigits(Dataset):
    """The digits as a map-style dataset of ``(image [1, 8, 8], label)`` pairs.

    Args:
        train (bool): the training split if True (default), else the test split.
    """

    def __init__(self, train: bool = True) -> None:
        self.images, self.labels = load_digits("train" if train else "test")

    def __len__(self) -> int:
        return self.labels.shape[0]

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor]:
        return self.images[index], self.labels[index]
