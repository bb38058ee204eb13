"""``torchvision.datasets.CIFAR10``/``CIFAR100``, read from the Python version's pickled
batches (``root/cifar-10-batches-py``, ``root/cifar-100-python``); ``download=True`` fetches
the archive, checks its MD5 and unpacks it. The batches are unpickled by an unpickler that
builds only dicts, lists, strings, numbers and NumPy arrays: a file cannot run code."""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from ..transforms._functional_pil import pil
from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100"]

#: what a NumPy array's pickle names (NumPy 1 and 2 spell its module differently; a protocol-2
#: pickle written by Python 3 spells bytes as ``_codecs.encode`` of a latin-1 string)
_ARRAY_GLOBALS = {
    ("_codecs", "encode"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
}


class _ArrayUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ARRAY_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a CIFAR batch holds only arrays and builtins, not {module}.{name}")


def _load_batch(path: str) -> dict:
    with open(path, "rb") as f:
        return _ArrayUnpickler(io.BytesIO(f.read()), encoding="latin1").load()


class CIFAR10(VisionDataset):
    """CIFAR-10: ``data`` (uint8 ``[N, 32, 32, 3]``), ``targets`` (ints), ``classes``;
    items are ``(PIL RGB image, int)`` before the transforms."""

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(
        self,
        root: str | os.PathLike,
        train: bool = True,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        data, self.targets = [], []
        for name, _ in self.train_list if self.train else self.test_list:
            entry = _load_batch(os.path.join(self.root, self.base_folder, name))
            data.append(entry["data"])
            self.targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self._load_meta()

    def _load_meta(self) -> None:
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not check_integrity(path, self.meta["md5"]):
            raise RuntimeError(
                "Dataset metadata file not found or corrupted. You can use download=True to download it"
            )
        self.classes = _load_batch(path)[self.meta["key"]]
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img, target = pil().fromarray(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return all(
            check_integrity(os.path.join(self.root, self.base_folder, name), md5)
            for name, md5 in self.train_list + self.test_list
        )

    def download(self) -> None:
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.tgz_md5)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100 (the fine labels), in the layout of :class:`CIFAR10`."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
