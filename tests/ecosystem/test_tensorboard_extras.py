"""SummaryWriter's graph, embedding, PR curve, audio, custom scalars and raw histograms,
read back with TensorBoard's own EventAccumulator."""

from __future__ import annotations

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
        "input/input.0",
        "Sequential/Linear[0]",
        "Sequential/ReLU[1]",
        "Sequential/Linear[2]",
        "output/output.0",
    ]
    assert list(graph.node[2].input) == ["Sequential/Linear[0]"]
    curve = acc.Tensors("pr")[0].tensor_proto
    values = np.array(curve.float_val).reshape(6, 5)
    assert values[0].tolist() == [2, 2, 2, 1, 0] and values[1].tolist() == [2, 1, 0, 0, 0]  # TP, FP
    assert open(os.path.join(tmp_path, "00000", "emb", "metadata.tsv")).read() == "a\nb\nc\nd\ne\n"
    assert 'tensor_name: "emb:00000"' in open(os.path.join(tmp_path, "projector_config.pbtxt")).read()


@pytest.mark.parity
def test_pr_curve_as_pytorch(torch):
    from torch.utils.tensorboard import summary as theirs

    from disttorch.utils.tensorboard import media

    labels, preds = np.array([0, 1, 1, 0, 1]), np.array([0.1, 0.9, 0.6, 0.4, 0.35])
    ours = media.pr_curve("pr", labels, preds, num_thresholds=7).value[0].tensor
    ref = theirs.pr_curve("pr", labels, preds, num_thresholds=7).value[0].tensor
    assert np.allclose(ours.float_val, ref.float_val) and ours.tensor_shape == ref.tensor_shape
