"""``torch.fx.wrap("len")``: a builtin named at module scope is recorded as one call while
this module's functions are traced (in a file of its own: the mark covers the whole module)."""

import disttorch as dt
import disttorch.fx as fx

fx.wrap("len")


def _uses_len(x):
    return len(x) + x


def test_wrap_of_a_builtin_name_records_it_and_leaves_no_global_behind():
    gm = fx.symbolic_trace(_uses_len)
    assert "len_1 = len(x)" in gm.code and "len" not in globals()
    assert gm(dt.ones(2)).tolist() == [3.0, 3.0]
    assert [n.name for n in gm.graph.find_nodes(op="placeholder")] == ["x"]
    assert gm.graph.find_nodes(op="call_function", target=len)[0].stack_trace is None
