"""``DynamicQuantizedLSTM`` and ``DynamicQuantizedGRU`` (``torch.ao.nn.quantized.dynamic.LSTM``
/ ``GRU``): recurrent layers whose weight matrices are stored as qint8, every product a
dynamically quantized linear (activations quantized per call, as fbgemm does), or rounded
to float16 (``dtype=float16``), every product a float32 one.

As PyTorch's CPU kernel does, a layer's input projection is one product over the whole
sequence (one activation range for all steps) and the hidden projection one per step; the
gates' element-wise arithmetic is float32. Gates agree with PyTorch's within float32
rounding of the nonlinearities, which can move a quantized activation by one step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...... import _dtype
from ......_random import randn
from ......_tensor import Tensor
from ......nn.modules.container import ModuleList
from ......nn.modules.module import Module
from ......nn.modules.rnn import RNNBase
from .linear import linear_dynamic, pack_weight

__all__ = ["LSTM", "GRU", "PackedParameter"]


class PackedParameter(Module):
    """One layer and direction's ``(w_ih, w_hh, b_ih, b_hh)`` (qint8 weights, float biases),
    saved in the ``state_dict`` as ``param``."""

    def __init__(self, param: tuple) -> None:
        super().__init__()
        self.param = param

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "param"] = self.param

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing: list,
        unexpected: list,
        errors: list,
    ) -> None:
        if prefix + "param" in state_dict:
            self.param = state_dict.pop(prefix + "param")
        elif strict:
            missing.append(prefix + "param")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32, copy=False)


def _linear(x: np.ndarray, weight: Tensor, bias: Tensor | None) -> np.ndarray:
    return linear_dynamic(Tensor._make(x), weight, bias).numpy()


class _DynamicRNN(Module):
    """What LSTM and GRU share: the float layer's sizes, the packed parameters per layer and
    direction, the layer/direction walk over the sequence."""

    _mode = ""
    _gates = 0

    def __init__(self, float_rnn: RNNBase) -> None:
        super().__init__()
        for name in (
            "input_size",
            "hidden_size",
            "num_layers",
            "bias",
            "batch_first",
            "dropout",
            "bidirectional",
        ):
            setattr(self, name, getattr(float_rnn, name))
        self.proj_size, self.mode, self.training = 0, self._mode, False
        self.dtype = _dtype.qint8
        self._all_weight_values = ModuleList([])
        self._draw_placeholders()

    def _draw_placeholders(self) -> None:
        """PyTorch's constructor fills its packed parameters with ``randn`` placeholders
        (weights and biases per layer and direction, replaced by ``from_float``'s): drawn
        here too, so the random numbers after ``quantize_dynamic`` are PyTorch's."""
        gates = {"LSTM": 4, "GRU": 3}[self._mode] * self.hidden_size
        directions = 2 if self.bidirectional else 1
        for layer in range(self.num_layers):
            width = self.input_size if layer == 0 else self.hidden_size * directions
            for _ in range(directions):
                for shape in ((gates, width), (gates, self.hidden_size), (gates,), (gates,)):
                    randn(*shape)

    extra_repr = RNNBase.extra_repr

    def _get_name(self) -> str:
        return f"DynamicQuantized{self._mode}"

    def __repr__(self) -> str:  # PyTorch hides the packed parameters
        return f"{self._get_name()}({self.extra_repr()})"

    @classmethod
    def from_float(cls, mod: RNNBase, use_precomputed_fake_quant: bool = False) -> "_DynamicRNN":
        """The dynamically quantized form of ``mod`` (an ``nn.{LSTM,GRU}`` with a ``qconfig``):
        every weight matrix observed and quantized by its own ``mod.qconfig.weight()``."""
        if getattr(mod, "qconfig", None) is None or mod.qconfig.weight is None:
            raise AssertionError("Input float module must have qconfig defined")
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("dynamic quantization of an LSTM with proj_size is not supported")
        qrnn = cls(mod)
        packed = []
        for names in mod._all_weights:
            weights = {n.split("_l")[0]: getattr(mod, n) for n in names}
            quantized = []
            for key in ("weight_ih", "weight_hh"):
                observer = mod.qconfig.weight()
                qrnn.dtype = observer.dtype
                quantized.append(pack_weight(weights[key], observer))
            biases = [weights[k].detach() if k in weights else None for k in ("bias_ih", "bias_hh")]
            packed.append(PackedParameter((*quantized, *biases)))
        qrnn._all_weight_values = ModuleList(packed)
        return qrnn

    def _run(self, x: Tensor, hx: list) -> tuple:
        """The sequence through every layer and direction: ``(output, final states)``."""
        if not isinstance(x, Tensor):
            raise NotImplementedError(
                f"dynamic quantized {self._mode} takes a Tensor (PackedSequence is not supported)"
            )
        seq = x.detach().numpy().astype(np.float32)
        unbatched = seq.ndim == 2
        if unbatched:
            seq = seq[:, None]
        elif self.batch_first:
            seq = seq.transpose(1, 0, 2)
        if seq.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {seq.shape[-1]}"
            )
        dirs = 2 if self.bidirectional else 1
        states = [self._initial(h, seq.shape[1], unbatched) for h in hx]
        finals: list = [[] for _ in states]
        params = [p.param for p in self._all_weight_values]
        for layer in range(self.num_layers):
            outputs = []
            for d in range(dirs):
                k = layer * dirs + d
                out, last = self._direction(seq, params[k], [s[k] for s in states], reverse=d == 1)
                outputs.append(out)
                for f, value in zip(finals, last, strict=True):
                    f.append(value)
            seq = np.concatenate(outputs, axis=-1) if dirs == 2 else outputs[0]
        if unbatched:
            seq = seq[:, 0]
        elif self.batch_first:
            seq = seq.transpose(1, 0, 2)
        stacked = [np.stack(f)[:, 0] if unbatched else np.stack(f) for f in finals]
        return Tensor._make(np.ascontiguousarray(seq)), [Tensor._make(s) for s in stacked]

    def _initial(self, h: Tensor | None, batch: int, unbatched: bool) -> np.ndarray:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        if h is None:
            return np.zeros((layers, batch, self.hidden_size), np.float32)
        arr = h.detach().numpy().astype(np.float32)
        return arr[:, None] if unbatched else arr

    def _direction(self, seq: np.ndarray, param: tuple, state: list, reverse: bool) -> tuple:
        w_ih, w_hh, b_ih, b_hh = param
        inputs = _linear(seq, w_ih, b_ih)  # the whole sequence at once
        steps = range(seq.shape[0] - 1, -1, -1) if reverse else range(seq.shape[0])
        out = np.empty(seq.shape[:2] + (self.hidden_size,), np.float32)
        for t in steps:
            state = self._cell(inputs[t], _linear(state[0], w_hh, b_hh), state)
            out[t] = state[0]
        return out, state


class LSTM(_DynamicRNN):
    """A dynamically quantized LSTM: ``output, (h_n, c_n) = lstm(input, (h_0, c_0))``."""

    _mode = "LSTM"

    def _cell(self, igates: np.ndarray, hgates: np.ndarray, state: list) -> list:
        i, f, g, o = np.split(hgates + igates, 4, axis=-1)
        c = _sigmoid(f) * state[1] + _sigmoid(i) * np.tanh(g)
        return [_sigmoid(o) * np.tanh(c), c]

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        out, (h, c) = self._run(input, [None, None] if hx is None else list(hx))
        return out, (h, c)


class GRU(_DynamicRNN):
    """A dynamically quantized GRU: ``output, h_n = gru(input, h_0)``."""

    _mode = "GRU"

    def _cell(self, igates: np.ndarray, hgates: np.ndarray, state: list) -> list:
        ir, iz, in_ = np.split(igates, 3, axis=-1)
        hr, hz, hn = np.split(hgates, 3, axis=-1)
        reset, update = _sigmoid(hr + ir), _sigmoid(hz + iz)
        new = np.tanh(in_ + hn * reset)
        return [(state[0] - new) * update + new]

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple:
        out, (h,) = self._run(input, [hx])
        return out, h
