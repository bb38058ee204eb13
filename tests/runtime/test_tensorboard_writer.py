"""utils.tensorboard.SummaryWriter: event files read back with tensorboard's
EventAccumulator (scalars, add_scalars runs, histograms, text, hparams), default log_dir."""

import os

import numpy as np
import pytest

import disttorch as dt

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from disttorch.utils.tensorboard import SummaryWriter


def _load(path):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_scalars_read_back(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        for step in range(5):
            w.add_scalar("loss/train", 1.0 / (step + 1), step)
        w.add_scalar("lr", dt.tensor(0.25), 7, walltime=123.0)
        w.add_scalar("acc", np.float32(0.5), 3, new_style=True)
    acc = _load(tmp_path)
    loss = acc.Scalars("loss/train")
    assert [e.step for e in loss] == list(range(5))
    np.testing.assert_allclose([e.value for e in loss], [1.0 / (s + 1) for s in range(5)], rtol=1e-6)
    (lr,) = acc.Scalars("lr")
    assert (lr.step, lr.value, lr.wall_time) == (7, 0.25, 123.0)
    (t,) = acc.Tensors("acc")
    assert t.step == 3 and t.tensor_proto.float_val == [0.5]
    with pytest.raises(ValueError, match="one element"), SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_scalar("bad", dt.ones(3))


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        for step in range(3):
            w.add_scalars("run/loss", {"train": step * 1.0, "val": step * 2.0}, step)
    runs = sorted(d for d in os.listdir(tmp_path) if (tmp_path / d).is_dir())
    assert runs == ["run_loss_train", "run_loss_val"]
    val = _load(tmp_path / "run_loss_val").Scalars("run/loss")
    assert [e.value for e in val] == [0.0, 2.0, 4.0]


def test_histogram_read_back(tmp_path):
    values = dt.randn(1000)
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_histogram("weights", values, 1)
        w.add_histogram("w_auto", values.numpy(), 2, bins="auto", max_bins=10)
        w.add_histogram("bf16", values.bfloat16(), 3, bins=20)
    acc = _load(tmp_path)
    (h,) = acc.Histograms("weights")
    hv = h.histogram_value
    x = values.numpy().astype(np.float64)
    assert h.step == 1 and hv.num == 1000 and sum(hv.bucket) == 1000
    assert hv.min == pytest.approx(x.min()) and hv.max == pytest.approx(x.max())
    assert hv.sum == pytest.approx(x.sum(), rel=1e-6) and hv.sum_squares == pytest.approx(x @ x, rel=1e-6)
    assert list(hv.bucket_limit) == sorted(hv.bucket_limit)
    (ha,) = acc.Histograms("w_auto")
    n_auto = len(np.histogram(x, bins="auto")[0])
    assert len(ha.histogram_value.bucket) <= n_auto // (n_auto // 10) + 2
    assert sum(ha.histogram_value.bucket) == 1000
    assert sum(acc.Histograms("bf16")[0].histogram_value.bucket) == 1000


def test_text_and_hparams_read_back(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_text("notes", "hello **world**", 4)
        w.add_hparams(
            {"lr": 0.1, "bsize": 32, "opt": "sgd", "nesterov": True},
            {"hparam/accuracy": 0.9},
            run_name="trial1",
        )
    acc = _load(tmp_path)
    (t,) = acc.Tensors("notes/text_summary")
    assert t.step == 4 and t.tensor_proto.string_val == [b"hello **world**"]
    hp = _load(tmp_path / "trial1")
    content = hp.PluginTagToContent("hparams")
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    got = {k: v.WhichOneof("kind") for k, v in start.session_start_info.hparams.items()}
    assert got == {
        "lr": "number_value",
        "bsize": "number_value",
        "opt": "string_value",
        "nesterov": "bool_value",
    }
    assert start.session_start_info.hparams["opt"].string_value == "sgd"
    exp = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"])
    assert [m.name.tag for m in exp.experiment.metric_infos] == ["hparam/accuracy"]
    assert hp.Scalars("hparam/accuracy")[0].value == pytest.approx(0.9)
    with pytest.raises(TypeError, match="dictionaries"), SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_hparams([("lr", 1)], {})


def test_default_log_dir_and_flush(tmp_path, monkeypatch):
    import socket

    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    logdir = w.get_logdir()
    assert logdir.startswith("runs" + os.sep) and logdir.endswith(socket.gethostname() + "_exp")
    w.add_scalar("x", 1.0, 0)
    w.flush()
    files = os.listdir(logdir)
    assert len(files) == 1 and files[0].startswith("events.out.tfevents.")
    assert _load(logdir).Scalars("x")[0].value == 1.0
    w.close()
    w.add_scalar("x", 2.0, 1)  # after close a new event file is opened, as PyTorch does
    w.close()
    assert len(os.listdir(logdir)) == 2


@pytest.mark.parity
def test_same_events_as_pytorch_writer(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    values = np.random.default_rng(0).standard_normal(500).astype(np.float32)
    for name, writer_cls, lib in (("ours", SummaryWriter, dt), ("theirs", TorchWriter, torch)):
        with writer_cls(log_dir=str(tmp_path / name)) as w:
            w.add_scalar("s", 0.5, 1)
            w.add_histogram("h", lib.tensor(values), 2)
            w.add_histogram("h64", lib.tensor(values), 2, bins=64, max_bins=20)
            w.add_scalars("m", {"a": 1.0, "b": 2.0}, 3)
    ours, theirs = _load(tmp_path / "ours"), _load(tmp_path / "theirs")
    assert ours.Scalars("s")[0].value == theirs.Scalars("s")[0].value
    for tag in ("h", "h64"):
        a, b = ours.Histograms(tag)[0].histogram_value, theirs.Histograms(tag)[0].histogram_value
        assert list(a.bucket) == list(b.bucket)
        np.testing.assert_allclose(a.bucket_limit, b.bucket_limit, rtol=1e-12)
        assert (a.min, a.max, a.num) == (b.min, b.max, b.num)
    assert {d for d in os.listdir(tmp_path / "ours") if not d.startswith("events")} == {
        d for d in os.listdir(tmp_path / "theirs") if not d.startswith("events")
    }


def test_images_and_figures_read_back(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    import io

    img = dt.zeros(3, 4, 5)
    img[0] = 1.0  # red, float in [0, 1]
    batch = (np.arange(2 * 1 * 3 * 3).reshape(2, 1, 3, 3) * 10).astype(np.uint8)
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_image("red", img, 1)
        w.add_image("hwc", np.full((2, 3, 3), 200, dtype=np.uint8), 2, dataformats="HWC")
        w.add_images("batch", batch, 3)
        plt = pytest.importorskip("matplotlib.pyplot")
        fig = plt.figure(figsize=(2, 1), dpi=50)
        w.add_figure("fig", fig, 4)
        with pytest.raises(ValueError, match="dataformats"):
            w.add_image("bad", img, dataformats="CHWX")
    acc = _load(tmp_path)

    def pixels(tag):
        (ev,) = acc.Images(tag)
        return ev, np.asarray(Image.open(io.BytesIO(ev.encoded_image_string)))

    ev, px = pixels("red")
    assert (ev.step, ev.height, ev.width) == (1, 4, 5) and px.shape == (4, 5, 3)
    assert (px[..., 0] == 255).all() and (px[..., 1:] == 0).all()
    assert (pixels("hwc")[1] == 200).all()
    ev, px = pixels("batch")
    assert px.shape == (3, 6, 3)  # two 3x3 grey images side by side
    np.testing.assert_array_equal(px[:, 3:, 0], batch[1, 0])
    ev, px = pixels("fig")
    assert (ev.height, ev.width) == (50, 100) and px.shape[2] == 4


def test_tensors_raw_pr_curves_and_chart_shortcuts(tmp_path):
    from tensorboard.plugins.custom_scalar import layout_pb2
    from tensorboard.util import tensor_util

    with SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_tensor("ints", dt.arange(6).reshape(2, 3), 1)
        w.add_tensor("cplx", dt.tensor([1 + 2j], dtype=dt.complex64), 1)
        w.add_tensor("half", dt.tensor([0.5, -1.0], dtype=dt.float16), 1)
        w.add_pr_curve_raw("pr", [5, 3], [4, 2], [0, 2], [0, 2], [0.55, 0.6], [1.0, 0.6], 2, num_thresholds=2)
        w.add_custom_scalars_multilinechart(["a", "b"], title="ab")
        with pytest.raises(ValueError, match="value, lower, upper"):
            w.add_custom_scalars_marginchart(["a", "b"])
    acc = _load(tmp_path)
    read = {
        tag: tensor_util.make_ndarray(acc.Tensors(tag)[0].tensor_proto)
        for tag in ("ints", "cplx", "half", "pr")
    }
    np.testing.assert_array_equal(read["ints"], np.arange(6).reshape(2, 3))
    assert read["cplx"].tolist() == [1 + 2j] and read["half"].tolist() == [0.5, -1.0]
    assert acc.Tensors("pr")[0].step == 2 and read["pr"].shape == (6, 2)
    layout = layout_pb2.Layout.FromString(
        acc.Tensors("custom_scalars__config__")[0].tensor_proto.string_val[0]
    )
    assert layout.category[0].chart[0].title == "ab" and list(layout.category[0].chart[0].multiline.tag) == [
        "a",
        "b",
    ]


def _boxed_images(path, writer_cls, lib) -> dict:
    pytest.importorskip("PIL")
    import io

    from PIL import Image

    img = lib.zeros(3, 32, 40)
    img[1] = lib.linspace(0, 1, 40)
    with writer_cls(log_dir=str(path)) as w:
        w.add_image_with_boxes(
            "b", img, lib.tensor([[2, 3, 20, 25], [10, 5, 30, 30.5]]), 0, labels=["cat", "dog"]
        )
        w.add_image_with_boxes(
            "r", (img * 255).byte(), lib.tensor([[1, 1, 10, 10]]), 0, rescale=2, labels="x"
        )
    acc = EventAccumulator(str(path), size_guidance={"images": 0})
    acc.Reload()
    out = {}
    for tag in ("b", "r"):
        im = acc.Images(tag)[0]
        out[tag] = (im.width, im.height, np.asarray(Image.open(io.BytesIO(im.encoded_image_string))))
    return out


def test_image_with_boxes(tmp_path):
    got = _boxed_images(tmp_path, SummaryWriter, dt)
    w, h, px = got["b"]
    assert (w, h, px.shape) == (40, 32, (32, 40, 3))
    assert px[3, 10].tolist() == [255, 0, 0] and px[24, 2, 0] == 255  # the red outline
    w, h, px = got["r"]
    assert (w, h, px.shape) == (40, 32, (64, 80, 3))  # resized; the proto keeps the array's size


def test_image_with_boxes_pixels_as_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    ours = _boxed_images(tmp_path / "ours", SummaryWriter, dt)
    theirs = _boxed_images(tmp_path / "theirs", TorchWriter, torch)
    for tag in ("b", "r"):
        assert ours[tag][:2] == theirs[tag][:2]
        np.testing.assert_array_equal(ours[tag][2], theirs[tag][2])
