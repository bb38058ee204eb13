"""``torchvision.models.feature_extraction`` (``disttorch.vision``): node names by module path
(as torchvision names them), selection of a traced-into module's last node, extra leaf
classes through ``tracer_kwargs``, and the errors for unknown or conflicting node lists."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.vision.models.feature_extraction import create_feature_extractor, get_graph_node_names


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x) + x) + 1


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(1, 2, 1)
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(2, 3)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(x.mean((2, 3)))


X = dt.tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32))


def test_node_names_follow_module_paths():
    dt.manual_seed(0)
    train, evaluate = get_graph_node_names(Net())
    block = ["conv", "add", "act", "add_1"]
    expected = ["x", "stem", *[f"blocks.{i}.{n}" for i in (0, 1) for n in block], "mean", "head"]
    assert train == evaluate == expected
    leaf, _ = get_graph_node_names(Net(), tracer_kwargs={"leaf_modules": [Block]})
    assert leaf == ["x", "stem", "blocks.0", "blocks.1", "mean", "head"]


def test_extractor_returns_the_named_outputs_in_graph_order():
    dt.manual_seed(0)
    net = Net().eval()
    extractor = create_feature_extractor(net, {"head": "out", "blocks.0": "first", "blocks.1.act": "act"})
    assert isinstance(extractor, dt.fx.GraphModule)
    out = extractor(X)
    assert list(out) == ["first", "act", "out"]
    first = net.blocks[0](net.stem(X))
    with dt.no_grad():
        expected = {"first": first, "act": net.blocks[1](first) - 1, "out": net(X)}
    for key, value in expected.items():
        np.testing.assert_allclose(out[key].detach().numpy(), value.detach().numpy(), rtol=1e-6)
    out["out"].sum().backward()
    assert net.head.weight.grad is not None  # the extractor shares the model's parameters
    only_stem = create_feature_extractor(net, ["stem"])
    assert [n.op for n in only_stem.graph.nodes] == ["placeholder", "call_module", "output"]


def test_bad_node_lists_are_refused():
    net = Net()
    with pytest.raises(ValueError, match="node: 'blocks.2' is not present in model"):
        create_feature_extractor(net, ["blocks.2"])
    with pytest.raises(ValueError, match="should be specified"):
        create_feature_extractor(net)
    with pytest.raises(ValueError, match="should not be"):
        create_feature_extractor(net, ["stem"], train_return_nodes=["stem"], eval_return_nodes=["stem"])
    with pytest.raises(TypeError, match="list or a dict"):
        create_feature_extractor(net, "stem")
