"""Build TensorBoard ``Summary`` protocol buffers (with the tensorboard package's protos):
scalars, histograms, text, and the hparams plugin's experiment/session records."""
from __future__ import annotations

from typing import Any

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
        raise TypeError(f"expected a tensor, NumPy array or number, got {type(value).__name__} "
                        f"(dtype {arr.dtype})")
    return arr


def scalar(tag: str, value: Any, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One scalar; ``new_style`` stores it as a tensor for the scalars plugin."""
    arr = to_numpy(value)
    if arr.size != 1:
        raise ValueError(f"scalar value for tag {tag!r} should have one element, got shape "
                         f"{list(arr.shape)}")
    v = float(arr.reshape(()))
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    tensor = (TensorProto(double_val=[v], dtype="DT_DOUBLE") if double_precision
              else TensorProto(float_val=[v], dtype="DT_FLOAT"))
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
    return Summary(value=[Summary.Value(tag=tag, histo=HistogramProto(
        min=float(arr.min()), max=float(arr.max()), num=float(arr.size), sum=float(arr.sum()),
        sum_squares=float(arr @ arr), bucket_limit=edges[first:last + 2].tolist(),
        bucket=[0.0] + counts[first:last + 1].astype(np.float64).tolist()))])


def text(tag: str, text_string: str) -> Summary:
    """A text entry (the text plugin renders it as Markdown)."""
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)])


def _hp_summary(tag: str, data: plugin_data_pb2.HParamsPluginData) -> Summary:
    meta = hp_metadata.create_summary_metadata(data)
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None
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
            raise ValueError(f"value of hparam {k!r} should be one of int, float, str, bool or a "  # noqa: TRY004
                             f"one-element tensor, got {type(v).__name__}")
        if k in hparam_domain_discrete:
            info.domain_discrete.values.extend(_value_of(x) for x in hparam_domain_discrete[k])
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    version = hp_metadata.PLUGIN_DATA_VERSION
    exp = plugin_data_pb2.HParamsPluginData(
        version=version, experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics))
    start = plugin_data_pb2.HParamsPluginData(
        version=version, session_start_info=plugin_data_pb2.SessionStartInfo(hparams=values))
    end = plugin_data_pb2.HParamsPluginData(
        version=version, session_end_info=plugin_data_pb2.SessionEndInfo(status=api_pb2.STATUS_SUCCESS))
    return (_hp_summary(hp_metadata.EXPERIMENT_TAG, exp),
            _hp_summary(hp_metadata.SESSION_START_INFO_TAG, start),
            _hp_summary(hp_metadata.SESSION_END_INFO_TAG, end))


def _value(**kw: Any) -> struct_pb2.Value:
    return struct_pb2.Value(**kw)


def _value_of(x: Any) -> struct_pb2.Value:
    if isinstance(x, bool):
        return _value(bool_value=x)
    if isinstance(x, (int, float)):
        return _value(number_value=float(x))
    return _value(string_value=str(x))
