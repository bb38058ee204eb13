"""``vmap``'s batching rules for ``torch.nn.functional``: convolution and pooling (the batch
folded into ``N``; a batched weight becomes a grouped convolution), normalisation, embedding,
losses (computed unreduced, then reduced per sample) and the random ops (``randomness``)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ._batch_pointwise import pointwise, tensors_of
from ._batch_rules_shape import logical_dim
from ._batched import Level, level_of, per_slice, wrap

__all__ = ["NN_RULES", "RANDOMNESS_ERROR", "RANDOM_OPS", "random_rule"]


@functools.lru_cache(maxsize=None)
def _signature(func: Callable) -> inspect.Signature:
    return inspect.signature(func)


def _bind(func: Callable, args: tuple, kwargs: dict) -> dict | None:
    """The call's arguments by name (defaults included), or None when they do not bind."""
    try:
        bound = _signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in bound.signature.parameters.values()):
        return None
    return dict(bound.arguments)


def _batched_only(level: Level, b: dict, *names: str) -> bool:
    """Whether no argument other than ``names`` is batched at ``level``."""
    others = [v for k, v in b.items() if k not in names]
    return not any(level_of(t) is level for t in tensors_of(tuple(others), {}))


def _value(x: Tensor, level: Level) -> Tensor:
    if level_of(x) is level:
        return x._bt_value
    return x.unsqueeze(0).expand(level.size, *x.shape)


def _fold(func: Callable, level: Level, b: dict, spatial: int) -> Any:
    """Call ``func`` with the batch of ``b["input"]`` folded into its ``N`` dim (an input
    without ``N`` takes the batch as its ``N``); tensor results unfolded again."""
    x = b["input"]
    rank = len(x.shape)
    v = x._bt_value
    if rank == spatial + 1:
        return _wrap_all(func(**{**b, "input": v}), level, None)
    if rank != spatial + 2:
        return NotImplemented
    n = x.shape[0]
    out = func(**{**b, "input": v.reshape(level.size * n, *v.shape[2:])})
    return _wrap_all(out, level, n)


def _wrap_all(out: Any, level: Level, n: int | None) -> Any:
    if isinstance(out, Tensor):
        return wrap(out if n is None else out.reshape(level.size, n, *out.shape[1:]), level)
    return type(out)(_wrap_all(o, level, n) for o in out)


def _spatial(name: str) -> int:
    return int(name[-2]) if name[-1] == "d" and name[-2].isdigit() else 0


