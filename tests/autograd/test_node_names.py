"""Nodes carry PyTorch's names, so a printed tensor reads as under PyTorch
(``tensor(..., grad_fn=<AddmmBackward0>)``), profiler tables too."""

import numpy as np
import pytest

import disttorch as dt

CASES = {
    "AddmmBackward0": lambda L, a: L.nn.Linear(5, 3)(a["x"]),
    "MmBackward0": lambda L, a: L.nn.Linear(5, 3, bias=False)(a["x"]),
    "ViewBackward0": lambda L, a: L.nn.Linear(5, 3)(a["x3"]),
    "ConvolutionBackward0": lambda L, a: L.nn.Conv2d(3, 4, 3)(a["img"]),
    "NllLossBackward0": lambda L, a: L.nn.functional.cross_entropy(a["x"], L.tensor([0, 1, 2, 3])),
    "MeanBackward0": lambda L, a: L.nn.functional.l1_loss(a["x"], L.zeros(4, 5)),
    "SumBackward1": lambda L, a: a["x"].sum(1),
    "MeanBackward1": lambda L, a: a["x"].mean(0),
    "MaxBackward1": lambda L, a: a["x"].max(),
    "MaxBackward0": lambda L, a: a["x"].max(1)[0],
    "MvBackward0": lambda L, a: a["x"] @ a["x"][0],
    "BmmBackward0": lambda L, a: L.bmm(a["x3"], a["x3"].transpose(1, 2)),
    "TBackward0": lambda L, a: a["x"].t(),
    "SqueezeBackward1": lambda L, a: a["x"].unsqueeze(0).squeeze(0),
    "ClampBackward1": lambda L, a: a["x"].clamp(0, 1),
    "PowBackward1": lambda L, a: a["x"] ** a["x"],
    "RsubBackward1": lambda L, a: 1 - a["x"],
    "NativeLayerNormBackward0": lambda L, a: L.nn.functional.layer_norm(a["x"], (5,)),
    "NativeBatchNormBackward0": lambda L, a: L.nn.BatchNorm2d(3)(a["img"]),
    "MaxPool2DWithIndicesBackward0": lambda L, a: L.nn.functional.max_pool2d(a["img"], 2),
    "AvgPool2DBackward0": lambda L, a: L.nn.functional.avg_pool2d(a["img"], 2),
    "EmbeddingBackward0": lambda L, a: L.nn.Embedding(10, 3)(L.tensor([1, 2])),
    "EmbeddingBagBackward0": lambda L, a: L.nn.EmbeddingBag(10, 3)(L.tensor([1, 2, 4]), L.tensor([0, 1])),
    "ToCopyBackward0": lambda L, a: a["x"].double(),
    "SortBackward0": lambda L, a: a["x"].sort(1)[0],
    "HardtanhBackward0": lambda L, a: L.nn.functional.relu6(a["x"]),
    "UpsampleNearest2DBackward0": lambda L, a: L.nn.Upsample(scale_factor=2)(a["img"]),
    "UpsampleBilinear2DBackward0": lambda L, a: L.nn.functional.interpolate(
        a["img"], scale_factor=2, mode="bilinear"
    ),
    "UpsampleLinear1DBackward0": lambda L, a: L.nn.functional.interpolate(a["x3"], size=7, mode="linear"),
    "ScaledDotProductFlashAttentionForCpuBackward0": lambda L, a: (
        L.nn.functional.scaled_dot_product_attention(a["img"], a["img"], a["img"])
    ),
    "UnsafeViewBackward0": lambda L, a: L.nn.functional.scaled_dot_product_attention(
        a["x3"], a["x3"], a["x3"]
    ),
    "FloorBackward0": lambda L, a: L.floor(a["x"]),
    "DistBackward0": lambda L, a: L.dist(a["x"], a["x"] * 2),
    "RoundBackward1": lambda L, a: a["x"].round(decimals=1),
    "SignBackward0": lambda L, a: L.sign(a["x"]),
    "MkldnnRnnLayerBackward0": lambda L, a: L.nn.LSTM(4, 5)(a["seq"])[0],
    "TransposeBackward1": lambda L, a: L.nn.GRU(4, 5, batch_first=True)(a["seq"])[0],
    "CatBackward0": lambda L, a: L.nn.GRU(4, 5, bidirectional=True)(a["seq"])[0],
    # composites PyTorch computes as one op, or whose last op it names
    "AddmvBackward0": lambda L, a: L.addmv(a["x"][:, 0], a["x"], a["x"][0], beta=0.5),
    "BaddbmmBackward0": lambda L, a: L.baddbmm(a["x3"][:, :, :4], a["x3"], a["x3"].mT[:, :, :4]),
    "AddcdivBackward0": lambda L, a: L.addcdiv(a["x"], a["x"], a["x"].abs() + 1),
    "FracBackward0": lambda L, a: a["x"].frac(),
    "NansumBackward0": lambda L, a: a["x"].nansum(1),
    "ClampMinBackward0": lambda L, a: a["x"].clamp_min(0),
    "ClampMaxBackward1": lambda L, a: a["x"].clamp_max(a["x"].detach()),
    "FmodBackward0": lambda L, a: a["x"].fmod(2),
    "RemainderBackward1": lambda L, a: a["x"].remainder(a["x"].detach() + 3),
    "Log1PBackward0": lambda L, a: a["x"].abs().log1p(),
    "LinalgVectorNormBackward0": lambda L, a: L.linalg.norm(a["x"], ord=1, dim=1),
    "CdistBackward0": lambda L, a: L.cdist(a["x"], a["x"]),
    "LinalgDetBackward0": lambda L, a: L.det(a["x"][:4, :4]),
    "LinalgInvExBackward0": lambda L, a: L.linalg.inv(a["x"][:4, :4]),
    "LinalgSolveExBackward0": lambda L, a: L.linalg.solve(a["x"][:4, :4], a["x"][:4, :2]),
    # linalg's decompositions: PyTorch names their nodes after the linalg op
    "LinalgMatrixExpBackward0": lambda L, a: L.matrix_exp(a["x"][:4, :4]),
    "LinalgQrBackward0": lambda L, a: L.linalg.qr(a["x"])[0],
    "LinalgEighBackward0": lambda L, a: L.linalg.eigh(a["x"][:4, :4] @ a["x"][:4, :4].mT)[0],
    "LinalgSvdBackward0": lambda L, a: L.linalg.svdvals(a["x"]),
    "LinalgSlogdetBackward0": lambda L, a: L.linalg.slogdet(a["x"][:4, :4])[1],
    "LinalgEigBackward0": lambda L, a: L.linalg.eigvals(a["x"][:4, :4]),
    "VarMeanBackward0": lambda L, a: L.var_mean(a["x"], 1)[1],
    "GridSampler2DBackward0": lambda L, a: L.nn.functional.grid_sample(
        a["img"], L.zeros(2, 2, 2, 2), align_corners=False
    ),
    "AffineGridGeneratorBackward0": lambda L, a: L.nn.functional.affine_grid(
        a["x"][:2, :3].reshape(1, 2, 3), (1, 1, 2, 2), align_corners=False
    ),
    "SpecialI0EBackward0": lambda L, a: L.special.i0e(a["x"]),
    "MvlgammaBackward0": lambda L, a: L.special.multigammaln(a["x"].abs() + 2, 2),
    "DivBackward1": lambda L, a: L.nn.functional.cross_entropy(a["x"], a["x"].detach().softmax(1)),
    "AddBackward0": lambda L, a: L.nn.functional.cross_entropy(
        a["x"], L.tensor([0, 1, 2, 3]), label_smoothing=0.1
    ),
    "MultiMarginLossBackward0": lambda L, a: L.nn.functional.multi_margin_loss(
        a["x"], L.tensor([0, 1, 2, 3])
    ),
    "IndexPutBackward0": lambda L, a: a["x"].index_put((L.tensor([0, 2]),), a["x"][0]),
    "TakeBackward0": lambda L, a: L.take(a["x"], L.tensor([0, 7])),
    "PutBackward0": lambda L, a: a["x"].put(L.tensor([0, 7]), a["x"][0, :2]),
    "ScatterBackward1": lambda L, a: a["x"].scatter(1, L.tensor([[0], [1], [2], [3]]), 1.0),
    "PixelShuffleBackward0": lambda L, a: L.nn.functional.pixel_shuffle(
        a["img"][:, :1].repeat(1, 4, 1, 1), 2
    ),
    "MedianBackward1": lambda L, a: a["x"].median(1).values,
    "KthvalueBackward0": lambda L, a: a["x"].kthvalue(2, 1).values,
    "ModeBackward0": lambda L, a: a["x"].mode(1).values,
    "SoftMarginLossBackward0": lambda L, a: L.nn.functional.soft_margin_loss(a["x"], L.ones(4, 5)),
    "DivBackward0": lambda L, a: L.nn.functional.kl_div(
        a["x"].log_softmax(1), a["x"].detach().softmax(1), reduction="batchmean"
    ),
}


