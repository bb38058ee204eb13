"""``Summary`` protos for the TensorBoard plugins beyond scalars and images: audio (WAV),
precision-recall curves (from data or from counts), raw histograms, whole tensors and the
custom-scalars layout."""

from __future__ import annotations

import io
import wave
from typing import Any, Callable

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve import plugin_data_pb2 as pr_data

from ..._tensor import Tensor
from .summary import to_numpy

__all__ = ["audio", "boxes_drawer", "custom_scalars", "histogram_raw", "pr_curve", "pr_curve_raw", "tensor"]

#: the smallest denominator of precision and recall (TensorBoard's pr_curve summary's)
_MINIMUM_COUNT = 1e-7


def audio(tag: str, sound: Any, sample_rate: int) -> Summary:
    """Mono sound, values in [-1, 1] (clipped), as a 16-bit PCM WAV."""
    samples = to_numpy(sound).astype(np.float64).squeeze()
    if samples.ndim != 1:
        raise ValueError(
            f"add_audio: expected a 1-D sound (or shape (1, L)), got shape {list(samples.shape)}"
        )
    pcm = (np.clip(samples, -1.0, 1.0) * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(pcm.tobytes())
    sound_proto = Summary.Audio(
        sample_rate=float(sample_rate),
        num_channels=1,
        length_frames=pcm.size,
        encoded_audio_string=buffer.getvalue(),
        content_type="audio/wav",
    )
    return Summary(value=[Summary.Value(tag=tag, audio=sound_proto)])


def boxes_drawer(boxes: np.ndarray, labels: list | None, rescale: float) -> Callable[[Any], Any]:
    """What ``add_image_with_boxes`` does to the Pillow image: each box ``(x0, y0, x1, y1)``
    outlined in red (2 pixels), its label (if any) in black on red at its lower left corner
    (Pillow's default font), then the image resized by ``rescale`` (Lanczos)."""

    def draw(picture: Any) -> Any:
        from PIL import Image, ImageDraw, ImageFont

        pen, font = ImageDraw.Draw(picture), ImageFont.load_default()
        for i, (x0, y0, x1, y1) in enumerate(np.asarray(boxes, dtype=np.float64).reshape(-1, 4).tolist()):
            pen.line([(x0, y0), (x0, y1), (x1, y1), (x1, y0), (x0, y0)], width=2, fill="Red")
            if labels is not None:
                left, top, right, bottom = font.getbbox(labels[i])
                height = bottom - top
                pad = np.ceil(0.05 * height)
                pen.rectangle([(x0, y1 - height - 2 * pad), (x0 + right - left, y1)], fill="Red")
                pen.text((x0 + pad, y1 - height - pad), labels[i], fill="black", font=font)
        size = (int(picture.width * rescale), int(picture.height * rescale))
        return picture.resize(size, Image.Resampling.LANCZOS)

    return draw


def _matrix(data: np.ndarray) -> TensorProto:
    dims = [TensorShapeProto.Dim(size=int(n)) for n in data.shape]
    return TensorProto(
        dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(), tensor_shape=TensorShapeProto(dim=dims)
    )


def pr_curve(
    tag: str, labels: Any, predictions: Any, num_thresholds: int = 127, weights: Any = None
) -> Summary:
    """The precision-recall curve of binary ``labels`` against ``predictions`` in [0, 1], at
    ``num_thresholds`` evenly spaced thresholds: rows TP, FP, TN, FN, precision, recall."""
    labels = to_numpy(labels).astype(np.float64).reshape(-1)
    predictions = to_numpy(predictions).astype(np.float64).reshape(-1)
    if labels.shape != predictions.shape:
        raise ValueError(f"add_pr_curve: {labels.size} labels but {predictions.size} predictions")
    w = 1.0 if weights is None else to_numpy(weights).astype(np.float64).reshape(-1)
    bucket = np.floor(predictions * (num_thresholds - 1)).astype(np.int32)
    span = (0, num_thresholds - 1)
    true_pos, _ = np.histogram(bucket, bins=num_thresholds, range=span, weights=labels * w)
    false_pos, _ = np.histogram(bucket, bins=num_thresholds, range=span, weights=(1.0 - labels) * w)
    tp = np.cumsum(true_pos[::-1])[::-1]  # predicted positive at threshold i: buckets >= i
    fp = np.cumsum(false_pos[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_MINIMUM_COUNT, tp + fn)
    return pr_curve_raw(tag, (tp, fp, tn, fn, precision, recall), num_thresholds)


def pr_curve_raw(tag: str, rows: tuple, num_thresholds: int = 127) -> Summary:
    """A precision-recall curve given by its rows: true positive, false positive, true
    negative and false negative counts, precision and recall, one value per threshold."""
    data = np.stack([to_numpy(r).astype(np.float64).reshape(-1) for r in rows])
    if data.shape[1] != num_thresholds:
        raise ValueError(
            f"add_pr_curve_raw: {data.shape[1]} values per row but num_thresholds={num_thresholds}"
        )
    content = pr_data.PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves", content=content))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=_matrix(data))])


#: NumPy dtype name -> (TensorProto dtype, the TensorProto field that holds the values)
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val"),
    "bfloat16": ("DT_BFLOAT16", "half_val"),
    "float32": ("DT_FLOAT", "float_val"),
    "float64": ("DT_DOUBLE", "double_val"),
    "int8": ("DT_INT8", "int_val"),
    "uint8": ("DT_UINT8", "int_val"),
    "int16": ("DT_INT16", "int_val"),
    "int32": ("DT_INT32", "int_val"),
    "int64": ("DT_INT64", "int64_val"),
    "bool": ("DT_BOOL", "bool_val"),
    "complex64": ("DT_COMPLEX64", "scomplex_val"),
    "complex128": ("DT_COMPLEX128", "dcomplex_val"),
}


def tensor(tag: str, value: Any) -> Summary:
    """A whole tensor (the "tensor" plugin): its dtype, shape and values. float16 and
    bfloat16 values are stored as their 16-bit patterns, complex ones as (real, imaginary)
    pairs, as TensorFlow's TensorProto keeps them."""
    arr = np.ascontiguousarray(value.detach()._data if isinstance(value, Tensor) else np.asarray(value))
    if arr.nbytes >= 1 << 31:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if arr.dtype.name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {arr.dtype}")
    dtype, field = _TENSOR_FIELDS[arr.dtype.name]
    flat = arr.reshape(-1)
    if field == "half_val":
        values = flat.view(np.uint16).tolist()
    elif arr.dtype.kind == "c":
        values = np.stack((flat.real, flat.imag), axis=1).reshape(-1).tolist()
    else:
        values = flat.tolist()
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in arr.shape])
    proto = TensorProto(dtype=dtype, tensor_shape=shape, **{field: values})
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def histogram_raw(
    tag: str,
    min: float,
    max: float,
    num: int,
    sum: float,
    sum_squares: float,
    bucket_limits: Any,
    bucket_counts: Any,
) -> Summary:
    """A histogram given by its statistics and buckets (``bucket_limits[i]`` is the right
    edge of bucket ``i``, holding ``bucket_counts[i]`` values)."""
    limits, counts = list(bucket_limits), list(bucket_counts)
    if len(limits) != len(counts):
        raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
    hist = HistogramProto(
        min=min, max=max, num=num, sum=sum, sum_squares=sum_squares, bucket_limit=limits, bucket=counts
    )
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


def custom_scalars(layout: dict) -> Summary:
    """The custom-scalars dashboard: ``{category: {chart title: ["Multiline", [tags]]
    or ["Margin", [value, lower, upper]]}}``."""
    categories = []
    for category, charts in layout.items():
        built = []
        for title, (kind, tags) in charts.items():
            if kind == "Multiline":
                built.append(
                    layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags))
                )
            elif kind == "Margin":
                if len(tags) != 3:
                    raise ValueError(f"a Margin chart takes [value, lower, upper] tags, got {tags!r}")
                series = [layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])]
                built.append(
                    layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=series))
                )
            else:
                raise ValueError(
                    f"custom scalar chart {title!r}: kind must be 'Multiline' or 'Margin', got {kind!r}"
                )
        categories.append(layout_pb2.Category(title=category, chart=built))
    proto = layout_pb2.Layout(category=categories)
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    tensor = TensorProto(
        dtype="DT_STRING", string_val=[proto.SerializeToString()], tensor_shape=TensorShapeProto()
    )
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=tensor, metadata=meta)])
