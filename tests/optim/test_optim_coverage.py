"""Coverage against PyTorch's public names: every public name of ``torch.optim``,
``torch.optim.lr_scheduler``, ``torch.optim.swa_utils``, ``torch.distributions`` (with its
``transforms`` and ``constraints``) exists in disttorch."""

import inspect
import types

import pytest

import disttorch


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    # names PyTorch's modules merely import (typing helpers, other modules) are not API
    return sorted(
        n
        for n in names
        if not isinstance(getattr(module, n, None), types.ModuleType)
        and getattr(getattr(module, n, None), "__module__", module.__name__).startswith("torch")
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "path",
    [
        "optim",
        "optim.lr_scheduler",
        "optim.swa_utils",
        "distributions",
        "distributions.transforms",
        "distributions.constraints",
    ],
)
def test_every_public_name_exists(path):
    torch = pytest.importorskip("torch")
    theirs = torch
    ours = disttorch
    for part in path.split("."):
        theirs, ours = getattr(theirs, part), getattr(ours, part)
    missing = [n for n in _public(theirs) if not hasattr(ours, n)]
    assert missing == [], f"disttorch.{path} lacks {missing}"


@pytest.mark.parity
def test_optimizer_signatures_match_pytorch():
    torch = pytest.importorskip("torch")
    for name in [
        "ASGD",
        "Adadelta",
        "Adafactor",
        "Adagrad",
        "Adam",
        "AdamW",
        "Adamax",
        "LBFGS",
        "Muon",
        "NAdam",
        "RAdam",
        "RMSprop",
        "Rprop",
        "SGD",
        "SparseAdam",
    ]:
        ours = inspect.signature(getattr(disttorch.optim, name).__init__).parameters
        theirs = inspect.signature(getattr(torch.optim, name).__init__).parameters
        assert list(ours) == list(theirs), name
        for p in theirs:
            assert ours[p].default == theirs[p].default, (name, p)
            assert ours[p].kind == theirs[p].kind, (name, p)


@pytest.mark.parity
@pytest.mark.parametrize("path", ["optim.lr_scheduler", "optim.swa_utils", "distributions"])
def test_class_signatures_match_pytorch(path):
    torch = pytest.importorskip("torch")
    theirs, ours = torch, disttorch
    for part in path.split("."):
        theirs, ours = getattr(theirs, part), getattr(ours, part)
    for name in _public(theirs):
        cls = getattr(theirs, name)
        if not inspect.isclass(cls):
            continue
        a = inspect.signature(cls.__init__).parameters
        b = inspect.signature(getattr(ours, name).__init__).parameters
        assert list(a) == list(b), name
        assert all(a[p].default == b[p].default for p in a), name
