"""``torch.cond`` under ``torch.export``: disttorch cannot capture it as a node, so a
predicate computed from the traced inputs raises fx's ``TraceError`` rather than baking the
example's branch into the graph (which gave ``sin`` for inputs where the module gives ``cos``)."""

import pytest

import disttorch as dt
from disttorch.export import export
from disttorch.fx.proxy import TraceError


class Branchy(dt.nn.Module):
    def forward(self, x):
        return dt.cond(x.sum() > 0, dt.sin, dt.cos, (x,))


class ConstPred(dt.nn.Module):
    def forward(self, x):
        return dt.cond(x.shape[0] > 1, dt.sin, dt.cos, (x,))


def test_data_dependent_cond_is_refused_in_export():
    with pytest.raises(TraceError, match="torch.cond"):
        export(Branchy(), (dt.ones(2),))


def test_cond_on_a_size_still_exports():
    ep = export(ConstPred(), (dt.ones(2),))
    assert dt.allclose(ep.module()(-dt.ones(2)), dt.sin(-dt.ones(2)))


def test_eager_cond_unchanged():
    assert dt.allclose(Branchy()(-dt.ones(2)), dt.cos(-dt.ones(2)))
    assert dt.allclose(Branchy()(dt.ones(2)), dt.sin(dt.ones(2)))
