"""``torchvision.datasets.VisionDataset``: the base of the image data sets (a root folder,
``transform``/``target_transform`` or a joint ``transforms``, and torchvision's repr)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from disttorch.utils.data import Dataset

__all__ = ["StandardTransform", "VisionDataset"]


def _indented(transform: Callable, head: str) -> list[str]:
    lines = repr(transform).splitlines()
    return [f"{head}{lines[0]}"] + [" " * len(head) + line for line in lines[1:]]


class StandardTransform:
    """``transform`` on the input and ``target_transform`` on the target, as one callable."""

    def __init__(self, transform: Callable | None = None, target_transform: Callable | None = None) -> None:
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input: Any, target: Any) -> tuple[Any, Any]:
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __repr__(self) -> str:
        body = [type(self).__name__]
        if self.transform is not None:
            body += _indented(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += _indented(self.target_transform, "Target transform: ")
        return "\n".join(body)


class VisionDataset(Dataset):
    """Base class of the data sets: ``root`` (``~`` expanded), and either ``transforms``
    (of input and target together) or ``transform``/``target_transform``."""

    _repr_indent = 4

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        transforms: Callable | None = None,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
    ) -> None:
        self.root = os.path.expanduser(root) if isinstance(root, str) else root
        separate = transform is not None or target_transform is not None
        if transforms is not None and separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        self.transforms = StandardTransform(transform, target_transform) if separate else transforms

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body += [repr(self.transforms)]
        return "\n".join(
            [f"Dataset {type(self).__name__}"] + [" " * self._repr_indent + line for line in body]
        )

    def extra_repr(self) -> str:
        return ""
