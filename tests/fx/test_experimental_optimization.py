"""``torch.fx.experimental.optimization``: ``fuse`` folds eval-mode batch norms into the
convolution or linear layer before them, ``remove_dropout`` drops dropout layers; the
rewritten graphs read as PyTorch's and compute what the module computes."""

import numpy as np

import disttorch as dt
from disttorch.fx.experimental.optimization import fuse, remove_dropout


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
            self.c2, self.b2 = nn.Conv2d(4, 4, 3, bias=False), nn.BatchNorm2d(4)
            self.shared, self.b3 = nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4)
            self.fc, self.bn, self.drop = nn.Linear(4, 2), nn.BatchNorm1d(2), nn.Dropout(0.5)

        def forward(self, x):
            x = lib.relu(self.b1(self.c1(x)))
            x = self.b2(self.c2(x))
            s = self.shared(x)
            x = (self.b3(s) + s).mean((2, 3))  # the conv's output has two readers: not fused
            return self.drop(self.bn(self.fc(x)))

    return Net()


def _trained(lib, seed):
    lib.manual_seed(seed)
    m = _net(lib)
    for _ in range(2):
        m(lib.randn(4, 3, 8, 8))
    return m.eval()


def test_fuse_folds_batch_norms_and_keeps_the_outputs():
    m = _trained(dt, 0)
    fused = fuse(m)
    assert "b1" not in fused.code and "b2" not in fused.code and "bn" not in fused.code
    assert "self.b3(shared)" in fused.code  # kept: its conv's output is read twice
    x = dt.randn(2, 3, 8, 8)
    np.testing.assert_allclose(fused(x).detach().numpy(), m(x).detach().numpy(), atol=1e-5)
    assert isinstance(m.b1, dt.nn.BatchNorm2d)  # the original is untouched (a deep copy is fused)


def test_fuse_and_remove_dropout_code_match_pytorch(torch):
    import torch.fx.experimental.optimization as theirs

    ours_m, their_m = _trained(dt, 0), _trained(torch, 0)
    assert fuse(ours_m).code == theirs.fuse(their_m).code
    assert remove_dropout(ours_m).code == theirs.remove_dropout(their_m).code
    assert "drop" not in remove_dropout(ours_m).code