def _args(lib):
    rng = np.random.default_rng(0)
    shapes = {"x": (4, 5), "x3": (2, 4, 5), "img": (2, 3, 8, 8), "seq": (3, 2, 4)}
    return {
        k: lib.tensor(rng.standard_normal(s), dtype=lib.float32, requires_grad=True)
        for k, s in shapes.items()
    }


@pytest.mark.parametrize("name", list(CASES))
def test_node_names(name):
    out = CASES[name](dt, _args(dt))
    assert out.grad_fn.name() == name
    assert f"grad_fn=<{name}>" in repr(out)


@pytest.mark.parity
def test_node_names_match_pytorch(torch):
    for name, case in CASES.items():
        assert case(torch, _args(torch)).grad_fn.name() == name, name


#: ops PyTorch computes as one op (or whose last op it names) built here from several:
#: (the output node's name, the op)
COMPOSITES = {
    "lerp": ("LerpBackward1", lambda L, a: L.lerp(a["x"], a["x"] * 2, L.full((4, 5), 0.3))),
    "diag": ("DiagonalBackward0_copy", lambda L, a: L.diag(a["x"])),
    "rrelu": ("RreluWithNoiseBackward0", lambda L, a: L.nn.functional.rrelu(a["x"], training=True)),
    "rrelu_eval": ("RreluWithNoiseBackward0", lambda L, a: L.nn.RReLU().eval()(a["x"])),
    "instance_norm": ("ViewBackward0", lambda L, a: L.nn.InstanceNorm2d(3, affine=True)(a["img"])),
    "quantile": ("SqueezeBackward4", lambda L, a: L.quantile(a["x"], L.tensor([0.2, 0.7]), dim=1)),
    "kron": ("UnsafeViewBackward0", lambda L, a: L.kron(a["x"], a["x3"])),
    "block_diag": ("BlockDiagBackward0", lambda L, a: L.block_diag(a["x"], a["x"][0])),
    "cross": ("LinalgCrossBackward0", lambda L, a: L.linalg.cross(a["x"][:, :3], a["x"][:, 1:4])),
    "renorm": ("RenormBackward0", lambda L, a: L.renorm(a["x"], 2, 0, 1.0)),
    "trapezoid": ("MulBackward1", lambda L, a: L.trapezoid(a["x"], dx=0.5)),
    "pairwise_distance": (
        "NormBackward1",
        lambda L, a: L.nn.functional.pairwise_distance(a["x"], a["x"] * 2),
    ),
    "weight_norm": (
        "WeightNormInterfaceBackward0",
        lambda L, a: L.nn.utils.parametrizations.weight_norm(L.nn.Linear(5, 3)).weight,
    ),
}


