"""Coverage of ``torch.nn``: every public name of ``torch.nn``, ``torch.nn.functional``,
``torch.nn.init`` and ``torch.nn.utils`` (PyTorch installed) exists in disttorch or is on
the one documented exclusion list below (``EXCLUDED``; the README cites it).

Names that are not API (re-exported imports such as ``math``, ``Optional``, ``torch``)
are recognised by where their object comes from, not listed by hand.
"""

from __future__ import annotations

import importlib
import types

import pytest

# name -> why it stays out. ONE place: the README's "Not in disttorch.nn" section cites it.
EXCLUDED: dict[str, str] = {
    # PyTorch's deprecated alias of torch.ao.nn.quantizable, which disttorch lacks
    "nn.quantizable": "quantizable module variants (not in disttorch's torch.ao.nn)",
    # GPU-only low-precision matrix products
    "F.scaled_mm": "float8 scaled matrix product: a CUDA kernel with no CPU meaning",
    "F.scaled_grouped_mm": "float8 grouped matrix product: CUDA only",
    "F.ScalingType": "enum of the float8 scaled_mm recipes (scaled_mm is out)",
    "F.SwizzleType": "enum of the float8 scaled_mm layouts (scaled_mm is out)",
    # documentation strings and TorchScript/override plumbing
    "F.reproducibility_notes": "docstring fragments of PyTorch's documentation build",
    "F.sparse_support_notes": "docstring fragments of PyTorch's documentation build",
    "F.tf32_notes": "docstring fragments of PyTorch's documentation build",
    "F.assert_int_or_pair": "internal TorchScript argument check",
    "nn.factory_kwargs": "internal helper for device/dtype keyword arguments of PyTorch's modules",
}

_NAMESPACES = {
    "nn": ("torch.nn", "disttorch.nn"),
    "F": ("torch.nn.functional", "disttorch.nn.functional"),
    "init": ("torch.nn.init", "disttorch.nn.init"),
    "utils": ("torch.nn.utils", "disttorch.nn.utils"),
}
_NOT_API_ORIGINS = (
    "typing",
    "typing_extensions",
    "collections.abc",
    "builtins",
    "torch._jit_internal",
    "torch.overrides",
    "torch._C",
)


def _is_api(obj: object) -> bool:
    """False for names a PyTorch module only imported (``math``, ``Optional``, ``torch``,
    ``handle_torch_function``, ``TYPE_CHECKING``, ``Tensor``)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.startswith("torch.nn.")
    if isinstance(obj, bool):
        return False
    origin = getattr(obj, "__module__", None) or ""
    if origin in ("torch",) and isinstance(obj, type):
        return False  # torch.Tensor re-exported
    return not any(origin == o or origin.startswith(o + ".") for o in _NOT_API_ORIGINS)


def _missing(key: str) -> list[str]:
    torch_name, ours_name = _NAMESPACES[key]
    theirs = importlib.import_module(torch_name)
    ours = importlib.import_module(ours_name)
    missing = []
    for name in dir(theirs):
        if name.startswith("_") or not _is_api(getattr(theirs, name)):
            continue
        qual = f"{key}.{name}"
        if qual in EXCLUDED:
            continue
        if not hasattr(ours, name):
            missing.append(name)
    return missing


@pytest.mark.parity
@pytest.mark.parametrize("key", sorted(_NAMESPACES))
def test_every_public_name_exists_or_is_excluded(key: str) -> None:
    pytest.importorskip("torch")
    assert _missing(key) == [], f"missing from {_NAMESPACES[key][1]}"


@pytest.mark.parity
def test_exclusions_are_real_and_not_implemented() -> None:
    """Every excluded name is still a name of PyTorch, and one we do not also provide."""
    pytest.importorskip("torch")
    for qual in EXCLUDED:
        key, name = qual.split(".", 1)
        torch_name, _ = _NAMESPACES[key]
        assert hasattr(importlib.import_module(torch_name), name), qual
    for qual in EXCLUDED:
        key, name = qual.split(".", 1)
        assert not hasattr(importlib.import_module(_NAMESPACES[key][1]), name), f"{qual} exists: unexclude it"


def test_module_paths_mirror_pytorch() -> None:
    """Pickles of whole models name classes by PyTorch's module path; ours resolve."""
    from disttorch import nn

    for path, cls in [
        ("disttorch.nn.modules.conv", "Conv2d"),
        ("disttorch.nn.modules.linear", "Linear"),
        ("disttorch.nn.modules.pooling", "MaxPool3d"),
        ("disttorch.nn.modules.pixelshuffle", "PixelShuffle"),
        ("disttorch.nn.modules.upsampling", "Upsample"),
        ("disttorch.nn.modules.padding", "ReflectionPad2d"),
        ("disttorch.nn.modules.instancenorm", "InstanceNorm2d"),
        ("disttorch.nn.modules.fold", "Unfold"),
        ("disttorch.nn.modules.adaptive", "AdaptiveLogSoftmaxWithLoss"),
        ("disttorch.nn.modules.channelshuffle", "ChannelShuffle"),
        ("disttorch.nn.modules.batchnorm", "LazyBatchNorm2d"),
        ("disttorch.nn.parallel.data_parallel", "DataParallel"),
    ]:
        assert getattr(importlib.import_module(path), cls) is getattr(nn, cls), path


@pytest.mark.parity
def test_every_class_resolves_under_pytorchs_module_path():
    """``torch.nn.modules.<file>.<Class>`` -> ``disttorch.nn.modules.<file>.<Class>`` for every
    class of torch.nn we provide (pickled whole models name classes by that path)."""
    torch = pytest.importorskip("torch")
    unresolved = []
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name)
        qual = f"nn.{name}"
        if not isinstance(cls, type) or qual in EXCLUDED:
            continue
        path = cls.__module__
        if not path.startswith("torch.nn."):
            continue
        try:
            ours = importlib.import_module("disttorch" + path[len("torch") :])
        except ImportError:
            unresolved.append(f"{path}.{name}")
            continue
        if not hasattr(ours, name):
            unresolved.append(f"{path}.{name}")
    assert unresolved == []
