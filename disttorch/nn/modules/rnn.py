"""Recurrent layers: ``RNN`` (tanh/relu), ``LSTM`` (optionally projected), ``GRU`` and their
single-step cells, with PyTorch's parameter names, shapes, initialisation, gate order and
argument checks, so state dicts move between the two libraries unchanged.

Each layer-direction runs its whole sequence as one autograd Function
(``functional._recurrent.recurrent_layer``) over the packed layout; an ordinary padded input
is the packed layout with every batch size equal. ``PackedSequence`` inputs (also those packed
with ``enforce_sorted=False``) are accepted and returned as PyTorch does.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from ..._creation import empty, zeros
from ..._tensor import Tensor
from ...autograd.function import named_node
from ...ops.indexing import index_select
from .. import init
from ..functional._recurrent import padded_kernel, recurrent_layer, recurrent_stack, runs_onednn
from ..parameter import Parameter
from .module import Module
from .packed_sequence import PackedSequence

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_dtype(input: Tensor, weight: Tensor) -> None:
    if input.dtype != weight.dtype:
        raise ValueError(
            f"RNN input dtype ({input.dtype}) does not match weight dtype "
            f"({weight.dtype}). Convert input: input.to({weight.dtype}), or convert "
            f"model: model.to({input.dtype})"
        )


def _no_projection(proj_size: int) -> None:
    """RNN and GRU take ``proj_size`` only in PyTorch's positional slot, and only as 0."""
    if proj_size:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNNBase(Module):
    """Base of :class:`RNN`, :class:`LSTM` and :class:`GRU`: the parameters of every layer and
    direction (``weight_ih_l{k}[_reverse]``, ``weight_hh_l{k}...``, ``bias_ih_l{k}...``,
    ``bias_hh_l{k}...``, ``weight_hr_l{k}...`` with projection), all initialised
    ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so "
                f"non-zero dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    name = base + suffix
                    setattr(self, name, Parameter(empty(*shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters, one list per layer and direction."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Accepted for compatibility (cuDNN weight packing); parameters are used as they are."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def __getstate__(self) -> dict:
        """The attributes, with the list of weights PyTorch's ``RNNBase`` keeps (its
        ``__setstate__`` reads it back from a pickled module)."""
        return {**self.__dict__, "_flat_weights": self._flat_weights}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__({k: v for k, v in state.items() if k != "_flat_weights"})
        if "proj_size" not in self.__dict__:
            self.proj_size = 0

    # ------------------------------------------------------------------ checks
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        """Raise PyTorch's errors for a wrong dtype, number of dims or feature size."""
        _check_dtype(input, self._flat_weights[0])
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple:
        """``(num_layers * num_directions, batch, proj_size or hidden_size)`` for ``input``."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes._data[0])
        else:
            mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, hidden)

    def check_hidden_size(
        self, hx: Tensor, expected: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        """Raise ``RuntimeError(msg)`` when ``hx`` is not of the ``expected`` shape."""
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(tuple(expected), list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        """Check the input and the hidden state's shape."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    @staticmethod
    def permute_hidden(hx: Tensor | None, permutation: Tensor | None) -> Tensor | None:
        """Reorder the batch dim of a state (for inputs packed with ``enforce_sorted=False``)."""
        if permutation is None or hx is None:
            return hx
        return index_select(hx, 1, permutation)

    # ------------------------------------------------------------------ the stack
    def _run(self, x: Tensor, batch_sizes: tuple, h0: Tensor, c0: Tensor | None, kernel: str) -> tuple:
        """All layers and directions over packed rows ``x (N, I)``, the first layer standing
        for PyTorch's ``kernel``; returns ``(y (N, D*P), h_n, c_n or None)``."""
        return recurrent_stack(
            self.mode,
            x,
            batch_sizes,
            h0,
            c0,
            self.all_weights,
            self.num_layers,
            self.bidirectional,
            self.bias,
            self.dropout,
            self.training,
            kernel,
        )

    def _forward(self, input: Any, hx: Any) -> tuple:
        """The shared forward of RNN/LSTM/GRU: returns ``(output, h_n, c_n or None)``."""
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        is_lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        sorted_indices = unsorted_indices = None
        if packed:
            data, batch_sizes = input.data, input.batch_sizes
            sorted_indices, unsorted_indices = input.sorted_indices, input.unsorted_indices
            batched = True
        else:
            batch_sizes = None
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                    f"{'tensor ' if name == 'RNN' else ''}instead"
                )
            batched = input.dim() == 3
            if not batched:
                input = input.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
        if hx is not None:
            parts = list(hx) if is_lstm else [hx]
            dims = [p.dim() for p in parts]
            want = 3 if batched else 2
            if any(d != want for d in dims):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if is_lstm:
                    raise RuntimeError(
                        f"For {kind} input, hx and cx should also be {want}-D but "
                        f"got ({dims[0]}-D, {dims[1]}-D) tensors"
                    )
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {dims[0]}-D tensor")
            if not batched:
                parts = [p.unsqueeze(1) for p in parts]
            parts = [self.permute_hidden(p, sorted_indices) for p in parts]
        if packed:
            self.check_input(data, batch_sizes)
            bs = tuple(batch_sizes._data.tolist())
            x, kernel = data, "rows"
        else:
            self.check_input(input, None)
            kernel = padded_kernel(self.mode, input, self.proj_size > 0)
            t_len, batch = input.shape[0], input.shape[1]
            bs = (batch,) * t_len
            x = input.reshape(t_len * batch, input.shape[2])
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        expected = (self.num_layers * num_directions, bs[0] if bs else 0, real_hidden)
        w0 = self._flat_weights[0]
        c_expected = (expected[0], expected[1], self.hidden_size)
        if hx is None:
            h0 = zeros(*expected, dtype=w0.dtype)
            c0 = zeros(*c_expected, dtype=w0.dtype) if is_lstm else None
        else:
            h0 = parts[0]
            if is_lstm:
                c0 = parts[1]
                self.check_hidden_size(h0, expected, "Expected hidden[0] size {}, got {}")
                self.check_hidden_size(c0, c_expected, "Expected hidden[1] size {}, got {}")
            else:
                c0 = None
                self.check_hidden_size(h0, expected)
        y, hn, cn = self._run(x, bs, h0, c0, kernel)
        hn = self.permute_hidden(hn, unsorted_indices)
        cn = self.permute_hidden(cn, unsorted_indices)
        if packed:
            output = PackedSequence(y, batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = named_node(y.reshape(t_len, batch, y.shape[-1]), self._output_node(w0))
            if not batched:
                output = output.squeeze(1)
                hn = hn.squeeze(1)
                cn = cn.squeeze(1) if cn is not None else None
            elif self.batch_first:
                output = output.transpose(0, 1)
                if not is_lstm:
                    output = named_node(output, "TransposeBackward1")
        return output, hn, cn

    def _output_node(self, weight: Tensor) -> str:
        """PyTorch's node for a recurrent layer's time-major output: the concatenation of
        the two directions, its oneDNN float32 LSTM kernel's, or the stack of the steps."""
        if self.bidirectional:
            return "CatBackward0"
        fused = runs_onednn(self.mode, weight.dtype, self.proj_size > 0)
        return "MkldnnRnnLayerBackward0" if fused else "StackBackward0"


class RNN(RNNBase):
    r"""Multi-layer Elman RNN: ``h_t = act(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh)``.

    Args:
        input_size, hidden_size: features of the input and the hidden state.
        num_layers: stacked layers. Default: 1.
        nonlinearity: ``'tanh'`` or ``'relu'``. Default: ``'tanh'``.
        bias: use ``b_ih``/``b_hh``. Default: True.
        batch_first: input/output are ``(N, L, H)``. Default: False.
        dropout: dropout on every layer's output but the last (training only). Default: 0.
        bidirectional: run a reverse direction too. Default: False.

    ``forward(input, hx=None)``: ``input`` ``(L, N, H_in)`` (or batch-first, unbatched
    ``(L, H_in)``, or a :class:`PackedSequence`), ``hx`` ``(D*num_layers, N, H)``; returns
    ``(output, h_n)``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        _no_projection(proj_size)
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(
            mode,
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None) -> tuple:
        output, hn, _ = self._forward(input, hx)
        return output, hn


class LSTM(RNNBase):
    r"""Multi-layer long short-term memory, gates ``i, f, g, o`` in that order::

        i, f, o = σ(...), g = tanh(...), c_t = f c_{t-1} + i g, h_t = o tanh(c_t)

    With ``proj_size > 0`` the hidden state is projected: ``h_t = W_hr (o tanh(c_t))``.

    Args: as :class:`RNN` (no ``nonlinearity``) plus ``proj_size`` (Default: 0).

    ``forward(input, hx=None)``, ``hx = (h_0, c_0)``; returns ``(output, (h_n, c_n))``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor | PackedSequence, hx: tuple | None = None) -> tuple:
        output, hn, cn = self._forward(input, hx)
        return output, (hn, cn)