@pytest.mark.parametrize("op", list(COMPOSITES))
def test_composite_node_names(op):
    name, case = COMPOSITES[op]
    out = case(dt, _args(dt))
    assert type(out.grad_fn).__name__ == out.grad_fn.name() == name


@pytest.mark.parity
def test_composite_node_names_match_pytorch(torch):
    for op, (name, case) in COMPOSITES.items():
        assert case(torch, _args(torch)).grad_fn.name() == name, op


def _node_reprs(lib):
    """``repr(grad_fn)`` without its address: a built-in op's node, a user Function's node."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x**3

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.ones(2, requires_grad=True)
    return [repr(y.grad_fn).split(" at 0x")[0] for y in (x * 2, Cube.apply(x))]


def test_python_function_nodes_print_their_module():
    assert _node_reprs(dt) == ["<MulBackward0 object", "<disttorch.autograd.function.CubeBackward object"]


@pytest.mark.parity
def test_node_reprs_match_pytorch(torch):
    assert [r.replace("disttorch.", "torch.") for r in _node_reprs(dt)] == _node_reprs(torch)


#: basic indexing: PyTorch names the last step (select, slice, unsqueeze; a whole-dim slice
#: inside a tuple is no step, and with none left the node is an alias)
INDEXES = ["[0, 0]", "[:, 0]", "[0, 1:]", "[:, :]", "[:]", "[0:100]", "[:, 0:100]", "[:, -3:]"]
INDEXES += ["[None, 0]", "[0, None]", "[...]", "[..., 0, :]", "[(slice(None),)]", "[-1]", "[::2]"]


INDEXES += ["[0, :, 1]", "[1:, 0]", "[::2, 1:3:2]", "[None, 0, None]", "[0][1]"]
INDEXES += ["[lib.tensor([0, 1])]", "[0, lib.tensor([0, 2])]", "[lib.ones(2, 3, 4) > 0]", "[[0, 1], [1, 2]]"]


def _chain(node):
    """The names of a node and of the first node below it, down to the leaf."""
    names = []
    while node is not None:
        names.append(node.name().split("::")[-1])
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parity
def test_index_graphs_match_pytorch(torch):
    """PyTorch takes one step (a node) per int, partial slice and None of a basic index."""
    for index in INDEXES:
        graphs = [
            _chain(eval(f"lib.ones(2, 3, 4, requires_grad=True){index}").grad_fn) for lib in (dt, torch)
        ]
        assert graphs[0] == graphs[1], index


def test_multi_step_index_is_one_view_with_its_gradient():
    x = dt.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    y = x[1, None, 1:, 2]
    assert _chain(y.grad_fn)[:3] == ["SelectBackward0", "SliceBackward0", "UnsqueezeBackward0"]
    assert y._base is x and y.tolist() == [[18.0, 22.0]]
    y.sum().backward()
    assert x.grad.nonzero().tolist() == [[1, 1, 2], [1, 2, 2]]


def _graph(node, depth=0):
    """A node and the names below it, as nested lists (AccumulateGrad as "acc")."""
    if node is None:
        return None
    name = "acc" if "AccumulateGrad" in node.name() else node.name()
    return [name, *[_graph(n, depth + 1) for n, _ in node.next_functions]] if depth < 4 else name


@pytest.mark.parity
@pytest.mark.parametrize("bias", [True, False])
def test_linear_graph_reads_as_pytorchs(torch, bias):
    """``loss.grad_fn.next_functions[0][0].next_functions[0][0]`` (the 60-minute blitz) is
    the bias's AccumulateGrad: addmm(bias, input, weight.t()), under views for N-d input."""
    for shape in [(4, 3), (2, 4, 3), (3,)]:
        for input_grad in (True, False):
            graphs = []
            for lib in (dt, torch):
                layer = lib.nn.Linear(3, 2, bias=bias)
                graphs.append(_graph(layer(lib.ones(*shape, requires_grad=input_grad)).grad_fn))
            assert graphs[0] == graphs[1], (shape, input_grad)


