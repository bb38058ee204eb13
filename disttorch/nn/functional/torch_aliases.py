"""The ``torch.*`` spellings of ``nn.functional`` ops (``torch.conv2d``, ``torch.layer_norm``,
``torch.lstm``, ...), with the argument order and integer reduction codes of PyTorch's
top-level (ATen) signatures where they differ from ``nn.functional``.

``disttorch/__init__.py`` maps these names lazily (a module-level ``__getattr__``), so the
core never imports ``nn``. ``ALIASES`` maps the names whose signature is ``nn.functional``'s
to the functional name; the functions below adapt the others.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ... import _creation
from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ._recurrent import padded_kernel, recurrent_layer, recurrent_stack

__all__ = [
    "ALIASES",
    "adaptive_max_pool1d",
    "alpha_dropout",
    "alpha_dropout_",
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "ctc_loss",
    "dropout",
    "dropout_",
    "embedding",
    "embedding_bag",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "grid_sampler",
    "gru",
    "gru_cell",
    "hinge_embedding_loss",
    "instance_norm",
    "kl_div",
    "lstm",
    "lstm_cell",
    "margin_ranking_loss",
    "max_pool1d_with_indices",
    "poisson_nll_loss",
    "rnn_relu",
    "rnn_relu_cell",
    "rnn_tanh",
    "rnn_tanh_cell",
    "triplet_margin_loss",
]

#: top-level name -> ``nn.functional`` name, for the ops whose signatures agree
ALIASES = {
    n: n
    for n in (
        "adaptive_avg_pool1d avg_pool1d bilinear celu celu_ "
        "channel_shuffle conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
        "cosine_similarity group_norm hardshrink layer_norm max_pool1d "
        "max_pool2d max_pool3d pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu rms_norm "
        "rrelu rrelu_ selu selu_ threshold threshold_"
    ).split()
}

_REDUCTIONS = ("none", "mean", "sum")


def _F_() -> Any:
    """``nn.functional``, imported on use (this module is imported while it loads)."""
    from .. import functional

    return functional


def _reduction(code: int | str) -> str:
    """PyTorch's ATen reduction code (0 none, 1 mean, 2 sum) as ``nn.functional``'s string."""
    if isinstance(code, str) and code in _REDUCTIONS:
        return code
    if isinstance(code, int) and not isinstance(code, bool) and 0 <= code <= 2:
        return _REDUCTIONS[code]
    raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {code!r}")


def _inplace(name: str, input: Tensor, p: float, train: bool) -> Tensor:
    return getattr(_F_(), name)(input, p, train, inplace=True)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout``: zero elements with probability ``p`` (and scale the rest by
    ``1 / (1 - p)``) while ``train``; ATen's argument names (``F.dropout`` says ``training``)."""
    return _F_().dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout``: ``F.alpha_dropout`` with ATen's argument names."""
    return _F_().alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout``: ``F.feature_alpha_dropout`` with ATen's argument names."""
    return _F_().feature_alpha_dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.dropout``: zero elements with probability ``p`` while ``train``."""
    return _inplace("dropout", input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.alpha_dropout``."""
    return _inplace("alpha_dropout", input, p, train)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zero whole channels (dim 1) with probability ``p`` while ``train`` (``nn.Dropout2d``'s op,
    for inputs of any rank >= 2)."""
    return _channel_dropout(input, p, train)


def _channel_dropout(input: Tensor, p: float, train: bool, inplace: bool = False) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError(f"Feature dropout requires at least 2 dimensions in the input, got {input.dim()}")
    if not train or p == 0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = _creation.empty(*shape, dtype=input.dtype).bernoulli_(1 - p)
    mask = keep / (1 - p) if p < 1 else keep
    return input.mul_(mask) if inplace else input * mask


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.feature_dropout``."""
    return _channel_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``torch.feature_alpha_dropout``."""
    return _inplace("feature_alpha_dropout", input, p, train)


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
) -> Tensor:
    """``torch.batch_norm``: ``F.batch_norm`` with ATen's argument order (weight and bias first)."""
    return _F_().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
) -> Tensor:
    """``torch.instance_norm``: ``F.instance_norm`` with ATen's argument order."""
    return _F_().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``torch.embedding(weight, indices)``: rows of ``weight`` (note: weight first, unlike
    ``F.embedding``); ``padding_idx=-1`` means none, as in ATen."""
    return _F_().embedding(
        indices,
        weight,
        None if padding_idx == -1 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple:
    """``torch.embedding_bag``: mode 0 sum, 1 mean, 2 max. Returns ``(output, offset2bag,
    bag_size, max_indices)`` like ATen; only ``output`` is computed here, the other three are
    empty int64 tensors (they are ATen's backward bookkeeping)."""
    if mode not in (0, 1, 2):
        raise ValueError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode!r}")
    out = _F_().embedding_bag(
        indices,
        weight,
        offsets,
        scale_grad_by_freq=scale_grad_by_freq,
        mode=("sum", "mean", "max")[mode],
        sparse=sparse,
        per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset,
        padding_idx=padding_idx,
    )
    empty = _creation.empty(0, dtype=indices.dtype)
    return out, empty, empty, empty


