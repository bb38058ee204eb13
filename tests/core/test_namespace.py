"""The public ``torch.`` namespace: every public name disttorch shows at the top level is one
PyTorch has too, or a deliberate extra listed here with its reason (libraries probe ``torch``
with ``hasattr`` and ``dir``, so a leaked helper changes what they do)."""

import importlib
import pkgutil

import pytest

import disttorch as dt

#: disttorch's own public names that PyTorch lacks, each with why it is there
EXTRAS = {
    "as_torch": "the alias itself (python -m disttorch.as_torch script.py)",
    "datasets": "disttorch's built-in datasets subpackage",
    "kernels": "the NumPy/numba kernels subpackage, an attribute once imported",
    "launcher": "the disttorch-launch subpackage",
    "viz": "disttorch's training-curve plotting subpackage",
    "vision": "the torchvision subset, which the alias serves as torchvision",
}


def _pytorch_has(torch, name: str) -> bool:
    if hasattr(torch, name):
        return True
    try:
        importlib.import_module(f"torch.{name}")
    except ImportError:
        return False
    return True


def test_top_level_names_are_pytorch_names_or_listed_extras(torch):
    public = {name for name in vars(dt) if not name.startswith("_")}
    leaked = sorted(name for name in public - EXTRAS.keys() if not _pytorch_has(torch, name))
    assert leaked == [], f"non-PyTorch public names at torch. top level: {leaked}"


def test_subpackages_are_pytorch_names_or_listed_extras(torch):
    names = {m.name for m in pkgutil.iter_modules(dt.__path__) if not m.name.startswith("_")}
    leaked = sorted(name for name in names - EXTRAS.keys() if not _pytorch_has(torch, name))
    assert leaked == [], f"public disttorch modules PyTorch lacks: {leaked}"


@pytest.mark.parametrize(
    "where", ["Tensor", "nn", "linalg", "special", "fft", "nn.init", "functional", "random", "testing"]
)
def test_namespaces_hold_no_names_pytorch_lacks(torch, where):
    def namespace(lib):
        return lib.Tensor if where == "Tensor" else importlib.import_module(f"{lib.__name__}.{where}")

    ours = {n for n in dir(namespace(dt)) if not n.startswith("_")}
    assert sorted(ours - set(dir(namespace(torch)))) == []


def test_helpers_stay_private_while_inplace_functions_stay_public():
    assert dt.functional.unique is dt.unique  # torch.functional without its import, as in PyTorch
    assert dt.functional.F is dt.nn.functional  # `from torch.functional import F` (tutorials)
    for helper in ("refuse_kernel", "check_cast", "in_half", "scale_first", "view", "setitem", "add_"):
        assert not hasattr(dt, helper), helper
    x = dt.tensor([-1.0, 2.0])
    assert dt.relu_(x) is x and x.tolist() == [0.0, 2.0]
