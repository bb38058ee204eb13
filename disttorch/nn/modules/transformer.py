"""The transformer family: ``Transformer``, ``TransformerEncoder(Layer)``,
``TransformerDecoder(Layer)``, with PyTorch's submodule names (``self_attn``,
``multihead_attn``, ``linear1``/``linear2``, ``norm1``..``norm3``, ``dropout1``..``dropout3``),
so state dicts are identical, and PyTorch's mask conventions (boolean masks: True = may NOT
attend; float masks are added to the attention scores).

``enable_nested_tensor``: where PyTorch's encoder would run its nested-tensor path (eval,
no grad, a left-aligned ``src_key_padding_mask``, ...), the ordinary path runs and the padded
positions of the result are zero, as PyTorch's ``to_padded_tensor(0.0)`` leaves them; the
valid positions are the same values either way.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import _creation, _native_warnings
from ..._dtype import float32
from ..._tensor import Tensor
from ...autograd.autocast_state import is_autocast_enabled
from ...autograd.grad_mode import is_grad_enabled
from .. import init
from ..functional import activation as F
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """``(sz, sz)`` float mask: ``-inf`` above the diagonal, 0 elsewhere."""
    mask = _creation.full((sz, sz), float("-inf"), dtype=dtype if dtype is not None else float32)
    return mask.triu(diagonal=1)


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:  # unbatched (S, E)
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A boolean mask as an additive float mask (True -> -inf); float masks pass through."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same "
            "type for both instead.",
            stacklevel=3,
        )
    if not is_float:
        np_dtype = _creation.zeros(0, dtype=target_type)._data.dtype
        return Tensor._make(np.where(mask._data, np.array(-np.inf, np_dtype), np.array(0, np_dtype)))
    return mask


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int | None) -> bool:
    """``is_causal`` when given; otherwise whether ``mask`` equals the square causal mask."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        if tuple(mask.shape) == (sz, sz):
            causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
            make_causal = bool(np.array_equal(mask._data, causal._data))
    return make_causal


def _activation_code(activation: Any) -> int:
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