def grid_sampler(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler``: ``F.grid_sample`` with integer modes (interpolation 0 bilinear,
    1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    modes, pads = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise ValueError(
            f"grid_sampler: interpolation_mode and padding_mode must be 0, 1 or 2, got "
            f"{interpolation_mode!r} and {padding_mode!r}"
        )
    return _F_().grid_sample(input, grid, modes[interpolation_mode], pads[padding_mode], align_corners)


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple:
    """``(values, indices)`` of a 1-d max pooling."""
    return _F_().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple:
    """``torch.adaptive_max_pool1d``: ``(values, indices)`` (``F``'s returns the values alone)."""
    return _F_().adaptive_max_pool1d(input, output_size, True)


@autocast_op("fp32")
def kl_div(input: Tensor, target: Tensor, reduction: int = 1, log_target: bool = False) -> Tensor:
    """``torch.kl_div``: ``F.kl_div`` with ATen's integer reduction (default 1, mean; ATen does not
    repeat ``F.kl_div``'s warning about ``'mean'``)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="reduction: 'mean' divides", category=UserWarning)
        return _F_().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


@autocast_op("fp32")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    """``torch.binary_cross_entropy_with_logits`` (ATen order: ``pos_weight`` before ``reduction``)."""
    return _F_().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction), pos_weight=pos_weight
    )


@autocast_op("fp32")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: int = 1,
    zero_infinity: bool = False,
) -> Tensor:
    """``torch.ctc_loss`` with ATen's integer reduction."""
    return _F_().ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity
    )


@autocast_op("fp32")
def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int
) -> Tensor:
    """``torch.poisson_nll_loss`` (every argument required, as in ATen)."""
    return _F_().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


@autocast_op("fp32")
def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 1
) -> Tensor:
    """``torch.cosine_embedding_loss`` with ATen's integer reduction."""
    return _F_().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


@autocast_op("fp32")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 1) -> Tensor:
    """``torch.hinge_embedding_loss`` with ATen's integer reduction."""
    return _F_().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


@autocast_op("fp32")
def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 1
) -> Tensor:
    """``torch.margin_ranking_loss`` with ATen's integer reduction."""
    return _F_().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


@autocast_op("fp32")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-06,
    swap: bool = False,
    reduction: int = 1,
) -> Tensor:
    """``torch.triplet_margin_loss`` with ATen's integer reduction."""
    return _F_().triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction)
    )


# -- recurrent networks: ATen's flat-parameter forms -------------------------------------------


_PADDED = (
    "input",
    "hx",
    "params",
    "has_biases",
    "num_layers",
    "dropout",
    "train",
    "bidirectional",
    "batch_first",
)
_PACKED = (
    "data",
    "batch_sizes",
    "hx",
    "params",
    "has_biases",
    "num_layers",
    "dropout",
    "train",
    "bidirectional",
)


