"""``torchvision.models`` ResNets and ``torchvision.utils`` (``disttorch.vision``): torchvision's
initialisation (same seed, same parameters) and grids, and the alias that serves the package
as ``torchvision`` with torchvision 0.28's version."""

import importlib.metadata

import numpy as np
import pytest

import disttorch as dt
from disttorch import vision
from disttorch.as_torch._finder import TorchAlias, _real_name
from disttorch.vision import models, utils

BATCH = np.random.default_rng(8).random((5, 1, 4, 3)).astype(np.float32)


def test_the_alias_serves_torchvision_with_its_version():
    assert _real_name("torchvision") == "disttorch.vision"
    assert _real_name("torchvision.ops.misc") == "disttorch.vision.ops.misc"
    assert _real_name("torchvisionx") is None
    assert vision.__version__ == "0.28.0+disttorch." + dt.__version__
    context = importlib.metadata.DistributionFinder.Context(name="torchvision")
    (found,) = TorchAlias().find_distributions(context)
    assert found.metadata["Name"] == "torchvision" and found.version == vision.__version__
    assert [d.metadata["Name"] for d in TorchAlias().find_distributions()] == ["torch", "torchvision"]


def test_resnet_trains_and_weights_come_from_the_hub_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    model = models.ResNet(models.resnet.Bottleneck, [1, 1, 1, 1], num_classes=3, width_per_group=16)
    out = model(dt.randn(2, 3, 16, 16))
    out.sum().backward()
    assert out.shape == (2, 3) and model.conv1.weight.grad is not None
    with pytest.raises(RuntimeError, match="resnet18-f37072fd.pth .*not cached"):
        models.resnet18(weights="IMAGENET1K_V1")  # no network: only the hub cache
    with pytest.raises(ValueError, match="'num_classes' expected value 1000 but got 3"):
        models.vgg11(weights=models.VGG11_Weights.DEFAULT, num_classes=3)
    assert models.get_weight("ResNet50_Weights.DEFAULT") is models.ResNet50_Weights.IMAGENET1K_V2


def test_make_grid_and_save_image(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    grid = utils.make_grid(dt.tensor(BATCH), nrow=2, padding=1, pad_value=0.5)
    assert grid.shape == (3, 3 * 5 + 1, 2 * 4 + 1) and float(grid[0, 0, 0]) == 0.5
    np.testing.assert_array_equal(grid[1, 6:10, 5:8].numpy(), BATCH[3, 0])
    utils.save_image(dt.tensor(BATCH), tmp_path / "grid.png", nrow=3)
    assert Image.open(tmp_path / "grid.png").size == (3 * 5 + 2, 2 * 6 + 2)


def _case(lib, tv):
    lib.manual_seed(0)
    model = tv.models.resnet18(num_classes=4, zero_init_residual=True)
    vgg = tv.models.vgg11_bn(num_classes=2)
    grids = [
        tv.utils.make_grid(lib.tensor(BATCH), nrow=2, normalize=True),
        tv.utils.make_grid(
            list(lib.tensor(BATCH * 3 - 1)), normalize=True, value_range=(-1, 1), scale_each=True
        ),
    ]
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    state.update({"vgg." + k: v.numpy() for k, v in vgg.state_dict().items()})
    return state, [g.numpy() for g in grids]


@pytest.mark.parity
def test_resnet_init_and_grids_match_torchvision(torch):
    torchvision = pytest.importorskip("torchvision")
    (ours, our_grids), (theirs, their_grids) = _case(dt, vision), _case(torch, torchvision)
    assert list(ours) == list(theirs)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6, atol=1e-7, err_msg=key)
    for a, b in zip(our_grids, their_grids, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_intermediate_layer_getter_returns_the_children_asked_for():
    from disttorch.vision.models._utils import IntermediateLayerGetter

    dt.manual_seed(0)
    model = models.resnet18()
    body = IntermediateLayerGetter(model, return_layers={"layer2": "mid", "layer4": "0"})
    assert list(body.keys())[-1] == "layer4" and "avgpool" not in body and "fc" not in body
    assert not any(k.startswith("fc.") for k in body.state_dict())
    x = dt.randn(2, 3, 32, 32)
    out = body(x)
    assert (
        list(out) == ["mid", "0"] and out["mid"].shape == (2, 128, 4, 4) and out["0"].shape == (2, 512, 1, 1)
    )
    children = list(model.children())[:-2]  # up to layer4
    expected = x
    for child in children:
        expected = child(expected)
    assert dt.equal(out["0"], expected)
    out["0"].sum().backward()
    assert model.layer4[0].conv1.weight.grad is not None and model.fc.weight.grad is None
    with pytest.raises(ValueError, match="return_layers are not present in model"):
        IntermediateLayerGetter(model, return_layers={"layer9": "0"})
