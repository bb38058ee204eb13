"""Modules the fx tests trace, built from either library (``lib`` is disttorch or PyTorch),
so one test can trace the same program in both and compare."""

from types import ModuleType
from typing import Any


def mlp(lib: ModuleType) -> Any:
    """Linear, ReLU, a parameter read in forward, torch functions, methods and operators."""

    class MLP(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 8)
            self.act = lib.nn.ReLU()
            self.fc2 = lib.nn.Linear(8, 3)
            self.scale = lib.nn.Parameter(lib.ones(3))

        def forward(self, x):
            h = self.act(self.fc1(x))
            y = self.fc2(h) * self.scale
            return lib.tanh(y).sum(dim=-1) + lib.sigmoid(y)[:, 0] / 2

    return MLP()


def cnn(lib: ModuleType) -> Any:
    """Conv, batch norm, pooling inside a Sequential (traced through), flatten, Linear."""

    class CNN(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = lib.nn.Sequential(
                lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.MaxPool2d(2)
            )
            self.head = lib.nn.Linear(4 * 2 * 2, 5)

        def forward(self, x):
            x = self.features(x)
            return self.head(lib.flatten(x, 1))

    return CNN()


def two_inputs(lib: ModuleType) -> Any:
    """``x + y``, ``torch.add`` and ``x.add``: the three spellings of one op."""

    class M(lib.nn.Module):
        def forward(self, x, y):
            return x + y, lib.add(x, y), x.add(y)

    return M()


def functional(lib: ModuleType) -> Any:
    """``torch.nn.functional`` calls: recorded with their defaults by keyword, as PyTorch does."""
    F = lib.nn.functional

    class Functional(lib.nn.Module):
        def forward(self, x):
            a = F.softmax(F.relu(x), dim=1)
            b = F.dropout(a, 0.2, training=self.training)
            return F.leaky_relu(F.layer_norm(b, (3,)), 0.1), F.max_pool2d(x.unsqueeze(0), 2)

    return Functional()


def buffered(lib: ModuleType) -> Any:
    """Tensors on the left of operators: a buffer, a plain tensor attribute, a constant."""

    class Buffered(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("buf", lib.ones(3))
            self.c = lib.zeros(3)

        def forward(self, x):
            a = self.buf + x
            return a, self.c * x, lib.ones(3) - a, x + self.buf, self.buf.sum() + x, self.buf[x.argmax()]

    return Buffered()


def branchy(lib: ModuleType) -> Any:
    """A data-dependent ``if``: cannot be traced."""

    class Branchy(lib.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    return Branchy()


TWO_INPUTS_CODE = """


def forward(self, x, y):
    add = x + y
    add_1 = torch.add(x, y)
    add_2 = x.add(y);  x = y = None
    return (add, add_1, add_2)
    """

MLP_CODE = """


def forward(self, x):
    fc1 = self.fc1(x);  x = None
    act = self.act(fc1);  fc1 = None
    fc2 = self.fc2(act);  act = None
    scale = self.scale
    mul = fc2 * scale;  fc2 = scale = None
    tanh = torch.tanh(mul)
    sum_1 = tanh.sum(dim = -1);  tanh = None
    sigmoid = torch.sigmoid(mul);  mul = None
    getitem = sigmoid[(slice(None, None, None), 0)];  sigmoid = None
    truediv = getitem / 2;  getitem = None
    add = sum_1 + truediv;  sum_1 = truediv = None
    return add
    """

FUNCTIONAL_CODE = """


def forward(self, x):
    relu = torch.nn.functional.relu(x, inplace = False)
    softmax = torch.nn.functional.softmax(relu, dim = 1, _stacklevel = 3, dtype = None);  relu = None
    dropout = torch.nn.functional.dropout(softmax, p = 0.2, training = True, inplace = False);  softmax = None
    layer_norm = torch.nn.functional.layer_norm(dropout, (3,), weight = None, bias = None, eps = 1e-05);  dropout = None
    leaky_relu = torch.nn.functional.leaky_relu(layer_norm, negative_slope = 0.1, inplace = False);  layer_norm = None
    unsqueeze = x.unsqueeze(0);  x = None
    max_pool2d = torch.nn.functional.max_pool2d(unsqueeze, 2, stride = None, padding = 0, dilation = 1, ceil_mode = False, return_indices = False);  unsqueeze = None
    return (leaky_relu, max_pool2d)
    """

BUFFERED_CODE = """


def forward(self, x):
    buf = self.buf
    add = buf.add(x);  buf = None
    c = self.c
    mul = c.mul(x);  c = None
    _tensor_constant0 = self._tensor_constant0
    sub = _tensor_constant0.sub(add);  _tensor_constant0 = None
    buf_1 = self.buf
    add_1 = x + buf_1;  buf_1 = None
    _tensor_constant1 = self._tensor_constant1
    add_2 = _tensor_constant1.add(x);  _tensor_constant1 = None
    argmax = x.argmax();  x = None
    buf_2 = self.buf
    getitem = buf_2.__getitem__(argmax);  buf_2 = argmax = None
    return (add, mul, sub, add_1, add_2, getitem)
    """