def _overload(op: str, args: tuple, kwargs: dict, hx_is_tuple: bool) -> tuple:
    """Bind a call to one of ATen's two overloads: the padded ``(input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)`` or the packed ``(data,
    batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``. Returns
    ``(packed, arguments by name)``."""
    if "data" in kwargs or "batch_sizes" in kwargs:
        packed = True
    elif "input" in kwargs:
        packed = False
    elif hx_is_tuple:  # lstm: the padded overload's second argument is the tuple hx
        packed = len(args) > 1 and isinstance(args[1], Tensor)
    else:  # gru/rnn: the padded overload's third argument is the list params
        packed = isinstance(args[2], Tensor) if len(args) > 2 else len(args) == 2 and "hx" in kwargs
    names = _PACKED if packed else _PADDED
    if len(args) > len(names):
        raise TypeError(f"{op}() takes {len(names)} positional arguments but {len(args)} were given")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{op}() got an unexpected keyword argument '{key}'")
        if key in bound:
            raise TypeError(f"{op}() got multiple values for argument '{key}'")
        bound[key] = value
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(
            f"{op}() missing required arguments: {', '.join(missing)} (signature: {', '.join(names)})"
        )
    return packed, bound


def _sequence(mode: str, packed: bool, a: dict) -> tuple:
    """Run a multi-layer recurrent network over the bound arguments of either overload;
    returns ``(output, h_n, c_n or None)``."""
    params, has_biases, bidirectional = a["params"], a["has_biases"], a["bidirectional"]
    layers = a["num_layers"] * (2 if bidirectional else 1)
    if len(params) % layers:
        raise ValueError(
            f"{mode.lower()}: {len(params)} parameters do not split into {layers} layer-directions"
        )
    per = len(params) // layers
    if per not in ((4, 5) if has_biases else (2, 3)):
        raise ValueError(
            f"{mode.lower()}: {per} parameters per layer-direction, expected "
            f"{'4 (w_ih, w_hh, b_ih, b_hh)' if has_biases else '2 (w_ih, w_hh)'} (+1 projection)"
        )
    weights = [list(params[i * per : (i + 1) * per]) for i in range(layers)]
    hx = a["hx"] if mode == "LSTM" else (a["hx"],)
    if packed:
        x, sizes = a["data"], a["batch_sizes"]
        if not isinstance(x, Tensor) or x.dim() != 2:
            raise ValueError(f"{mode.lower()}: packed data must be a 2-D tensor (rows, features)")
        if not isinstance(sizes, Tensor) or sizes.dim() != 1 or sizes.dtype.is_floating_point:
            raise ValueError(f"{mode.lower()}: batch_sizes must be a 1-D integer tensor")
        steps = tuple(int(b) for b in sizes.tolist())
        if (
            sum(steps) != x.shape[0]
            or any(b < 1 for b in steps)
            or list(steps) != sorted(steps, reverse=True)
        ):
            raise ValueError(
                f"{mode.lower()}: batch_sizes {list(steps)} must be positive, non-increasing and sum to "
                f"the {x.shape[0]} rows of data"
            )
        rows, kernel = x, "rows"
    else:
        x = a["input"]
        if not isinstance(x, Tensor) or x.dim() != 3:
            raise ValueError(
                f"{mode.lower()}: expected a 3-D input (seq, batch, feature), got "
                f"{getattr(x, 'shape', type(x).__name__)} (or the packed overload: data, batch_sizes, ...)"
            )
        x = x.transpose(0, 1) if a["batch_first"] else x
        steps = (x.shape[1],) * x.shape[0]
        kernel = padded_kernel(mode, x, len(weights[0]) in (3, 5))
        rows = x.reshape(x.shape[0] * x.shape[1], x.shape[2])
    batch, w_hh = steps[0] if steps else 0, weights[0][1]
    _check_state(mode, "hx" if mode != "LSTM" else "hx[0]", hx[0], (layers, batch, w_hh.shape[1]))
    if mode == "LSTM":
        _check_state(mode, "hx[1]", hx[1], (layers, batch, w_hh.shape[0] // 4))
    y, hn, cn = recurrent_stack(
        mode,
        rows,
        steps,
        hx[0],
        hx[1] if len(hx) > 1 else None,
        weights,
        a["num_layers"],
        bidirectional,
        has_biases,
        a["dropout"],
        a["train"],
        kernel,
    )
    if packed:
        return y, hn, cn
    out = y.reshape(x.shape[0], x.shape[1], y.shape[-1])
    return (out.transpose(0, 1) if a["batch_first"] else out), hn, cn


def _check_state(mode: str, name: str, h: Any, expected: tuple) -> None:
    if not isinstance(h, Tensor) or tuple(h.shape) != expected:
        got = list(h.shape) if isinstance(h, Tensor) else type(h).__name__
        raise RuntimeError(f"{mode.lower()}: Expected hidden size {expected} for {name}, got {got}")


def lstm(*args: Any, **kwargs: Any) -> tuple:
    """``torch.lstm``: a multi-layer LSTM over flat ``params`` (``[w_ih, w_hh, b_ih, b_hh(, w_hr)]``
    per layer and direction, as ``nn.LSTM._flat_weights``), ``hx = (h0, c0)``, in either of
    ATen's overloads: ``lstm(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` over a padded ``input``, or ``lstm(data, batch_sizes, hx,
    params, has_biases, num_layers, dropout, train, bidirectional)`` over a packed sequence's
    ``data`` and ``batch_sizes``. Returns ``(output, h_n, c_n)`` (``output`` packed like
    ``data`` in the packed form)."""
    packed, a = _overload("lstm", args, kwargs, hx_is_tuple=True)
    if len(a["hx"]) != 2:
        raise ValueError(f"lstm: hx must be (h0, c0), got {len(a['hx'])} tensors")
    return _sequence("LSTM", packed, a)


def _two(mode: str, args: tuple, kwargs: dict) -> tuple:
    packed, a = _overload(mode.lower(), args, kwargs, hx_is_tuple=False)
    out, hn, _ = _sequence(mode, packed, a)
    return out, hn


def gru(*args: Any, **kwargs: Any) -> tuple:
    """``torch.gru``: a multi-layer GRU over flat ``params``, padded ``(input, hx, params,
    has_biases, num_layers, dropout, train, bidirectional, batch_first)`` or packed ``(data,
    batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``; returns
    ``(output, h_n)``."""
    return _two("GRU", args, kwargs)


def rnn_tanh(*args: Any, **kwargs: Any) -> tuple:
    """``torch.rnn_tanh``: a multi-layer tanh Elman RNN over flat ``params``, with the padded or
    the packed arguments of :func:`gru`; returns ``(output, h_n)``."""
    return _two("RNN_TANH", args, kwargs)


def rnn_relu(*args: Any, **kwargs: Any) -> tuple:
    """``torch.rnn_relu``: a multi-layer ReLU Elman RNN over flat ``params``, with the padded or
    the packed arguments of :func:`gru`; returns ``(output, h_n)``."""
    return _two("RNN_RELU", args, kwargs)


def _cell(
    mode: str,
    input: Tensor,
    h: Tensor,
    c: Tensor | None,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
) -> tuple:
    if input.dim() != 2 or h.dim() != 2:
        raise ValueError(
            f"{mode.lower()}_cell: expected 2-D input and hidden state (batch, features), got "
            f"{tuple(input.shape)} and {tuple(h.shape)}"
        )
    return recurrent_layer(mode, input, h, c, w_ih, w_hh, b_ih, b_hh, None, (input.shape[0],))


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple:
    """One LSTM step: ``hx = (h, c)`` -> ``(h', c')``."""
    _, h, c = _cell("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)
    return h, c


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One GRU step: ``h -> h'``."""
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One tanh Elman step: ``h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)``."""
    return _cell("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One ReLU Elman step: ``h' = relu(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)``."""
    return _cell("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def resolve(name: str) -> Any:
    """The function ``torch.<name>`` means, or raise ``AttributeError``."""
    if name in ALIASES:
        return getattr(_F_(), ALIASES[name])
    if name in __all__ and name != "ALIASES":
        return globals()[name]
    raise AttributeError(name)