def _conv(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    b = _bind(func, args, kwargs)
    if b is None or "weight" not in b:
        return NotImplemented
    s = _spatial(func.__name__)
    x, weight, bias = b["input"], b["weight"], b.get("bias")
    if level_of(weight) is not level:
        if level_of(bias) is level:
            return func(**{**b, "bias": None}) + bias.reshape(-1, *(1,) * s)
        return _fold(func, level, b, s) if level_of(x) is level else NotImplemented
    if func.__name__.startswith("conv_transpose") or not isinstance(b.get("groups", 1), int):
        return NotImplemented
    # a batched weight: one grouped convolution, the batch next to the channels
    size = level.size
    xv = _value(x, level)
    unbatched = len(x.shape) == s + 1
    if unbatched:
        xv = xv.unsqueeze(1)
    n, c = xv.shape[1], xv.shape[2]
    xv = xv.movedim(0, 1).reshape(n, size * c, *xv.shape[3:])
    wv = weight._bt_value
    out_channels = wv.shape[1]
    wv = wv.reshape(size * out_channels, *wv.shape[2:])
    bv = None if bias is None else _value(bias, level).reshape(-1)
    out = func(**{**b, "input": xv, "weight": wv, "bias": bv, "groups": b["groups"] * size})
    out = out.reshape(n, size, out_channels, *out.shape[2:]).movedim(1, 0)
    return wrap(out.squeeze(1) if unbatched else out, level)


def _pool(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    b = _bind(func, args, kwargs)
    if b is None or not _batched_only(level, b, "input") or level_of(b["input"]) is not level:
        return NotImplemented
    name = func.__name__
    spatial = _spatial(name) or (len(b["input"].shape) - 2)
    if name in ("unfold",):
        spatial = 2
    return _fold(func, level, b, spatial)


def _direct(*batched: str) -> Callable:
    """An op on trailing dims (any leading dims allowed): called on the values when only the
    arguments ``batched`` are batched."""

    def rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
        b = _bind(func, args, kwargs)
        if b is None or not _batched_only(level, b, *batched):
            return NotImplemented
        return wrap(func(**{k: v._bt_value if level_of(v) is level else v for k, v in b.items()}), level)

    return rule


def _layer_norm(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    b = _bind(func, args, kwargs)
    if b is None:
        return NotImplemented
    if _batched_only(level, b, "input"):
        return _direct("input")(func, level, args, kwargs)
    weight, bias = b.get("weight"), b.get("bias")
    out = func(**{**b, "weight": None, "bias": None})
    out = out if weight is None else out * weight
    return out if bias is None else out + bias


_BATCH_NORM_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in "
    "place, were not batched.\nIf you are using a module and do not need eval mode, please set "
    "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please "
    "see the functorch website for resources on how to patch your module to work with vmap"
)


def _batch_norm(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """Without running statistics (training), the statistics are per sample: the batch is
    folded into the channels; with them (evaluation) it is an affine map per channel."""
    b = _bind(func, args, kwargs)
    if b is None or any(level_of(b.get(k)) is level for k in ("running_mean", "running_var")):
        return NotImplemented
    x = b["input"]
    if not b["training"] and b["running_mean"] is not None:
        if not _batched_only(level, b, "input") or level_of(x) is not level:
            return NotImplemented
        return _fold(func, level, b, len(x.shape) - 2)
    if b["running_mean"] is not None:
        raise RuntimeError(_BATCH_NORM_STATS)
    if len(x.shape) < 2:
        return NotImplemented
    size = level.size
    xv = _value(x, level)  # (B, N, C, *)
    n, c = xv.shape[1], xv.shape[2]
    xv = xv.movedim(0, 1).reshape(n, size * c, *xv.shape[3:])
    affine = {k: None if b.get(k) is None else _value(b[k], level).reshape(-1) for k in ("weight", "bias")}
    out = func(**{**b, "input": xv, **affine})
    return wrap(out.reshape(n, size, c, *out.shape[2:]).movedim(1, 0), level)


def _pad(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``F.pad`` with a constant pads trailing dims only: on the values as they are."""
    b = _bind(func, args, kwargs)
    if b is None or b.get("mode", "constant") != "constant" or len(b["pad"]) > 2 * len(b["input"].shape):
        return NotImplemented
    return _direct("input")(func, level, args, kwargs)


def _attention(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``scaled_dot_product_attention`` without dropout: the batch a leading dim of the query,
    key and value (unbatched ones expanded), all padded to one rank; the mask broadcasts."""
    b = _bind(func, args, kwargs)
    if b is None or b["dropout_p"] or b["enable_gqa"]:
        return NotImplemented
    rank = max(len(b[n].shape) for n in ("query", "key", "value"))
    padded = {n: _padded(b[n], level, rank) for n in ("query", "key", "value")}
    mask = b["attn_mask"]
    if level_of(mask) is level:
        padded["attn_mask"] = _padded(mask, level, rank)
    return wrap(func(**{**b, **padded}), level)


def _padded(x: Tensor, level: Level, rank: int) -> Tensor:
    """The value of ``x`` at ``level`` (expanded when unbatched), size-1 dims after the batch
    dim up to logical ``rank``."""
    v = _value(x, level)
    return v.reshape((level.size,) + (1,) * (rank - len(x.shape)) + tuple(x.shape))


def _distance(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``cosine_similarity(x1, x2, dim)`` and ``cdist(x1, x2)``: both operands padded after
    their batch dim to one logical rank (they broadcast), ``dim`` shifted past the batch."""
    b = _bind(func, args, kwargs)
    if b is None or not _batched_only(level, b, "x1", "x2"):
        return NotImplemented
    x1, x2 = b["x1"], b["x2"]
    rank = max(len(x1.shape), len(x2.shape))
    for name in ("x1", "x2"):
        if level_of(b[name]) is level:
            b[name] = _padded(b[name], level, rank)
    if "dim" in b:
        if rank == 0:
            return NotImplemented
        b["dim"] = logical_dim(b["dim"], rank)
    return wrap(func(**b), level)


def _fold_into_n(x: Tensor | None, level: Level, batched: bool) -> Tensor | None:
    """A sequence-first input ``(L, E)`` or ``(L, N, E)`` of ``multi_head_attention_forward``
    with the batch folded into ``N`` (``(L, B*N, E)``; ``batched``: the logical input has ``N``)."""
    if x is None:
        return None
    v = _value(x, level)
    if not batched:
        return v.transpose(0, 1)
    return v.transpose(0, 1).reshape(v.shape[1], -1, *v.shape[3:])


def _multi_head_attention(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``F.multi_head_attention_forward`` without dropout, with unbatched weights and a 2-D
    (or no) ``attn_mask``: the batch folded into ``N`` of the query, key, value and
    ``key_padding_mask``, then unfolded from the output and the weights."""
    b = _bind(func, args, kwargs)
    inputs = ("query", "key", "value", "key_padding_mask")
    if b is None or not _batched_only(level, b, *inputs) or (b["training"] and b["dropout_p"]):
        return NotImplemented
    mask = b["attn_mask"]
    if mask is not None and len(mask.shape) != 2 or b["static_k"] is not None or b["static_v"] is not None:
        return NotImplemented
    batched = len(b["query"].shape) == 3  # the logical input has its own N
    n = level.size
    for name in ("query", "key", "value"):
        b[name] = _fold_into_n(b[name], level, batched)
    pad = b["key_padding_mask"]
    if pad is not None:
        b["key_padding_mask"] = _value(pad, level).reshape(-1, pad.shape[-1])
    out, weights = func(**b)
    if batched:
        out = out.reshape(out.shape[0], n, -1, out.shape[-1]).transpose(0, 1)
        weights = None if weights is None else weights.reshape(n, -1, *weights.shape[1:])
    else:
        out = out.transpose(0, 1)
    return wrap(out, level), None if weights is None else wrap(weights, level)


def _embedding(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    b = _bind(func, args, kwargs)
    if b is None or level_of(b["weight"]) is level:
        return NotImplemented
    return _direct("input")(func, level, args, kwargs)


def _reduce(out: Tensor, reduction: str) -> Any:
    if reduction == "mean":
        return out.mean()
    if reduction == "sum":
        return out.sum()
    if reduction == "batchmean":
        return out.sum() / out.shape[0] if out.dim() else out
    return out


def _pointwise_loss(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """An elementwise loss: unreduced by the pointwise rule, then reduced per sample."""
    b = _bind(func, args, kwargs)
    if b is None or b.get("size_average") is not None or b.get("reduce") is not None:
        return NotImplemented
    reduction = b["reduction"]
    if reduction not in ("none", "mean", "sum", "batchmean"):
        return NotImplemented
    out = pointwise(func, level, (), {**b, "reduction": "none"})
    return _reduce(out, reduction)


def _class_loss(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``cross_entropy`` and ``nll_loss``: the batch folded into ``N``, the mean taken per
    sample over the weights of its counted targets."""
    b = _bind(func, args, kwargs)
    if b is None or b.get("size_average") is not None or b.get("reduce") is not None:
        return NotImplemented
    x, target, weight, reduction = b["input"], b["target"], b.get("weight"), b["reduction"]
    if level_of(weight) is level or reduction not in ("none", "mean", "sum"):
        return NotImplemented
    if b.get("label_smoothing", 0.0) and weight is not None:
        return NotImplemented
    size, rank = level.size, len(x.shape)
    xv, tv = _value(x, level), _value(target, level)
    probabilities = target.is_floating_point()
    if rank == 1:  # one sample (C,): the batch is its N
        per = func(**{**b, "input": xv, "target": tv, "reduction": "none"})
        extra: tuple = ()
    else:
        n = x.shape[0]
        xv = xv.reshape(size * n, *xv.shape[2:])
        tv_folded = tv.reshape(size * n, *tv.shape[2:])
        per = func(**{**b, "input": xv, "target": tv_folded, "reduction": "none"})
        per = per.reshape(size, n, *per.shape[1:])
        extra = tuple(range(1, per.dim()))
    if reduction == "none":
        return wrap(per, level)
    total = per.sum(extra) if extra else per
    if reduction == "sum":
        return wrap(total, level)
    if probabilities:
        count = per[0].numel() if extra else 1
        return wrap(total / count, level)
    valid = tv != b["ignore_index"]
    counted = valid.to(per.dtype)
    if weight is not None:
        counted = counted * weight[tv.masked_fill(~valid, 0)]
    return wrap(total / (counted.sum(extra) if extra else counted), level)


#: random ops (``randomness`` decides: an error, other draws per sample, or the same draws)
RANDOM_OPS = frozenset(
    """rand_like randn_like randint_like bernoulli bernoulli_ normal_ uniform_ exponential_ geometric_
    cauchy_ log_normal_ random_ multinomial poisson dropout dropout_ alpha_dropout feature_alpha_dropout
    dropout1d dropout2d dropout3d rrelu rrelu_ gumbel_softmax""".split()
)
RANDOMNESS_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
    "'different' randomness flags on vmap or perform the randomness operation out of vmap"
)
#: random ops whose draws have the value's shape (one call on the values draws per sample)
_ELEMENTWISE_RANDOM = frozenset(
    "rand_like randn_like randint_like bernoulli bernoulli_ normal_ uniform_ exponential_ geometric_ "
    "cauchy_ log_normal_ random_ dropout dropout_ alpha_dropout".split()
)


def random_rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """A random op: refused (``randomness="error"``), drawn per sample (``"different"``), or
    drawn once per slice from the same generator state (``"same"``)."""
    from .._random import get_rng_state, set_rng_state

    name = func.__name__
    b = _bind(func, args, kwargs) if "dropout" in name or name == "rrelu" else None
    if b is not None and (not b.get("training", b.get("train", True)) or b.get("p") == 0):
        return pointwise(func, level, args, kwargs)  # no draw
    if level.randomness == "error":
        raise RuntimeError(RANDOMNESS_ERROR)
    inplace = name.endswith("_")
    if level.randomness == "different":
        if name in _ELEMENTWISE_RANDOM and all(level_of(t) is level for t in tensors_of(args, kwargs)):
            out = pointwise(func, level, args, kwargs)
            return args[0] if inplace else out
        return per_slice(func, level, args, kwargs, inplace=inplace)
    state = get_rng_state()
    calls = [0]

    def same_draws(*a: Any, **k: Any) -> Any:
        if calls[0]:
            set_rng_state(state)
        calls[0] += 1
        return func(*a, **k)

    same_draws.__name__ = name
    return per_slice(same_draws, level, args, kwargs, inplace=inplace)


def _table() -> dict[str, Callable]:
    rules: dict[str, Callable] = {}
    for name in "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d".split():
        rules[name] = _conv
    pools = (
        "max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d "
        "adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d "
        "lp_pool1d lp_pool2d interpolate upsample group_norm instance_norm unfold local_response_norm"
    )
    for name in pools.split():
        rules["F." + name] = _pool
    for name in "pixel_shuffle pixel_unshuffle one_hot".split():
        rules[name] = _direct("input")
    rules["F.layer_norm"] = _layer_norm
    rules["F.batch_norm"] = _batch_norm
    rules["F.embedding"] = _embedding
    rules["F.pad"] = _pad
    rules["scaled_dot_product_attention"] = _attention
    rules["F.multi_head_attention_forward"] = _multi_head_attention
    rules["cosine_similarity"] = rules["cdist"] = _distance
    losses = (
        "mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy binary_cross_entropy_with_logits "
        "soft_margin_loss kl_div poisson_nll_loss"
    )
    for name in losses.split():
        rules["F." + name] = _pointwise_loss
    rules["F.cross_entropy"] = rules["F.nll_loss"] = _class_loss
    return rules


NN_RULES = _table()
