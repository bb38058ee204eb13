"""``nn.utils.prune``: masks, the reparametrization (``<name>_orig``, ``<name>_mask``, the
forward pre-hook), combined pruning, ``global_unstructured``, ``remove`` and the errors."""

import importlib
import re

import numpy as np
import pytest

import disttorch
from disttorch import nn
from disttorch.nn.utils import prune

W = np.random.default_rng(0).standard_normal((6, 3, 2, 2)).astype(np.float32)
FC = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)


def _conv(lib=disttorch):
    conv = lib.nn.Conv2d(3, 6, 2)
    fc = lib.nn.Linear(4, 5)
    with lib.no_grad():
        conv.weight.copy_(lib.tensor(W))
        fc.weight.copy_(lib.tensor(FC))
        conv.bias.copy_(lib.linspace(-1, 1, 6))
        fc.bias.copy_(lib.linspace(-1, 1, 5))
    return conv, fc


def test_reparametrization_and_gradient_only_through_kept_entries():
    conv, _ = _conv()
    prune.l1_unstructured(conv, "weight", amount=0.25)
    assert [n for n, _ in conv.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in conv.named_buffers()] == ["weight_mask"]
    assert prune.is_pruned(conv)
    mask = conv.weight_mask.numpy()
    assert mask.sum() == W.size - round(0.25 * W.size)
    assert (np.abs(W)[mask == 0].max()) <= (np.abs(W)[mask == 1].min())
    conv(disttorch.ones(1, 3, 3, 3)).sum().backward()
    assert np.all(conv.weight_orig.grad.numpy()[mask == 0] == 0)
    np.testing.assert_array_equal(conv.weight.detach().numpy(), W * mask)


def test_remove_makes_it_permanent():
    conv, _ = _conv()
    prune.random_unstructured(conv, "weight", amount=5)
    mask = conv.weight_mask.numpy()
    prune.remove(conv, "weight")
    params = dict(conv.named_parameters())
    assert "weight_orig" not in params and params["weight"] is conv.weight
    assert isinstance(conv.weight, nn.Parameter) and not prune.is_pruned(conv)
    np.testing.assert_array_equal(conv.weight.detach().numpy(), W * mask)
    assert (conv.weight.detach().numpy() == 0).sum() == 5
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(conv, "weight")


def test_repeated_pruning_builds_a_container_and_keeps_pruned_entries():
    conv, _ = _conv()
    prune.l1_unstructured(conv, "weight", amount=0.3)
    first = conv.weight_mask.numpy().copy()
    prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
    hooks = [h for h in conv._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 2
    mask = conv.weight_mask.numpy()
    assert np.all(mask <= first)
    assert (mask.reshape(6, -1).sum(1) == 0).sum() >= 3


def test_errors():
    conv, _ = _conv()
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.l1_unstructured(conv, "weight", amount=1.5)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(conv, "weight", amount="a")
    with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
        prune.l1_unstructured(conv, "bias", amount=100)
    assert "bias" in dict(conv.named_parameters())  # a failed prune leaves the parameter in place
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional"):
        prune.ln_structured(conv, "bias", amount=1, n=1, dim=0)
    with pytest.raises(TypeError, match="unstructured"):
        prune.global_unstructured([(conv, "weight")], pruning_method=prune.LnStructured, amount=1, n=1, dim=0)


@pytest.mark.parity
def test_masks_match_torch():
    torch = pytest.importorskip("torch")
    tprune = pytest.importorskip("torch.nn.utils.prune")
    masks = []
    for lib, pr in ((disttorch, prune), (torch, tprune)):
        conv, fc = _conv(lib)
        pr.l1_unstructured(conv, "bias", amount=2, importance_scores=lib.arange(6.0))
        pr.ln_structured(conv, "weight", amount=0.34, n=1, dim=1)
        pr.l1_unstructured(conv, "weight", amount=7)
        pr.global_unstructured(
            [(conv, "weight"), (fc, "weight")], pruning_method=pr.L1Unstructured, amount=0.2
        )
        pr.custom_from_mask(fc, "bias", mask=lib.tensor([1.0, 0, 1, 0, 1]))
        out = conv(lib.ones(1, 3, 3, 3)).sum() + fc(lib.ones(2, 4)).sum()
        masks.append(
            [m.numpy().copy() for m in (conv.weight_mask, conv.bias_mask, fc.weight_mask, fc.bias_mask)]
            + [out.detach().numpy()]
        )
        pr.remove(fc, "weight")
        masks[-1].append(fc.weight.detach().numpy().copy())
    for ours, theirs in zip(*masks):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parity
def test_random_pruning_draws_pytorch_s_masks(torch):
    import torch.nn.utils.prune as tprune

    for seed in (0, 5):
        disttorch.manual_seed(seed)
        torch.manual_seed(seed)
        ours, theirs = nn.Linear(6, 5), torch.nn.Linear(6, 5)
        prune.random_unstructured(ours, "weight", amount=0.4)
        tprune.random_unstructured(theirs, "weight", amount=0.4)
        np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())
        prune.random_structured(ours, "weight", amount=2, dim=0)
        tprune.random_structured(theirs, "weight", amount=2, dim=0)
        np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())


@pytest.mark.parity
def test_hook_dicts_print_as_pytorchs(torch):
    """The pruning tutorial prints ``module._forward_pre_hooks``."""
    reprs = []
    for lib in (disttorch, torch):
        layer = lib.nn.Linear(2, 2)
        empty = repr(layer._forward_pre_hooks)
        importlib.import_module(f"{lib.__name__}.nn.utils.prune").random_unstructured(layer, "weight", 0.5)
        pruned = repr(layer._forward_pre_hooks).split(" object at ")[0]  # keys: a global hook counter
        reprs.append((empty, re.sub(r"\(\d+, ", "(N, ", pruned.replace("disttorch.", "torch."))))
    expected = ("OrderedDict()", "OrderedDict([(N, <torch.nn.utils.prune.RandomUnstructured")
    assert reprs[0] == reprs[1] == expected
