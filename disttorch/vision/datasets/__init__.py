"""``torchvision.datasets``: FakeData, DatasetFolder/ImageFolder, MNIST/FashionMNIST/KMNIST,
CIFAR10/CIFAR100, CelebA (on torchvision's on-disk layouts, with its downloads and checks;
CelebA's Google Drive download is not made).
Not provided: the other data sets (ImageNet, COCO, VOC, ...)."""

from .celeba import CelebA
from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import KMNIST, MNIST, FashionMNIST
from .vision import VisionDataset

__all__ = [
    "CIFAR10",
    "CIFAR100",
    "CelebA",
    "DatasetFolder",
    "FakeData",
    "FashionMNIST",
    "ImageFolder",
    "KMNIST",
    "MNIST",
    "VisionDataset",
]
