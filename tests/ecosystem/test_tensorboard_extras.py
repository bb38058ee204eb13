"""SummaryWriter's graph, embedding, PR curve, audio, custom scalars and raw histograms,
read back with TensorBoard's own EventAccumulator."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

pytest.importorskip("tensorboard")

import disttorch as dt  # noqa: E402
from disttorch.utils.tensorboard import SummaryWriter  # noqa: E402


def test_extras_are_read_back(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    model = dt.nn.Sequential(dt.nn.Linear(4, 3), dt.nn.ReLU(), dt.nn.Linear(3, 1))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, dt.randn(2, 4))
        w.add_embedding(dt.randn(5, 3), metadata=list("abcde"), tag="emb")
        w.add_pr_curve("pr", dt.tensor([0, 1, 1, 0]), dt.tensor([0.1, 0.9, 0.6, 0.4]), 0, num_thresholds=5)
        w.add_audio("audio", dt.rand(1, 80) * 2 - 1, 0, sample_rate=8000)
        w.add_custom_scalars({"g": {"loss": ["Multiline", ["a", "b"]]}})
        w.add_histogram_raw("raw", 0, 1, 3, 3, 5, [1, 2], [1, 2], 0)
        with pytest.raises(ValueError, match="bucket_limits"):
            w.add_histogram_raw("bad", 0, 1, 3, 3, 5, [1, 2], [1], 0)
    acc = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags["graph"] and tags["audio"] == ["audio"] and "raw" in tags["histograms"]
    assert sorted(tags["tensors"]) == ["custom_scalars__config__", "pr"]
    graph = acc.Graph()
    assert [n.name for n in graph.node] == [
        "input/input",
        "output/output.1",
        "Sequential/Linear[0]/weight/weight",
        "Sequential/Linear[0]/bias/bias",
        "Sequential/Linear[0]/linear",
        "Sequential/ReLU[1]/relu",
        "Sequential/Linear[2]/weight/weight",
        "Sequential/Linear[2]/bias/bias",
        "Sequential/Linear[2]/linear",
    ]
    assert list(graph.node[5].input) == ["Sequential/Linear[0]/linear"]
    curve = acc.Tensors("pr")[0].tensor_proto
    values = np.array(curve.float_val).reshape(6, 5)
    assert values[0].tolist() == [2, 2, 2, 1, 0] and values[1].tolist() == [2, 1, 0, 0, 0]  # TP, FP
    assert open(os.path.join(tmp_path, "00000", "emb", "metadata.tsv")).read() == "a\nb\nc\nd\ne\n"
    assert 'tensor_name: "emb:00000"' in open(os.path.join(tmp_path, "projector_config.pbtxt")).read()


def test_add_graph_logs_step1_run_metadata_as_pytorch(tmp_path):
    # only the graph was written: TensorBoard listed no run metadata for the graph dashboard
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(dt.nn.Linear(2, 1), dt.randn(3, 2))
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Tags()["run_metadata"] == ["step1"]
    stats = acc.RunMetadata("step1").step_stats
    assert [d.device for d in stats.dev_stats] == ["/device:CPU:0"]
    assert not stats.dev_stats[0].node_stats


def _graph_facts(graph_def) -> list:
    """Each node of an ``add_graph`` graph as a TensorBoard user sees it: an input or output
    by name, an operation by its scope, op and output shapes (PyTorch's constants left out)."""
    facts = []
    for n in graph_def.node:
        shapes = [[d.size for d in s.dim] for s in n.attr["_output_shapes"].list.shape]
        if n.op == "IO Node":
            facts.append((n.name, shapes))
        elif n.op.startswith("aten::"):
            facts.append((n.name.rpartition("/")[0], n.op, shapes, len([i for i in n.input if "/" in i])))
    return facts


@pytest.mark.parity
def test_add_graph_draws_operators_in_module_scopes_as_pytorch(torch):
    # leaf-module calls were drawn, without the operations between them
    from torch.utils.tensorboard._pytorch_graph import graph

    from disttorch.utils.tensorboard.graph import module_graph

    def net(T):
        class Net(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = T.nn.Linear(4, 3)
                self.seq = T.nn.Sequential(T.nn.ReLU(), T.nn.Linear(3, 2))

            def forward(self, x):
                return self.seq(self.fc1(x) * 2).sum(1)

        return Net()

    ours = _graph_facts(module_graph(net(dt), (dt.ones(5, 4),)))
    theirs = _graph_facts(graph(net(torch), (torch.ones(5, 4),))[0])
    assert [f[:3] for f in ours] == [f[:3] for f in theirs]
    assert [f[3:] for f in ours if len(f) > 2] == [(3,), (2,), (1,), (3,), (2,)]  # (constants: 2, 1)


def _constant_edges(T, graph_def) -> list:
    """Each operation's inputs as (op, attr) of the nodes they come from, for a forward whose
    calls pass every argument of their operators (PyTorch draws its schema's defaults too)."""

    class Net(T.nn.Module):
        def forward(self, x, y):
            a = T.nn.functional.gelu(x, approximate="tanh")
            b = T.cat([a, y], dim=1)
            c = T.nn.functional.dropout(b, p=0.5, training=False)
            return c.clamp(min=None, max=2.0)

    graph_def = graph_def(Net(), (T.ones(2, 3), T.ones(2, 2)))
    nodes = {n.name: n for n in graph_def.node}
    return [
        (n.op, [(nodes[i].op, nodes[i].attr["attr"].s.decode()) for i in n.input])
        for n in graph_def.node
        if n.op.startswith("aten::")
    ]


def test_add_graph_draws_constants_and_lists():
    # numbers, strings, flags and None were not drawn, nor the list torch.cat takes
    from disttorch.utils.tensorboard.graph import module_graph

    edges = _constant_edges(dt, module_graph)
    assert edges[1] == (
        "aten::cat",
        [("prim::ListConstruct", "{}"), ("prim::Constant", "{ value : 1}")],
    )
    assert edges[3][1][1:] == [("prim::Constant", "{}"), ("prim::Constant", "{ value : 2.0}")]


@pytest.mark.parity
def test_add_graph_draws_constants_as_pytorch(torch):
    from torch.utils.tensorboard._pytorch_graph import graph

    from disttorch.utils.tensorboard.graph import module_graph

    theirs = _constant_edges(torch, lambda m, x: graph(m, x)[0])
    assert _constant_edges(dt, module_graph) == theirs


@pytest.mark.parity
def test_pr_curve_as_pytorch(torch):
    from torch.utils.tensorboard import summary as theirs

    from disttorch.utils.tensorboard import media

    labels, preds = np.array([0, 1, 1, 0, 1]), np.array([0.1, 0.9, 0.6, 0.4, 0.35])
    ours = media.pr_curve("pr", labels, preds, num_thresholds=7).value[0].tensor
    ref = theirs.pr_curve("pr", labels, preds, num_thresholds=7).value[0].tensor
    assert np.allclose(ours.float_val, ref.float_val) and ours.tensor_shape == ref.tensor_shape


def test_mesh_parts_are_read_back(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.mesh import metadata

    vertices = dt.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]])
    faces = dt.tensor([[[0, 2, 3], [0, 3, 1]]], dtype=dt.int32)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_mesh("m", vertices=vertices, faces=faces, config_dict={"camera": {"fov": 60}}, global_step=3)
        with pytest.raises(ValueError, match="batch, points, 3"):
            w.add_mesh("bad", vertices=dt.ones(4, 3))
    acc = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    acc.Reload()
    assert sorted(acc.Tags()["tensors"]) == ["m_FACE", "m_VERTEX"]
    event = acc.Tensors("m_VERTEX")[0]
    assert event.step == 3 and list(event.tensor_proto.float_val) == vertices.flatten().tolist()
    assert [d.size for d in event.tensor_proto.tensor_shape.dim] == [1, 4, 3]
    data = metadata.parse_plugin_metadata(acc.SummaryMetadata("m_FACE").plugin_data.content)
    assert (
        data.name == "m" and list(data.shape) == [1, 2, 3] and data.json_config == '{"camera": {"fov": 60}}'
    )


def test_video_tiles_the_batch_and_says_when_moviepy_is_missing(tmp_path, capsys):
    from disttorch.utils.tensorboard.mesh_video import _frames

    clips = np.arange(3 * 2 * 1 * 2 * 2, dtype=np.uint8).reshape(3, 2, 1, 2, 2)
    frames = _frames(clips)  # 3 clips padded to 4 (the last black), in one row (as PyTorch)
    assert frames.shape == (2, 2, 8, 1)
    assert frames[1, :, 2:4, 0].tolist() == clips[1, 1, 0].tolist() and not frames[:, :, 6:].any()
    assert _frames(np.ones((8, 1, 3, 2, 2), np.float32)).shape == (1, 4, 8, 3)  # 2 rows of 4
    if importlib.util.find_spec("moviepy") is not None:
        pytest.skip("moviepy is installed")
    with SummaryWriter(str(tmp_path)) as w:
        w.add_video("v", dt.rand(1, 2, 3, 4, 4))
    assert capsys.readouterr().out == "add_video needs package moviepy\n"
