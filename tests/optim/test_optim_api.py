"""Optimizer API: hooks (per optimiser and global), state-dict hooks, named parameters,
param groups, zero_grad, flags and errors, custom subclasses."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import optim

ALL = [
    "ASGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Muon",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "SparseAdam",
]


def _p(*shape):
    return dt.ones(*shape, dtype=dt.float64, requires_grad=True)


def test_every_pytorch_optimiser_exists():
    for name in ALL:
        assert issubclass(getattr(optim, name), optim.Optimizer)


@pytest.mark.parity
def test_defaults_equal_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ALL:
        tp = [torch.nn.Parameter(torch.ones(2, 2))]
        ours = getattr(optim, name)([_p(2, 2)])
        theirs = getattr(torch.optim, name)(tp)
        assert ours.defaults == theirs.defaults, name
        assert list(ours.param_groups[0]) == list(theirs.param_groups[0]), name


def test_step_hooks_run_in_order_and_can_be_removed():
    p = _p(2)
    opt = optim.SGD([p], lr=0.1)
    calls = []
    h1 = optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global-pre"))
    h2 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", o is opt)))
    h3 = opt.register_step_post_hook(lambda o, a, k: calls.append(("post", float(p[0]))))
    h4 = optim.optimizer.register_optimizer_step_post_hook(lambda o, a, k: calls.append("global-post"))
    p.grad = dt.ones(2, dtype=dt.float64)
    opt.step()
    assert calls == ["global-pre", ("pre", True), ("post", pytest.approx(0.9)), "global-post"]
    for h in (h1, h2, h3, h4):
        h.remove()
    opt.step()
    assert len(calls) == 4


def test_pre_hook_may_replace_the_arguments_and_bad_results_are_errors():
    p = _p(1)
    opt = optim.SGD([p], lr=0.1)
    p.grad = dt.ones(1, dtype=dt.float64)
    seen = []
    h = opt.register_step_pre_hook(lambda o, a, k: ((), {"closure": lambda: seen.append(1) or 3.0}))
    assert opt.step() == 3.0 and seen == [1]
    h.remove()
    opt.register_step_pre_hook(lambda o, a, k: "nonsense")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_hooks_fire_once_for_a_subclass_calling_super_step():
    class Clipped(optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = _p(1)
    opt = Clipped([p], lr=0.1)
    p.grad = dt.ones(1, dtype=dt.float64)
    n = []
    opt.register_step_pre_hook(lambda *a: n.append(1))
    opt.step()
    assert n == [1] and p.item() == pytest.approx(0.9)


def test_custom_optimizer_with_its_own_step():
    class Sign(optim.Optimizer):
        def __init__(self, params, lr=0.5):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            for g in self.param_groups:
                for p in g["params"]:
                    p.data.sub_(g["lr"] * p.grad.sign())

    p = _p(2)
    opt = Sign([p])
    fired = []
    opt.register_step_post_hook(lambda *a: fired.append(1))
    p.grad = dt.tensor([2.0, -3.0], dtype=dt.float64)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.5, 1.5])
    assert fired == [1]
    with pytest.raises(NotImplementedError):
        optim.Optimizer([_p(1)], {}).step()


def test_state_dict_hooks():
    p = _p(2)
    opt = optim.Adam([p])
    p.grad = dt.ones(2, dtype=dt.float64)
    opt.step()
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_state_dict_post_hook(lambda o, sd: log.append("first"), prepend=True)
    sd = opt.state_dict()
    assert sd["extra"] == 1 and log == ["pre", "first"]

    def drop_extra(o, sd):
        sd = dict(sd)
        sd.pop("extra")
        log.append("load-pre")
        return sd

    opt.register_load_state_dict_pre_hook(drop_extra)
    opt.register_load_state_dict_post_hook(lambda o: log.append("load-post"))
    opt.load_state_dict(sd)
    assert log[-2:] == ["load-pre", "load-post"]


def test_state_dict_layout_and_load_casts_to_param_dtype():
    p = _p(3)
    opt = optim.Adam([p], lr=0.1)
    p.grad = dt.ones(3, dtype=dt.float64)
    opt.step()
    sd = opt.state_dict()
    st = sd["state"][0]
    assert isinstance(st["step"], dt.Tensor) and st["step"].shape == () and st["step"].dtype == dt.float32
    assert st["step"].item() == 1.0 and st["exp_avg"].dtype == dt.float64
    assert sd["param_groups"][0]["params"] == [0]
    sd["state"][0]["exp_avg"] = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float32)
    opt2 = optim.Adam([_p(3)])
    opt2.load_state_dict(sd)
    (s2,) = opt2.state.values()
    assert s2["exp_avg"].dtype == dt.float64 and s2["step"].dtype == dt.float32
    assert opt2.param_groups[0]["lr"] == 0.1
    with pytest.raises(ValueError, match="number of parameter groups"):
        optim.Adam([{"params": [_p(1)]}, {"params": [_p(1)]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.Adam([_p(1), _p(1)]).load_state_dict(sd)


def test_named_parameters_and_param_groups():
    model = dt.nn.Linear(3, 2)
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [_p(1)]})
    opt2 = optim.SGD([_p(1)], lr=0.1, momentum=0.9)
    extra = _p(2)
    opt2.add_param_group({"params": extra, "lr": 0.5})
    assert opt2.param_groups[1]["lr"] == 0.5 and opt2.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt2.add_param_group({"params": [extra]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt2.add_param_group({"params": {_p(1)}})
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(_p(1))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([])


def test_zero_grad_set_to_none_or_zero():
    p = _p(2)
    opt = optim.SGD([p], lr=0.1)
    p.grad = dt.ones(2, dtype=dt.float64)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad.numpy(), [0, 0])
    opt.zero_grad()
    assert p.grad is None


@pytest.mark.parametrize(
    "name,kwargs,match",
    [
        ("Adam", {"lr": -1}, "Invalid learning rate"),
        ("Adam", {"betas": (1.0, 0.9)}, "beta parameter at index 0"),
        ("AdamW", {"eps": -1}, "Invalid epsilon"),
        ("SGD", {"momentum": -0.1}, "Invalid momentum"),
        ("SGD", {"nesterov": True}, "Nesterov momentum requires"),
        ("Adadelta", {"rho": 1.5}, "Invalid rho"),
        ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta"),
        ("Adafactor", {"beta2_decay": 0.5}, "beta2_decay should be <= 0"),
        ("Adafactor", {"d": 0.5}, "Clipping threshold"),
        ("NAdam", {"momentum_decay": -1}, "momentum_decay"),
        ("Adam", {"fused": True, "foreach": True}, "cannot be `True` together"),
    ],
)
def test_bad_options_give_clear_errors(name, kwargs, match):
    with pytest.raises((ValueError, RuntimeError), match=match):
        getattr(optim, name)([_p(2, 2)], **kwargs)


def test_tensor_lr_is_accepted():
    p = _p(2)
    opt = optim.Adam([p], lr=dt.tensor(0.1))
    p.grad = dt.ones(2, dtype=dt.float64)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 0.9], rtol=1e-6)
    with pytest.raises(ValueError, match="1-element"):
        optim.Adam([_p(1)], lr=dt.tensor([0.1, 0.2]))


def test_sgd_has_no_state_without_momentum_and_adagrad_state_is_created_eagerly():
    p = _p(2)
    opt = optim.SGD([p], lr=0.1)
    p.grad = dt.ones(2, dtype=dt.float64)
    opt.step()
    assert opt.state_dict()["state"] == {}
    q = _p(2)
    ada = optim.Adagrad([q], initial_accumulator_value=0.5)
    np.testing.assert_array_equal(ada.state[q]["sum"].numpy(), [0.5, 0.5])


def test_swap_in_optimizer_params_and_state_restores_the_live_optimizer():
    p = _p(2)
    opt = optim.Adam([p], lr=0.1)
    p.grad = dt.ones(2, dtype=dt.float64)
    opt.step()
    live_state = opt.state
    other = dt.zeros(2, dtype=dt.float64, requires_grad=True)
    other.grad = dt.ones(2, dtype=dt.float64)
    sd = {
        "state": {0: {k: v.clone() for k, v in opt.state[p].items()}},
        "param_groups": [
            {**{k: v for k, v in opt.param_groups[0].items() if k != "params"}, "lr": 1.0, "params": [0]}
        ],
    }
    with optim.swap_in_optimizer_params_and_state(opt, {"w": other}, sd):
        assert opt.param_groups[0]["params"][0] is other and opt.param_groups[0]["lr"] == 1.0
        opt.step()
    assert (
        opt.state is live_state and opt.param_groups[0]["params"][0] is p and opt.param_groups[0]["lr"] == 0.1
    )
    assert sd["state"][0]["step"].item() == 2.0  # updated in place
    assert float(other[0]) < 0 and p.detach().numpy()[0] == pytest.approx(0.9, rel=1e-6)
    with pytest.raises(ValueError, match="parameters"):
        with optim.swap_in_optimizer_params_and_state(opt, {}, sd):
            pass


@pytest.mark.parity
def test_repr_of_several_groups_as_pytorchs(torch):
    reprs = []
    for lib in (dt, torch):
        a, b = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)
        reprs.append(repr(opt))
    assert reprs[0] == reprs[1] and "\n\nParameter Group 1\n" in reprs[0]


def _duplicates(lib) -> list:
    """A parameter twice in a group: PyTorch warns and goes on (SGD steps it once per copy);
    its state_dict numbers it by its last position."""
    import warnings

    p, q = lib.nn.Parameter(lib.tensor([1.0, -2.0])), lib.nn.Parameter(lib.tensor([0.5]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt = lib.optim.SGD([p, q, p], lr=0.1, momentum=0.9)
    for _ in range(2):
        ((p * p).sum() + q.sum() * 3).backward()
        opt.step()
        opt.zero_grad()
    with pytest.raises(TypeError) as e:
        lib.optim.SGD(lib.nn.Parameter(lib.ones(1)), lr=0.1)
    return [
        [str(w.message) for w in caught],
        [round(v, 5) for v in p.tolist() + q.tolist()],
        opt.state_dict()["param_groups"][0]["params"],
        str(e.value),
    ]


def test_duplicate_parameters_warn_as_pytorch(torch):
    # a group with a parameter twice raised ValueError; a tensor for params was named 'Parameter'
    assert _duplicates(dt) == _duplicates(torch)