class Transformer(Module):
    r"""An encoder-decoder transformer ("Attention Is All You Need").

    Args:
        d_model: feature size. Default: 512.
        nhead: attention heads. Default: 8.
        num_encoder_layers, num_decoder_layers: Default: 6 each.
        dim_feedforward: hidden size of the feed-forward blocks. Default: 2048.
        dropout: Default: 0.1.
        activation: ``"relu"``, ``"gelu"`` or a callable. Default: relu.
        custom_encoder, custom_decoder: used instead of the default stacks.
        layer_norm_eps: Default: 1e-5.
        batch_first: inputs/outputs are ``(N, S, E)``. Default: False (``(S, N, E)``).
        norm_first: pre-norm (LayerNorm before attention and feed-forward). Default: False.
        bias: biases in the Linear and LayerNorm layers. Default: True.

    All parameters with more than one dimension are re-initialised xavier-uniform.
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                **kw,
            )
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                **kw,
            )
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        r"""Encode ``src`` ``(S, N, E)`` and decode ``tgt`` ``(T, N, E)`` against it.

        Masks: ``src_mask`` ``(S, S)`` or ``(N*nhead, S, S)``, ``tgt_mask`` ``(T, T)``,
        ``memory_mask`` ``(T, S)``; key padding masks ``(N, S)`` / ``(N, T)``. ``*_is_causal``
        are hints that the matching mask is the causal mask. Returns ``(T, N, E)``.
        """
        is_batched = src.dim() == 3
        if is_batched and src.shape[0 if self.batch_first else 1] != tgt.shape[0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """A ``(sz, sz)`` causal mask: ``-inf`` above the diagonal, ``0.0`` elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``encoder_layer``, then ``norm`` if given.

    Args:
        encoder_layer: a :class:`TransformerEncoderLayer` (copied).
        num_layers: number of layers.
        norm: optional final normalisation.
        enable_nested_tensor: accepted; no nested-tensor path exists here (same results).
        mask_check: accepted (PyTorch's nested-tensor mask check).
    """

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_no_fast_path(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def _nested_path(self, src: Tensor, mask: Tensor | None, padding: Tensor | None) -> bool:
        """Whether PyTorch would run this call on nested tensors (so that its padded output
        positions are zero): the conditions of its ``TransformerEncoder.forward``."""
        if not getattr(self, "use_nested_tensor", False) or not len(self.layers) or padding is None:
            return False
        first = self.layers[0]
        if first.training or src.dim() != 3 or mask is not None or is_autocast_enabled():
            return False
        if getattr(self, "mask_check", True) and not _left_aligned(padding._data != 0):
            return False
        attn = first.self_attn
        weights = [src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias]
        weights += [first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias]
        weights += [first.linear1.weight, first.linear1.bias, first.linear2.weight, first.linear2.bias]
        return not (is_grad_enabled() and any(w is not None and w.requires_grad for w in weights))

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Run ``src`` through every layer (masks as in :class:`TransformerEncoderLayer`;
        ``is_causal=None`` detects a causal ``mask``)."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if mask is None else mask.dtype,
            "mask",
            src.dtype,
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0] if len(self.layers) else None
        batch_first = first.self_attn.batch_first if first is not None else False
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        nested = self._nested_path(src, mask, src_key_padding_mask)
        if nested:  # PyTorch makes a nested tensor of the strided layout here, which warns once
            _native_warnings.warn(_native_warnings.NESTED_PROTOTYPE, once=True)
        output = src
        for mod in self.layers:
            output = mod(
                output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask
            )
        if nested:
            padded = Tensor._make(src_key_padding_mask._data != 0)
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)  # batch_first: (N, S, E)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _left_aligned(padded: np.ndarray) -> bool:
    """Whether every row of the padding mask is valid positions first, then padding."""
    return bool((padded[..., 1:] >= padded[..., :-1]).all())


def _why_no_fast_path(layer: Module) -> str:
    """PyTorch's reason for not using nested tensors with this encoder layer ('' if none)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    checks = [
        (layer.norm_first, f"{name}.norm_first was True"),
        (
            not attn.batch_first,
            (f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"),
        ),
        (not attn._qkv_same_embed_dim, f"{name}.self_attn._qkv_same_embed_dim was not True"),
        (attn.in_proj_bias is None, f"{name}.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, f"{name}.activation_relu_or_gelu was not True"),
        (layer.norm1.eps != layer.norm2.eps, f"{name}.norm1.eps was not equal to {name}.norm2.eps"),
        (attn.num_heads % 2 == 1, f"{name}.self_attn.num_heads is odd"),
    ]
    return next((why for bad, why in checks if bad), "")


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given."""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Run ``tgt`` through every layer against ``memory`` (``tgt_is_causal=None`` detects a
        causal ``tgt_mask``)."""
        first = self.layers[0] if len(self.layers) else None
        batch_first = first.self_attn.batch_first if first is not None else False
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _get_seq_len(tgt, batch_first))
        output = tgt
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class _LayerBase(Module):
    """What encoder and decoder layers share: the feed-forward block and the activation."""

    def _init_ff(
        self, d_model: int, dim_feedforward: int, dropout: float, activation: Any, bias: bool, kw: dict
    ) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _activation_code(activation)
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def _ff(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_LayerBase):
    r"""Self-attention then feed-forward, each with a residual connection and LayerNorm
    (after the residual, or before the block with ``norm_first=True``).

    Args:
        d_model, nhead: feature size and heads.
        dim_feedforward: Default: 2048. dropout: Default: 0.1.
        activation: ``"relu"``, ``"gelu"`` or a callable (unary function or module).
        layer_norm_eps: Default: 1e-5. batch_first: Default: False. norm_first: Default: False.
        bias: Default: True.

    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self._init_ff(d_model, dim_feedforward, dropout, activation, bias, kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """``src`` ``(S, N, E)`` (or batch-first / unbatched); masks: ``src_mask`` ``(S, S)`` or
        ``(N*nhead, S, S)``, ``src_key_padding_mask`` ``(N, S)``."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if src_mask is None else src_mask.dtype,
            "src_mask",
            src.dtype,
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(
        self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None, is_causal: bool = False
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self._ff(x))


class TransformerDecoderLayer(_LayerBase):
    r"""Self-attention, attention over the encoder's memory, then feed-forward; each with a
    residual connection and LayerNorm (``norm1``..``norm3``; pre-norm with ``norm_first``).

    Args: as :class:`TransformerEncoderLayer`.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw
        )
        self._init_ff(d_model, dim_feedforward, dropout, activation, bias, kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """``tgt`` ``(T, N, E)``, ``memory`` ``(S, N, E)``; ``tgt_mask`` ``(T, T)``,
        ``memory_mask`` ``(T, S)``, key padding masks ``(N, T)`` / ``(N, S)``."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(
        self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None, is_causal: bool = False
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(
        self,
        x: Tensor,
        mem: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self._ff(x))