def _type_names(lib):
    """``type(node).__name__`` down a graph, and whether the node has ``saved_tensors`` (a user
    Function's) or ``variable`` (a leaf's), as torchviz walks it."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x**3

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.ones(2, 3, requires_grad=True)
    out = Cube.apply(lib.nn.Linear(3, 2)(x).tanh().sum(1)[0] + x.mean())
    names, todo = [], [out.grad_fn]
    while todo:
        node = todo.pop()
        names.append((type(node).__name__, hasattr(node, "saved_tensors"), hasattr(node, "variable")))
        todo += [n for n, _ in node.next_functions if n is not None]
    return names, type(out.grad_fn)


def test_node_classes_are_named_as_their_nodes():
    for name, case in CASES.items():
        node = case(dt, _args(dt)).grad_fn
        assert type(node).__name__ == name == node.name(), name
    names, cube = _type_names(dt)
    assert names[0] == ("CubeBackward", True, False) and cube.__module__ == "disttorch.autograd.function"
    assert ("TanhBackward0", False, False) in names and ("AccumulateGrad", False, True) in names
    assert type(dt.ones(1, requires_grad=True).sum().grad_fn).__module__ == "builtins"


@pytest.mark.parity
def test_node_class_names_match_pytorch(torch):
    assert _type_names(dt)[0] == _type_names(torch)[0]


#: composites whose graph below the output node reads as PyTorch's
GRAPHS = {
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([0, 1, 2, 3])),
    "cross_entropy_none": lambda L, x: L.nn.functional.cross_entropy(
        x, L.tensor([0, 1, 2, 3]), reduction="none"
    ),
    "cross_entropy_probs": lambda L, x: L.nn.functional.cross_entropy(x, L.full((4, 5), 0.2)),
    "cross_entropy_probs_sum": lambda L, x: L.nn.functional.cross_entropy(
        x, L.full((4, 5), 0.2), reduction="sum"
    ),
    "cross_entropy_smoothed": lambda L, x: L.nn.functional.cross_entropy(
        x, L.tensor([0, 1, 2, 3]), label_smoothing=0.1
    ),
    "cross_entropy_1d": lambda L, x: L.nn.functional.cross_entropy(x[0], L.tensor(2)),
    "renorm": lambda L, x: L.renorm(x, 2, 0, 1.0),
    "kron": lambda L, x: L.kron(x, x),
    "kron_padded": lambda L, x: L.kron(x, x[0]),
}


@pytest.mark.parity
def test_composite_graphs_match_pytorch(torch):
    def graph(node, depth=0):
        if node is None:
            return None
        return (
            [node.name(), *[graph(n, depth + 1) for n, _ in node.next_functions]]
            if depth < 8
            else node.name()
        )

    for op, case in GRAPHS.items():
        ours, theirs = (graph(case(L, L.randn(4, 5, requires_grad=True)).grad_fn) for L in (dt, torch))
        assert ours == theirs, op


def test_class_weights_that_require_grad_are_refused():
    w = dt.rand(5, requires_grad=True)
    for loss in (dt.nn.functional.cross_entropy, dt.nn.functional.nll_loss):
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
            loss(dt.randn(4, 5), dt.tensor([0, 1, 2, 3]), weight=w)
