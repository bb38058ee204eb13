"""``torchvision.datasets.CelebA``, read from torchvision's layout: ``root/celeba/`` holding
the aligned images (``img_align_celeba/``) and the five annotation files (attributes,
identities, boxes, landmarks, the train/valid/test partition), each checked by its MD5 as
torchvision checks them. The files come from Google Drive, which needs ``gdown``; this reads
files already there."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from typing import Any

import numpy as np

import disttorch as torch

from ..transforms._functional_pil import pil
from .utils import check_integrity, verify_str_arg
from .vision import VisionDataset

__all__ = ["CelebA"]

_SPLITS = {"train": 0, "valid": 1, "test": 2, "all": None}


def _read_table(path: str, header: bool) -> tuple[list[str], list[str], np.ndarray]:
    """A CelebA annotation file: (column names, first column (file names), the integers after
    it). Columns are separated by runs of spaces; ``header``: a count line and a names line
    come first."""
    with open(path) as f:
        rows = list(csv.reader(f, delimiter=" ", skipinitialspace=True))
    names = rows[1] if header else []
    rows = rows[2:] if header else rows
    values = np.array([[int(v) for v in row[1:]] for row in rows], dtype=np.int64)
    return names, [row[0] for row in rows], values.reshape(len(rows), -1)


class CelebA(VisionDataset):
    """CelebA faces: items are ``(PIL image, target)``, the target per ``target_type``
    (``"attr"``: 40 labels 0/1, ``"identity"``: an int tensor, ``"bbox"``: 4 ints,
    ``"landmarks"``: 10 ints; a list of types gives a tuple, an empty list ``None``)."""

    base_folder = "celeba"
    file_list = [
        ("0B7EVK8r0v71pZjFTYXZWM3FlRnM", "00d2c5bc6d35e252742224ab0c1e8fcb", "img_align_celeba.zip"),
        ("0B7EVK8r0v71pblRyaVFSWGxPY0U", "75e246fa4810816ffd6ee81facbd244c", "list_attr_celeba.txt"),
        ("1_ee_0u7vcNLOfNLegJRHmolfH5ICW-XS", "32bd1bd63d3c78cd57e08160ec5ed1e2", "identity_CelebA.txt"),
        ("0B7EVK8r0v71pbThiMVRxWXZ4dU0", "00566efa6fedff7a56946cd1c10f1c16", "list_bbox_celeba.txt"),
        (
            "0B7EVK8r0v71pd0FJY3Blby1HUTQ",
            "cc24ecafdb5b50baae59b03474781f8c",
            "list_landmarks_align_celeba.txt",
        ),
        ("0B7EVK8r0v71pY0NSMzRuSXJEVkk", "d32c9cbf5e040fd4025c592c306e6668", "list_eval_partition.txt"),
    ]

    def __init__(
        self,
        root: str | os.PathLike,
        split: str = "train",
        target_type: list[str] | str = "attr",
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = split
        self.target_type = list(target_type) if isinstance(target_type, list) else [target_type]
        if not self.target_type and self.target_transform is not None:
            raise RuntimeError("target_transform is specified but target_type is empty")
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        which = _SPLITS[
            verify_str_arg(split.lower() if isinstance(split, str) else split, "split", tuple(_SPLITS))
        ]
        _, files, partition = self._table("list_eval_partition.txt")
        rows = np.arange(len(files)) if which is None else np.flatnonzero(partition[:, 0] == which)
        self.filename = [files[i] for i in rows]
        self.identity = torch.from_numpy(self._table("identity_CelebA.txt")[2][rows])
        self.bbox = torch.from_numpy(self._table("list_bbox_celeba.txt", header=True)[2][rows])
        self.landmarks_align = torch.from_numpy(
            self._table("list_landmarks_align_celeba.txt", header=True)[2][rows]
        )
        self.attr_names, _, attr = self._table("list_attr_celeba.txt", header=True)
        self.attr = torch.from_numpy((attr[rows] + 1) // 2)  # -1/1 -> 0/1

    def _table(self, name: str, header: bool = False) -> tuple[list[str], list[str], np.ndarray]:
        return _read_table(os.path.join(self.root, self.base_folder, name), header)

    def _check_integrity(self) -> bool:
        folder = os.path.join(self.root, self.base_folder)
        for _, md5, name in self.file_list:
            if not name.endswith((".zip", ".7z")) and not check_integrity(os.path.join(folder, name), md5):
                return False
        return os.path.isdir(os.path.join(folder, "img_align_celeba"))

    def download(self) -> None:
        """Nothing when the files are there; CelebA's files are on Google Drive, which needs
        ``gdown`` (as torchvision's download does)."""
        if self._check_integrity():
            return
        raise RuntimeError(
            "To download files from GDrive, 'gdown' is required, which disttorch does not use: "
            f"put CelebA's files ({', '.join(n for _, _, n in self.file_list)}, unpacked) in "
            f"{os.path.join(self.root, self.base_folder)}"
        )

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        image = pil().open(
            os.path.join(self.root, self.base_folder, "img_align_celeba", self.filename[index])
        )
        parts = []
        for kind in self.target_type:
            if kind == "attr":
                parts.append(self.attr[index, :])
            elif kind == "identity":
                parts.append(self.identity[index, 0])
            elif kind == "bbox":
                parts.append(self.bbox[index, :])
            elif kind == "landmarks":
                parts.append(self.landmarks_align[index, :])
            else:
                raise ValueError(f'Target type "{kind}" is not recognized.')
        if self.transform is not None:
            image = self.transform(image)
        target: Any = None
        if parts:
            target = tuple(parts) if len(parts) > 1 else parts[0]
            if self.target_transform is not None:
                target = self.target_transform(target)
        return image, target

    def __len__(self) -> int:
        return len(self.attr)

    def extra_repr(self) -> str:
        return f"Target type: {self.target_type}\nSplit: {self.split}"
