"""``torchvision.datasets.FakeData``: random images, the same ones for the same index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import disttorch as torch

from .. import transforms
from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """``size`` PIL images of ``image_size`` ``(C, H, W)`` drawn from ``randn`` seeded with
    ``index + random_offset`` (the default generator's state is restored after), with a
    random class in ``[0, num_classes)``."""

    def __init__(
        self,
        size: int = 1000,
        image_size: tuple[int, int, int] = (3, 224, 224),
        num_classes: int = 10,
        transform: Callable | None = None,
        target_transform: Callable | None = None,
        random_offset: int = 0,
    ) -> None:
        super().__init__(transform=transform, target_transform=target_transform)
        self.size, self.num_classes, self.image_size, self.random_offset = (
            size,
            num_classes,
            image_size,
            random_offset,
        )

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        state = torch.get_rng_state()
        torch.manual_seed(index + self.random_offset)
        img = torch.randn(*self.image_size)
        target = torch.randint(0, self.num_classes, size=(1,), dtype=torch.long)[0]
        torch.set_rng_state(state)
        img = transforms.ToPILImage()(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item()

    def __len__(self) -> int:
        return self.size
