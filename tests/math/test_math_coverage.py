"""Every public name of torch, torch.Tensor, torch.linalg, torch.fft and torch.special exists
in disttorch or is accounted for in ``disttorch._coverage`` (excluded with a reason, or a
listed gap)."""

import pytest

import disttorch as dt
from disttorch import _coverage


def _public(obj):
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def _unaccounted(torch_obj, ours, prefix=""):
    missing = []
    for name in _public(torch_obj):
        if hasattr(ours, name) or _coverage.is_accounted(prefix + name) or _coverage.is_accounted(name):
            continue
        missing.append(prefix + name)
    return missing


@pytest.mark.parity
@pytest.mark.parametrize("space", ["torch", "Tensor", "linalg", "special", "sparse", "fft"])
def test_every_public_name_exists_or_is_accounted_for(space):
    torch = pytest.importorskip("torch")
    pairs = {
        "torch": (torch, dt),
        "Tensor": (torch.Tensor, dt.Tensor),
        "linalg": (torch.linalg, dt.linalg),
        "special": (torch.special, dt.special),
        "sparse": (torch.sparse, dt.sparse),
        "fft": (torch.fft, dt.fft),
    }
    theirs, ours = pairs[space]
    missing = _unaccounted(theirs, ours, "" if space == "torch" else f"{space}.")
    assert not missing, f"{space}: {len(missing)} public names neither exist nor are accounted for: {missing}"


def test_excluded_names_are_really_absent():
    """An excluded name must not exist (else the exclusion list is stale)."""
    # (``Tensor`` and ``torch`` are listed for the submodules, whose ``torch.fft.torch`` is the
    # package they import; the top level has both: ``torch.torch is torch``)
    present = [n for n in _coverage.EXCLUDED if hasattr(dt, n) and n not in ("Tensor", "torch")]
    assert not present, f"excluded but present at disttorch top level: {present}"


def test_lists_are_disjoint_and_reasoned():
    assert not (set(_coverage.EXCLUDED) & _coverage.NOT_YET)
    assert all(reason for reason in _coverage.EXCLUDED.values())
