"""``torchvision.datasets.DatasetFolder``/``ImageFolder``: samples laid out as
``root/<class>/**/<file>``, classes in sorted order of their folder names."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..transforms._functional_pil import pil
from .vision import VisionDataset

__all__ = [
    "DatasetFolder",
    "IMG_EXTENSIONS",
    "ImageFolder",
    "default_loader",
    "find_classes",
    "has_file_allowed_extension",
    "is_image_file",
    "make_dataset",
    "pil_loader",
]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename: str, extensions: str | tuple[str, ...]) -> bool:
    """Whether ``filename`` ends (case-insensitively) with one of ``extensions``."""
    return filename.lower().endswith(extensions if isinstance(extensions, str) else tuple(extensions))


def is_image_file(filename: str) -> bool:
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory: str | os.PathLike) -> tuple[list[str], dict[str, int]]:
    """The class folders of ``directory``, sorted, and their indices."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(
    directory: str | os.PathLike,
    class_to_idx: dict[str, int] | None = None,
    extensions: str | tuple[str, ...] | None = None,
    is_valid_file: Callable[[str], bool] | None = None,
    allow_empty: bool = False,
) -> list[tuple[str, int]]:
    """``(path, class index)`` of every valid file under each class folder (sorted walk;
    links followed). Exactly one of ``extensions`` and ``is_valid_file`` selects the files."""
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if extensions is not None:

        def is_valid_file(path: str) -> bool:
            return has_file_allowed_extension(path, extensions)

    instances, found = [], set()
    for name in sorted(class_to_idx):
        folder = os.path.join(directory, name)
        if not os.path.isdir(folder):
            continue
        for root, _, fnames in sorted(os.walk(folder, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_to_idx[name]))
                    found.add(name)
    empty = set(class_to_idx) - found
    if empty and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            listed = extensions if isinstance(extensions, str) else ", ".join(extensions)
            msg += f"Supported extensions are: {listed}"
        raise FileNotFoundError(msg)
    return instances


class DatasetFolder(VisionDataset):
    """Samples under ``root/<class>/``, read by ``loader``: ``classes``, ``class_to_idx``,
    ``samples`` (``(path, class index)``) and ``targets``."""

    def __init__(
        self,
        root: str | os.PathLike,
        loader: Callable[[str], Any],
        extensions: tuple[str, ...] | None = None,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        self.samples = self.make_dataset(
            self.root, class_to_idx=class_to_idx, extensions=extensions, is_valid_file=is_valid_file,
            allow_empty=allow_empty,
        )  # fmt: skip
        self.loader, self.extensions = loader, extensions
        self.classes, self.class_to_idx = classes, class_to_idx
        self.targets = [s[1] for s in self.samples]

    @staticmethod
    def make_dataset(
        directory: str | os.PathLike,
        class_to_idx: dict[str, int],
        extensions: tuple[str, ...] | None = None,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> list[tuple[str, int]]:
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions, is_valid_file, allow_empty)

    def find_classes(self, directory: str | os.PathLike) -> tuple[list[str], dict[str, int]]:
        return find_classes(directory)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self) -> int:
        return len(self.samples)


def pil_loader(path: str | os.PathLike):
    """The image at ``path`` as an RGB PIL image."""
    with open(path, "rb") as f:
        return pil().open(f).convert("RGB")


def default_loader(path: str | os.PathLike):
    """:func:`pil_loader` (the only image backend here)."""
    return pil_loader(path)


class ImageFolder(DatasetFolder):
    """:class:`DatasetFolder` of images (:data:`IMG_EXTENSIONS`) read as RGB PIL images;
    ``imgs`` is ``samples``."""

    def __init__(
        self,
        root: str | os.PathLike,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        loader: Callable[[str], Any] = default_loader,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> None:
        super().__init__(
            root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
            target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty,
        )  # fmt: skip
        self.imgs = self.samples
