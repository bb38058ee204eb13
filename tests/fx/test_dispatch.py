"""Importing torch.fx makes torch functions dispatch to ``__torch_function__`` of non-tensor
arguments, without changing what they do for tensors."""

import pickle

from parity_helpers import name_recorder

import disttorch as dt
import disttorch.fx  # noqa: F401  (installs the dispatching twins)


class _Seen:
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func.__name__, args, kwargs))
        return "handled"


def test_foreign_arguments_dispatch_directly_in_lists_and_by_keyword():
    s = _Seen()
    assert dt.relu(s) == "handled" and dt.cat([dt.ones(1), s]) == "handled"
    assert dt.nn.functional.relu(s) == "handled"
    assert _Seen.calls[-1] == ("relu", (s,), {"inplace": False})  # PyTorch's functional convention


def test_tensors_are_untouched_and_aliases_keep_their_names():
    assert dt.nn.functional.relu(dt.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
    assert dt.arctan.__name__ == "arctan" and dt.atan.__name__ == "atan"
    assert (
        dt.relu.__module__ == "disttorch" and dt.nn.functional.softmax.__module__ == "disttorch.nn.functional"
    )
    assert pickle.loads(pickle.dumps(dt.relu)) is dt.relu


def test_function_modes_wrap_the_twins_and_leave_them_in_place():
    conv, x, y = dt.nn.Conv1d(1, 1, 2), dt.ones(1, 1, 4), dt.ones(1)
    with name_recorder() as mode:
        conv(x)
        dt.relu(y)
    assert mode.names == ["conv1d", "relu"]
    gm = disttorch.fx.symbolic_trace(lambda x: dt.relu(x))  # the twins are back after the mode
    assert "torch.relu(x)" in gm.code