class GRU(RNNBase):
    r"""Multi-layer gated recurrent unit, gates ``r, z, n`` in that order::

        r, z = σ(...), n = tanh(x W_inᵀ + b_in + r (h W_hnᵀ + b_hn)), h_t = (1 - z) n + z h_{t-1}

    Args: as :class:`RNN` (no ``nonlinearity``). Returns ``(output, h_n)``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        _no_projection(proj_size)
        super().__init__(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None) -> tuple:
        output, hn, _ = self._forward(input, hx)
        return output, hn


# --------------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """Base of the cells: ``weight_ih (G*H, I)``, ``weight_hh (G*H, H)``, ``bias_ih``,
    ``bias_hh`` initialised ``U(-1/sqrt(H), 1/sqrt(H))``."""

    _mode = "RNN_TANH"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Every weight and bias ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _step(self, input: Tensor, hx: Any) -> tuple:
        """One step of the cell through the shared sequence Function (a sequence of length 1)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        is_lstm = self._mode == "LSTM"
        parts = list(hx) if (is_lstm and hx is not None) else ([hx] if hx is not None else None)
        if parts is not None:
            for i, p in enumerate(parts):
                if p.dim() not in (1, 2):
                    what = "hidden" if not is_lstm else f"hx[{i}]"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {p.dim()}D instead")
        _check_dtype(input, self.weight_ih)
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            parts = [p.unsqueeze(0) for p in parts] if parts is not None else None
        if input.shape[1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}"
            )
        batch = input.shape[0]
        if parts is None:
            hidden = zeros(batch, self.hidden_size, dtype=input.dtype)
            parts = [hidden, hidden] if is_lstm else [hidden]
        for i, p in enumerate(parts):
            if p.shape[0] != batch:
                raise RuntimeError(
                    f"Input batch size {batch} doesn't match hidden{i} batch size {p.shape[0]}"
                )
            if p.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{i} has inconsistent hidden_size: got {p.shape[1]}, expected {self.hidden_size}"
                )
        res = recurrent_layer(
            self._mode,
            input,
            parts[0],
            parts[1] if is_lstm else None,
            self.weight_ih,
            self.weight_hh,
            self.bias_ih,
            self.bias_hh,
            None,
            (batch,),
        )
        h, c = res[0], (res[2] if is_lstm else None)
        named_node(h, _CELL_NODE[self._mode])  # PyTorch's last op for h (c shares this node here)
        if not batched:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return h, c


#: the last op of PyTorch's cell, which names the node of its new hidden state
_CELL_NODE = {
    "LSTM": "MulBackward0",
    "GRU": "AddBackward0",
    "RNN_TANH": "TanhBackward0",
    "RNN_RELU": "ReluBackward0",
}


class RNNCell(RNNCellBase):
    r"""One Elman step: ``h' = act(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)``.

    Args:
        input_size, hidden_size, bias (Default: True), nonlinearity (``'tanh'`` or ``'relu'``).

    ``forward(input (N, I) or (I,), hx=None)`` returns ``h'`` ``(N, H)`` (or ``(H,)``).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, hx)[0]


class LSTMCell(RNNCellBase):
    r"""One LSTM step (gates ``i, f, g, o``).

    ``forward(input, hx=None)`` with ``hx = (h, c)``; returns ``(h', c')``.
    """

    _mode = "LSTM"

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        return self._step(input, hx)


class GRUCell(RNNCellBase):
    r"""One GRU step (gates ``r, z, n``). ``forward(input, hx=None)`` returns ``h'``."""

    _mode = "GRU"

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, hx)[0]
