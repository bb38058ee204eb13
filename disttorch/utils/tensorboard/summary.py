"""Build TensorBoard ``Summary`` protocol buffers (with the tensorboard package's protos):
scalars, histograms, text, and the hparams plugin's experiment/session records."""

from __future__ import annotations

import io
from typing import Any, Callable

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
from tensorboard.plugins.hparams import metadata as hp_metadata

__all__ = ["histogram", "hparams", "scalar", "tensorflow_bins", "text", "to_numpy"]


def to_numpy(value: Any) -> np.ndarray:
    """A disttorch tensor (bfloat16 included), NumPy array or Python number as a float64
    or integer NumPy array."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach()
        value = value.float().numpy() if value.dtype.name == "bfloat16" else value.numpy()
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"expected a tensor, NumPy array or number, got {type(value).__name__} (dtype {arr.dtype})"
        )
    return arr


def scalar(tag: str, value: Any, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One scalar; ``new_style`` stores it as a tensor for the scalars plugin."""
    arr = to_numpy(value)
    if arr.size != 1:
        raise ValueError(f"scalar value for tag {tag!r} should have one element, got shape {list(arr.shape)}")
    v = float(arr.reshape(()))
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    tensor = (
        TensorProto(double_val=[v], dtype="DT_DOUBLE")
        if double_precision
        else TensorProto(float_val=[v], dtype="DT_FLOAT")
    )
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=meta)])


def tensorflow_bins() -> list[float]:
    """TensorFlow's default histogram bucket edges (exponential, ratio 1.1, +-1e-12..1e20)."""
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0.0] + pos


