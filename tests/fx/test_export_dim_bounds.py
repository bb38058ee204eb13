"""``torch.export``'s ``Dim(min=, max=)`` bounds: an example outside them raises PyTorch's
``ConstraintViolationError``, and the exported module refuses inputs outside them with
PyTorch's ``AssertionError('Guard failed: x.size()[1] >= 4')``."""

import pytest

import disttorch as dt
from disttorch.export import Dim, export
from disttorch.fx.experimental.symbolic_shapes import ConstraintViolationError


class Slice(dt.nn.Module):
    def forward(self, x):
        return dt.relu(x[:, 2:])


def _calls(L, export, Dim, module=Slice):
    ds = {"x": {0: Dim("d0"), 1: Dim("d1", min=4, max=18)}}
    ep = export(module(), (L.randn(10, 10, 2),), dynamic_shapes=ds)
    out = []
    for shape in [(5, 5, 2), (8, 4, 2), (8, 18, 2), (8, 1, 2), (8, 20, 2), (8, 8, 3)]:
        try:
            out.append(tuple(ep.module()(L.randn(*shape)).shape))
        except AssertionError as e:
            out.append(str(e))
    return out


def test_bounds_are_guards():
    assert _calls(dt, export, Dim) == [
        (5, 3, 2),
        (8, 2, 2),
        (8, 16, 2),
        "Guard failed: x.size()[1] >= 4",
        "Guard failed: x.size()[1] <= 18",
        "Guard failed: x.size()[2] == 2",
    ]


@pytest.mark.parametrize("size", [10, 20])
def test_example_outside_its_bounds_is_refused(size):
    ds = {"x": {0: Dim("d0"), 1: Dim("bad", min=11, max=18)}}
    with pytest.raises(ConstraintViolationError, match=rf"{size} not in range \[11, 18\]"):
        export(Slice(), (dt.randn(10, size, 2),), dynamic_shapes=ds)
    assert issubclass(ConstraintViolationError, RuntimeError)


def test_one_sided_bounds():
    ep = export(Slice(), (dt.randn(4, 10),), dynamic_shapes={"x": {1: Dim("lo", min=3)}})
    assert tuple(ep.module()(dt.randn(4, 100)).shape) == (4, 98)
    with pytest.raises(AssertionError, match=r"x.size\(\)\[1\] >= 3"):
        ep.module()(dt.randn(4, 2))


@pytest.mark.parity
def test_bounds_match_pytorch(torch):
    from torch.export import Dim as TDim
    from torch.export import export as texport

    class TSlice(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x[:, 2:])

    assert _calls(dt, export, Dim) == _calls(torch, texport, TDim, TSlice)


GUARDS = ["guard_or_false", "guard_or_true", "statically_known_true"]


def _helper_answers(shapes) -> list:
    out = []
    for name in GUARDS + ["is_concrete_int", "free_symbols", "free_unbacked_symbols", "has_free_symbols"]:
        for value in (True, False, 3, 2.0, None):
            try:
                got = getattr(shapes, name)(value)
                out.append(
                    (
                        name,
                        value,
                        sorted(got) if isinstance(got, (set,)) or type(got).__name__ == "OrderedSet" else got,
                    )
                )
            except AssertionError as e:
                out.append((name, value, str(e)))
    return out


def test_guard_helpers_answer_for_plain_values():
    from disttorch.fx.experimental import symbolic_shapes

    answers = {(n, v): a for n, v, a in _helper_answers(symbolic_shapes)}
    assert answers[("guard_or_false", True)] is True and answers[("guard_or_true", False)] is False
    assert answers[("statically_known_true", 3)] == "Expected bool, got <class 'int'>"
    assert answers[("free_symbols", 3)] == [] and answers[("has_free_symbols", None)] is False


@pytest.mark.parity
def test_guard_helpers_match_pytorch(torch):
    from torch.fx.experimental import symbolic_shapes as theirs

    from disttorch.fx.experimental import symbolic_shapes as ours

    assert _helper_answers(ours) == _helper_answers(theirs)
