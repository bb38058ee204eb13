"""``torchvision.datasets.MNIST`` and its look-alikes (FashionMNIST, KMNIST), read from
torchvision's layout: ``root/<Class>/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``
(``download=True`` fetches the ``.gz`` files from the class's mirrors, checks their MD5 and
unpacks them there)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any
from urllib.error import URLError

import numpy as np

import disttorch as torch

from ..transforms._functional_pil import image_fromarray
from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset

__all__ = [
    "FashionMNIST",
    "KMNIST",
    "MNIST",
    "read_image_file",
    "read_label_file",
    "read_sn3_pascalvincent_tensor",
]

#: the IDX format's type codes -> NumPy dtypes (big-endian, as stored)
_IDX_TYPES = {8: ">u1", 9: ">i1", 11: ">i2", 12: ">i4", 13: ">f4", 14: ">f8"}


def read_sn3_pascalvincent_tensor(path: str, strict: bool = True) -> torch.Tensor:
    """An IDX file (``magic = type << 8 | ndim``, big-endian sizes, then the values) as a tensor."""
    with open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim, code = magic % 256, magic // 256
    if not (1 <= ndim <= 3 and code in _IDX_TYPES):
        raise ValueError(f"{path} is not an IDX file (magic number {magic:#x})")
    shape = [int.from_bytes(data[4 * (i + 1) : 4 * (i + 2)], "big") for i in range(ndim)]
    values = np.frombuffer(data, dtype=_IDX_TYPES[code], offset=4 * (ndim + 1))
    if strict and values.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {values.size} values for the shape {shape}")
    return torch.from_numpy(values.astype(values.dtype.newbyteorder("="))).view(*shape)


def read_label_file(path: str) -> torch.Tensor:
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != torch.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndimension() != 1:
        raise ValueError(f"x should have 1 dimension instead of {x.ndimension()}")
    return x.long()


def read_image_file(path: str) -> torch.Tensor:
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != torch.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndimension() != 3:
        raise ValueError(f"x should have 3 dimension instead of {x.ndimension()}")
    return x


class MNIST(VisionDataset):
    """The MNIST digits: ``data`` (uint8 ``[N, 28, 28]``) and ``targets`` (int64); items are
    ``(PIL image of mode L, int)`` before the transforms."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = [
        "0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
        "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine",
    ]  # fmt: skip

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
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        split = "train" if self.train else "t10k"
        self.data = read_image_file(os.path.join(self.raw_folder, f"{split}-images-idx3-ubyte"))
        self.targets = read_label_file(os.path.join(self.raw_folder, f"{split}-labels-idx1-ubyte"))

    def _renamed(self, old: str, new: str) -> Any:
        warnings.warn(f"{old} has been renamed {new}", stacklevel=3)
        return getattr(self, new)

    train_labels = property(lambda self: self._renamed("train_labels", "targets"))
    test_labels = property(lambda self: self._renamed("test_labels", "targets"))
    train_data = property(lambda self: self._renamed("train_data", "data"))
    test_data = property(lambda self: self._renamed("test_data", "data"))

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img, target = self.data[index], int(self.targets[index])
        img = image_fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def processed_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "processed")

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.classes)}

    def _check_exists(self) -> bool:
        return all(
            check_integrity(os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0]))
            for url, _ in self.resources
        )

    def download(self) -> None:
        """Fetch each resource from the first mirror that serves it with the right MD5."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(
                        f"{mirror}{filename}", self.raw_folder, filename=filename, md5=md5
                    )
                except (RuntimeError, URLError) as error:
                    errors.append(error)
                    continue
                break
            else:
                tried = "".join(
                    f"Tried {mirror}, got:\n{error}\n" for mirror, error in zip(self.mirrors, errors)
                )
                raise RuntimeError(f"Error downloading {filename}:\n{tried}")

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, in MNIST's layout (``root/FashionMNIST/raw``)."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ]


class KMNIST(MNIST):
    """Kuzushiji-MNIST, in MNIST's layout (``root/KMNIST/raw``)."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