def histogram(tag: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """A histogram of ``values``; ``bins`` as ``numpy.histogram`` takes it (or 'tensorflow').
    Empty buckets at both ends are dropped; with more than ``max_bins`` buckets, groups of
    ``n_buckets // max_bins`` are merged."""
    arr = to_numpy(values).astype(np.float64).reshape(-1)
    if arr.size == 0:
        raise ValueError("The input has no element.")
    if not np.isfinite(arr).all():
        raise ValueError(f"histogram {tag!r}: values contain inf or NaN")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = tensorflow_bins()
    counts, edges = np.histogram(arr, bins=bins)
    if max_bins is not None and counts.size > max_bins:  # merge groups of k buckets (PyTorch's k)
        k = counts.size // max_bins
        counts = np.pad(counts, (0, (-counts.size) % k)).reshape(-1, k).sum(axis=1)
        edges = np.append(edges[:-1:k], edges[-1])
    nonzero = np.flatnonzero(counts)
    first, last = nonzero[0], nonzero[-1]
    # buckets from the first to the last non-empty one, after one empty bucket whose limit is
    # the left edge of the first (as PyTorch writes them)
    return Summary(
        value=[
            Summary.Value(
                tag=tag,
                histo=HistogramProto(
                    min=float(arr.min()),
                    max=float(arr.max()),
                    num=float(arr.size),
                    sum=float(arr.sum()),
                    sum_squares=float(arr @ arr),
                    bucket_limit=edges[first : last + 2].tolist(),
                    bucket=[0.0] + counts[first : last + 1].astype(np.float64).tolist(),
                ),
            )
        ]
    )


def _grid(nchw: np.ndarray) -> np.ndarray:
    """Images ``(N, C, H, W)`` tiled into one ``(C, H', W')`` image, up to 8 per row."""
    n, c, h, w = nchw.shape
    if c == 1:
        nchw, c = np.repeat(nchw, 3, axis=1), 3
    cols = min(n, 8)
    rows = -(-n // cols)
    grid = np.zeros((c, rows * h, cols * w), dtype=nchw.dtype)
    for i in range(n):
        r, q = divmod(i, cols)
        grid[:, r * h : (r + 1) * h, q * w : (q + 1) * w] = nchw[i]
    return grid


def to_hwc(arr: np.ndarray, dataformats: str) -> np.ndarray:
    """An image array in layout ``dataformats`` (e.g. 'CHW', 'HWC', 'HW', 'NCHW') as
    ``(H, W, 3 or 4)``; a batch becomes a grid."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or set(fmt) - set("NCHW") or "H" not in fmt or "W" not in fmt:
        raise ValueError(
            f"dataformats must be a layout such as 'CHW', 'HWC', 'HW' or 'NCHW', got {dataformats!r}"
        )
    if arr.ndim != len(fmt):
        raise ValueError(f"image of shape {list(arr.shape)} does not match dataformats {dataformats!r}")
    if len(fmt) == 4:
        return _grid(arr.transpose([fmt.index(ch) for ch in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = arr.transpose([fmt.index(ch) for ch in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    hw = arr.transpose([fmt.index(ch) for ch in "HW"])
    return np.stack([hw] * 3, axis=2)


def image(tag: str, hwc: np.ndarray, draw: Callable[[Any], Any] | None = None) -> Summary:
    """A PNG image from ``(H, W, C)`` values: floats in [0, 1] or uint8 in [0, 255]
    (out-of-range values clipped). ``draw``, given the Pillow image, returns the image to
    store (with boxes drawn, resized). Needs Pillow."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("SummaryWriter.add_image needs Pillow: pip install pillow") from None
    scale = 1.0 if hwc.dtype == np.uint8 else 255.0
    pixels = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = pixels.shape  # the proto's size is the array's, also for a resized picture (as PyTorch)
    if c not in (3, 4):
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {c}")
    picture = Image.fromarray(pixels)
    if draw is not None:
        picture = draw(picture)
    buf = io.BytesIO()
    picture.save(buf, format="PNG")
    return Summary(
        value=[
            Summary.Value(
                tag=tag,
                image=Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue()),
            )
        ]
    )


def figure_to_hwc(figure: Any, close: bool = True) -> np.ndarray:
    """A matplotlib figure rendered to an ``(H, W, 4)`` uint8 array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba()).copy()
    if close:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return pixels


def text(tag: str, text_string: str) -> Summary:
    """A text entry (the text plugin renders it as Markdown)."""
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    tensor = TensorProto(
        dtype="DT_STRING",
        string_val=[text_string.encode("utf-8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)])


def _hp_summary(tag: str, data: plugin_data_pb2.HParamsPluginData) -> Summary:
    meta = hp_metadata.create_summary_metadata(data)
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(
    hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None
) -> tuple[Summary, Summary, Summary]:
    """The hparams plugin's experiment, session-start and session-end summaries."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionaries.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    infos, values = [], {}
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if hasattr(v, "item") and not isinstance(v, (str, bytes)):
            v = v.item()
        info = api_pb2.HParamInfo(name=k)
        if isinstance(v, bool):
            values[k] = _value(bool_value=v)
            info.type = api_pb2.DATA_TYPE_BOOL
        elif isinstance(v, (int, float)):
            values[k] = _value(number_value=float(v))
            info.type = api_pb2.DATA_TYPE_FLOAT64
        elif isinstance(v, str):
            values[k] = _value(string_value=v)
            info.type = api_pb2.DATA_TYPE_STRING
        else:
            raise ValueError(
                f"value of hparam {k!r} should be one of int, float, str, bool or a "  # noqa: TRY004
                f"one-element tensor, got {type(v).__name__}"
            )
        if k in hparam_domain_discrete:
            info.domain_discrete.values.extend(_value_of(x) for x in hparam_domain_discrete[k])
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    version = hp_metadata.PLUGIN_DATA_VERSION
    exp = plugin_data_pb2.HParamsPluginData(
        version=version, experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)
    )
    start = plugin_data_pb2.HParamsPluginData(
        version=version, session_start_info=plugin_data_pb2.SessionStartInfo(hparams=values)
    )
    end = plugin_data_pb2.HParamsPluginData(
        version=version, session_end_info=plugin_data_pb2.SessionEndInfo(status=api_pb2.STATUS_SUCCESS)
    )
    return (
        _hp_summary(hp_metadata.EXPERIMENT_TAG, exp),
        _hp_summary(hp_metadata.SESSION_START_INFO_TAG, start),
        _hp_summary(hp_metadata.SESSION_END_INFO_TAG, end),
    )


def _value(**kw: Any) -> struct_pb2.Value:
    return struct_pb2.Value(**kw)


def _value_of(x: Any) -> struct_pb2.Value:
    if isinstance(x, bool):
        return _value(bool_value=x)
    if isinstance(x, (int, float)):
        return _value(number_value=float(x))
    return _value(string_value=str(x))
