"""Module API: registration, iteration, state_dict, modes, hooks, repr, pickling, containers."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn


class Leaf(nn.Module):
    def __init__(self, n=2):
        super().__init__()
        self.w = nn.Parameter(dt.ones(n))
        self.register_buffer("stat", dt.zeros(n))
        self.register_buffer("scratch", dt.zeros(1), persistent=False)

    def forward(self, x):
        return x * self.w

    def extra_repr(self):
        return f"n={self.w.shape[0]}"


class Tree(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = Leaf(3)
        self.bias = nn.Parameter(dt.zeros(1))

    def forward(self, x):
        return self.a(x)


# ---------------------------------------------------------------------- Parameter / Buffer
def test_parameter_is_leaf_tensor_sharing_memory():
    t = dt.zeros(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, dt.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    t.numpy()[0, 0] = 5.0
    assert p.detach().numpy()[0, 0] == 5.0
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)


def test_parameter_repr_and_copy_keep_class():
    p = nn.Parameter(dt.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    for clone in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(clone) is nn.Parameter and clone.requires_grad
        np.testing.assert_array_equal(clone.detach().numpy(), [1.0, 2.0])
    q = nn.Parameter(dt.ones(1), requires_grad=False)
    assert not pickle.loads(pickle.dumps(q)).requires_grad


def test_ops_on_parameters_give_plain_tensors():
    p = nn.Parameter(dt.ones(2))
    y = p * 2
    assert type(y) is dt.Tensor and y.grad_fn is not None


def test_buffer_assignment_registers_buffer():
    m = nn.Module()
    m.b = nn.Buffer(dt.ones(2))
    m.nb = nn.Buffer(dt.ones(2), persistent=False)
    assert [n for n, _ in m.named_buffers()] == ["b", "nb"]
    assert list(m.state_dict()) == ["b"]


# ---------------------------------------------------------------------- registration
def test_setattr_registers_and_delattr_removes():
    m = Tree()
    assert list(m._parameters) == ["bias"]
    assert list(m._modules) == ["a", "b"]
    assert m.a.w is m.a._parameters["w"]
    del m.bias
    assert "bias" not in m._parameters
    with pytest.raises(AttributeError, match="'Tree' object has no attribute 'bias'"):
        m.bias
    m.a = None
    assert m._modules["a"] is None and m.a is None


def test_assigning_non_parameter_to_parameter_slot_raises():
    m = Leaf()
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'w'"):
        m.w = dt.ones(2)
    m.w = None
    assert m.w is None and list(m.parameters()) == []


def _wrong_assignments(lib) -> list:
    m = lib.nn.Linear(2, 2)
    m.register_buffer("b", lib.ones(1))
    m.add_module("c", lib.nn.Identity())
    seen = []
    for name, value in [("weight", lib.ones(2).long()), ("weight", 3), ("c", lib.ones(1)), ("b", 3)]:
        with pytest.raises(TypeError) as e:
            setattr(m, name, value)
        seen.append(str(e.value).replace(lib.__name__ + ".", "torch."))
    return seen


def test_wrong_assignments_to_module_slots_raise_pytorchs_words(torch):
    # was "cannot assign 'Tensor' as parameter 'weight' (disttorch.nn.Parameter or None expected)"
    assert _wrong_assignments(dt) == _wrong_assignments(torch)


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' object to parameter 'x'"):
        m.register_parameter("x", dt.ones(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    m.plain = 1
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", dt.ones(1))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(dt.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_forward_missing_raises():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


# ---------------------------------------------------------------------- iteration
def test_named_parameters_order_prefix_recurse():
    m = Tree()
    assert [n for n, _ in m.named_parameters()] == ["bias", "a.w", "b.w"]
    assert [n for n, _ in m.named_parameters(prefix="model")] == ["model.bias", "model.a.w", "model.b.w"]
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["bias"]
    assert [n for n, _ in m.named_buffers()] == ["a.stat", "a.scratch", "b.stat", "b.scratch"]
    assert len(list(m.parameters())) == 3 and len(list(m.buffers(recurse=False))) == 0


def test_shared_parameters_and_modules_are_deduplicated():
    m = Tree()
    m.b.w = m.a.w
    assert [n for n, _ in m.named_parameters()] == ["bias", "a.w"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["bias", "a.w", "b.w"]
    seq = nn.Sequential(m.a, m.a)
    assert len(list(seq.modules())) == 2 and len(list(seq.modules(remove_duplicate=False))) == 3
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1"]
    assert len(list(seq.children())) == 1


def test_children_modules_named_modules():
    m = Tree()
    assert [n for n, _ in m.named_children()] == ["a", "b"]
    assert [n for n, _ in m.named_modules()] == ["", "a", "b"]
    assert list(m.modules())[0] is m
    assert m.get_submodule("a") is m.a and m.get_submodule("") is m
    assert m.get_parameter("b.w") is m.b.w
    assert m.get_buffer("a.stat") is m.a.stat
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        m.get_submodule("a.zz")


# ---------------------------------------------------------------------- state dict
def test_state_dict_contents_and_detach():
    m = Tree()
    sd = m.state_dict()
    assert list(sd) == ["bias", "a.w", "a.stat", "b.w", "b.stat"]
    assert not sd["a.w"].requires_grad
    assert sd["a.w"].numpy() is m.a.w._data or np.shares_memory(sd["a.w"].numpy(), m.a.w._data)
    kept = m.state_dict(keep_vars=True)
    assert kept["a.w"] is m.a.w
    assert list(m.a.state_dict(prefix="x.")) == ["x.w", "x.stat"]


def test_load_state_dict_round_trip_copies_in_place():
    src, dst = Tree(), Tree()
    with dt.no_grad():
        src.a.w.numpy(force=True)[:] = [3.0, 4.0]
        src.b.stat.numpy()[:] = 7.0
    w_before = dst.a.w
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.a.w is w_before
    np.testing.assert_array_equal(dst.a.w.detach().numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(dst.b.stat.numpy(), [7.0, 7.0, 7.0])


def test_load_state_dict_strict_errors_name_keys_and_sizes():
    m = Tree()
    sd = m.state_dict()
    del sd["bias"]
    sd["extra.key"] = dt.ones(1)
    sd["a.w"] = dt.ones(5)
    with pytest.raises(RuntimeError) as err:
        m.load_state_dict(sd)
    msg = str(err.value)
    assert msg.startswith("Error(s) in loading state_dict for Tree:\n\t")
    assert 'Missing key(s) in state_dict: "bias".' in msg
    assert 'Unexpected key(s) in state_dict: "extra.key".' in msg
    assert (
        "size mismatch for a.w: copying a param with shape disttorch.Size([5]) from "
        "checkpoint, the shape in current model is disttorch.Size([2])."
    ) in msg
    sd["a.w"] = dt.ones(2)
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra.key"]


def test_load_state_dict_non_strict_reports_and_assign():
    m = Tree()
    sd = m.state_dict()
    del sd["b.w"]
    sd["bogus"] = dt.ones(1)
    m.load_state_dict(sd, strict=False)
    sd2 = {k: v.clone() if hasattr(v, "clone") else v for k, v in m.state_dict().items()}
    new_w = dt.tensor([9.0, 9.0])
    sd2["a.w"] = new_w
    m.load_state_dict(sd2, assign=True)
    assert isinstance(m.a.w, nn.Parameter) and m.a.w.requires_grad
    np.testing.assert_array_equal(m.a.w.detach().numpy(), [9.0, 9.0])


def test_loading_into_meta_parameters_warns_unless_assigned():
    with dt.device("meta"):
        m = nn.Linear(1, 2)
    sd = nn.Linear(1, 2).state_dict()
    with pytest.warns(UserWarning, match="for (weight|bias): copying from a non-meta parameter") as caught:
        m.load_state_dict(sd)
    assert len(caught) == 2 and m.weight.is_meta  # weight and bias, each a no-op
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.load_state_dict(sd, assign=True)
    assert not m.weight.is_meta


def test_non_persistent_buffer_in_checkpoint_is_unexpected():
    m = Leaf()
    sd = m.state_dict()
    sd["scratch"] = dt.zeros(1)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "scratch"'):
        m.load_state_dict(sd)


# ---------------------------------------------------------------------- modes, grads, dtype
def test_train_eval_propagate():
    m = nn.Sequential(Tree(), nn.Sequential(Leaf()))
    assert m.eval() is m
    assert all(not mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    with pytest.raises(ValueError, match="boolean"):
        m.train("yes")


def test_zero_grad_and_requires_grad_():
    m = Leaf()
    m(dt.ones(2)).sum().backward()
    np.testing.assert_array_equal(m.w.grad.numpy(), [1.0, 1.0])
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(m.w.grad.numpy(), [0.0, 0.0])
    m.zero_grad()
    assert m.w.grad is None
    m.requires_grad_(False)
    assert not m.w.requires_grad


def test_apply_visits_children_first():
    m = Tree()
    order = []
    m.apply(lambda mod: order.append(type(mod).__name__))
    assert order == ["Leaf", "Leaf", "Tree"]


def test_dtype_conversion_keeps_parameter_identity():
    m = Tree()
    w = m.a.w
    m.a.w.grad = dt.ones(2)
    m.double()
    assert m.a.w is w and w.dtype == dt.float64 and w.grad.dtype == dt.float64
    assert m.a.stat.dtype == dt.float64
    m.to(dt.float32)
    assert w.dtype == dt.float32
    m.to("cpu")
    with pytest.raises(TypeError, match="floating point"):
        m.to(dt.int64)


# ---------------------------------------------------------------------- hooks
def test_forward_pre_hook_and_hook_replace_values_and_remove():
    m = Leaf()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.sum().item()) or out + 1)
    out = m(dt.ones(2))
    np.testing.assert_array_equal(out.detach().numpy(), [3.0, 3.0])
    assert calls == [4.0]
    h1.remove()
    h2.remove()
    np.testing.assert_array_equal(m(dt.ones(2)).detach().numpy(), [1.0, 1.0])


def test_hooks_with_kwargs_and_prepend_order():
    class K(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    m = K()
    order = []
    m.register_forward_hook(lambda mod, a, o: order.append("second"))
    m.register_forward_hook(lambda mod, a, o: order.append("first"), prepend=True)
    m.register_forward_pre_hook(lambda mod, a, kw: (a, {"scale": 10.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, a, kw, o: o + kw["scale"], with_kwargs=True)
    out = m(dt.ones(1), scale=2.0)
    assert out.item() == 20.0 and order == ["first", "second"]


def test_full_backward_hook_sees_and_replaces_grads():
    m = Leaf()
    seen = {}

    def hook(mod, grad_input, grad_output):
        seen["in"], seen["out"] = grad_input, grad_output
        return (grad_input[0] * 10,)

    m.register_full_backward_hook(hook)
    x = dt.tensor([1.0, 2.0], requires_grad=True)
    (m(x) * dt.tensor([1.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(seen["out"][0].numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(seen["in"][0].numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 30.0])
    np.testing.assert_array_equal(m.w.grad.numpy(), [1.0, 6.0])


def test_full_backward_pre_hook_replaces_grad_output():
    m = Leaf()
    seen = []
    m.register_full_backward_pre_hook(lambda mod, go: seen.append(go[0].numpy().copy()) or (go[0] * 2,))
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].numpy().copy()))
    m(dt.ones(2)).sum().backward()  # the input does not require grad: grad_input is (None,)
    np.testing.assert_array_equal(seen[0], [1.0, 1.0])
    np.testing.assert_array_equal(seen[1], [2.0, 2.0])
    np.testing.assert_array_equal(m.w.grad.numpy(), [2.0, 2.0])


def test_full_backward_hook_without_input_grads_warns_and_takes_no_gradients():
    """No input requires grad: the hook fires with grad_input (None,), PyTorch's warning names
    the line that called backward, and a hook returning a gradient is refused."""
    m = Leaf()
    m.register_full_backward_hook(lambda mod, gi, go: (None,))
    with pytest.warns(UserWarning, match="no inputs require gradients") as record:
        m(dt.ones(2)).sum().backward()
    assert record[0].filename == __file__
    m.register_full_backward_hook(lambda mod, gi, go: (go[0],))
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="should always return None"):
        m(dt.ones(2)).sum().backward()


# ---------------------------------------------------------------------- repr, dir, copies
def test_nested_repr():
    m = nn.Sequential(Leaf(), nn.Sequential(Leaf(3)))
    assert repr(m) == ("Sequential(\n  (0): Leaf(n=2)\n  (1): Sequential(\n    (0): Leaf(n=3)\n  )\n)")
    assert repr(nn.Module()) == "Module()"
    ml = nn.ModuleList([Leaf(), Leaf(), Leaf(3)])
    assert repr(ml) == "ModuleList(\n  (0-1): 2 x Leaf(n=2)\n  (2): Leaf(n=3)\n)"


def test_dir_lists_registered_names():
    names = dir(Tree())
    assert {"a", "b", "bias", "forward", "state_dict"} <= set(names)


def test_deepcopy_and_pickle_preserve_structure_and_sharing():
    m = Tree()
    m.b.w = m.a.w
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(clone.a.w) is nn.Parameter and clone.a.w is not m.a.w
        assert clone.a.w is clone.b.w
        assert list(clone.state_dict()) == list(m.state_dict())
        out = clone(dt.ones(2))
        np.testing.assert_array_equal(out.detach().numpy(), [1.0, 1.0])


# ---------------------------------------------------------------------- containers
def test_sequential_indexing_slicing_and_editing():
    a, b, c = Leaf(), Leaf(), Leaf()
    s = nn.Sequential(a, b)
    assert s[0] is a and s[-1] is b and len(s) == 2
    with pytest.raises(IndexError, match="index 2 is out of range"):
        s[2]
    s.append(c)
    assert list(s) == [a, b, c]
    sl = s[1:]
    assert isinstance(sl, nn.Sequential) and list(sl._modules) == ["1", "2"]
    del s[0]
    assert list(s._modules) == ["0", "1"] and s[0] is b
    s.insert(0, a)
    assert list(s) == [a, b, c]
    s.extend([Leaf()])
    assert len(s) == 4
    s[3] = a
    assert s[3] is a
    named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert named.first is a and list(named._modules) == ["first", "second"]
    out = nn.Sequential(Leaf(), Leaf())(dt.tensor([2.0, 3.0]))
    np.testing.assert_array_equal(out.detach().numpy(), [2.0, 3.0])


def test_module_list_and_dict():
    ml = nn.ModuleList([Leaf(), Leaf()])
    ml.append(Leaf(3))
    ml += [Leaf()]
    assert len(ml) == 4 and ml[2].w.shape == (3,)
    assert len(list(ml.parameters())) == 4
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    ml.insert(0, Leaf(5))
    assert ml[0].w.shape == (5,) and len(ml) == 5
    del ml[0]
    assert ml[2].w.shape == (3,)
    md = nn.ModuleDict({"x": Leaf(), "y": Leaf(3)})
    md["z"] = Leaf()
    assert list(md) == ["x", "y", "z"] and "y" in md and len(md) == 3
    assert [n for n, _ in md.named_parameters()] == ["x.w", "y.w", "z.w"]
    md.pop("x")
    assert list(md.keys()) == ["y", "z"]
    copy_of = nn.ModuleDict(md)
    assert list(copy_of) == ["y", "z"] and copy_of["y"] is md["y"]


def test_parameter_list_and_dict():
    pl = nn.ParameterList([dt.ones(2), nn.Parameter(dt.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl)
    pl.append(dt.ones(1))
    assert len(pl) == 3 and [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert "(0): Parameter containing: [disttorch.float32 of size 2]" in repr(pl)
    pd = nn.ParameterDict({"a": dt.ones(2)})
    pd["b"] = nn.Parameter(dt.zeros(1))
    assert list(pd) == ["a", "b"] and isinstance(pd["a"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b"]
    assert list(nn.ParameterDict(pd)) == ["a", "b"]
    del pd["a"]
    assert list(pd.keys()) == ["b"] and len(list(pd.parameters())) == 1


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
def test_sequential_repr_and_state_dict_keys_match(torch):
    def build(nn, lib):
        return nn.Sequential(
            nn.Linear(2, 3),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Flatten(),
            nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)]),
            nn.Embedding(4, 2, padding_idx=0),
            nn.Identity(),
            nn.ModuleDict({"act": nn.GELU(), "loss": nn.BCEWithLogitsLoss(pos_weight=lib.ones(2))}),
            nn.ParameterList([nn.Parameter(lib.zeros(2, 3)), nn.Parameter(lib.zeros(1))]),
            nn.ParameterDict({"x": nn.Parameter(lib.zeros(2))}),
            nn.ParameterDict(
                {"x": nn.Parameter(lib.zeros(2)), "y": nn.Parameter(lib.zeros(2, dtype=lib.float64))}
            ),
        )

    tm, dm = build(torch.nn, torch), build(nn, dt)
    assert repr(dm).replace("disttorch", "torch") == repr(tm)
    assert list(dm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in dm.named_modules()] == [n for n, _ in tm.named_modules()]


@pytest.mark.parity
def test_load_state_dict_error_message_matches(torch):
    t, d = torch.nn.Linear(2, 3), nn.Linear(2, 3)
    bad_t = {"weight": torch.zeros(3, 4), "extra": torch.zeros(1)}
    bad_d = {"weight": dt.zeros(3, 4), "extra": dt.zeros(1)}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(bad_t)
    with pytest.raises(RuntimeError) as de:
        d.load_state_dict(bad_d)
    assert str(de.value).replace("disttorch", "torch") == str(te.value)


def test_global_module_forward_hooks_run_first_and_are_removable():
    from disttorch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    calls = []
    lin = nn.Linear(2, 2)
    lin.register_forward_pre_hook(lambda m, a: calls.append("own pre"))
    lin.register_forward_hook(lambda m, a, o: calls.append("own post"))
    pre = register_module_forward_pre_hook(lambda m, a: calls.append(("pre", type(m).__name__)))
    post = register_module_forward_hook(lambda m, a, kw, o: o * 0, with_kwargs=True)
    try:
        out = lin(dt.ones(1, 2))
        assert calls == [("pre", "Linear"), "own pre", "own post"] and float(out.abs().sum()) == 0.0
    finally:
        pre.remove()
        post.remove()
    calls.clear()
    assert float(nn.Linear(2, 2)(dt.ones(1, 2)).abs().sum()) > 0 and calls == []


def test_a_deep_copied_modules_hook_handle_removes_the_copys_hook():
    """A lazy layer's one-time pre-hook removes itself through its handle (PyG's lazy
    ``Linear``); in a deep copy the handle removes the copy's hook, not the original's."""

    class Lazy(dt.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0
            self._hook = self.register_forward_pre_hook(self.init_once)

        def init_once(self, module, args):
            self.calls += 1
            self._hook.remove()
            del self._hook

        def forward(self, x):
            return x

    a = Lazy()
    b = copy.deepcopy(a)
    assert b._hook.hooks_dict_ref() is b._forward_pre_hooks
    for m in (b, b, a, a):
        m(dt.ones(1))
    assert (a.calls, b.calls, len(a._forward_pre_hooks), len(b._forward_pre_hooks)) == (1, 1, 0, 0)


@pytest.mark.parity
def test_with_kwargs_hook_ids_are_kept_as_pytorchs(torch):
    """``_forward_hooks_with_kwargs`` is an id -> True dict, emptied by the handle's removal."""
    seen = []
    for lib in (dt, torch):
        layer = lib.nn.Linear(1, 1)
        handle = layer.register_forward_hook(lambda m, a, k, o: None, with_kwargs=True, always_call=True)
        pre = layer.register_forward_pre_hook(lambda m, a, k: None, with_kwargs=True)
        kept = [
            dict(d) == {h.id: True}
            for d, h in (
                (layer._forward_hooks_with_kwargs, handle),
                (layer._forward_hooks_always_called, handle),
                (layer._forward_pre_hooks_with_kwargs, pre),
            )
        ]
        text = repr(layer._forward_hooks_with_kwargs).replace(str(handle.id), "N")
        handle.remove(), pre.remove()
        seen.append(
            (kept, text, len(layer._forward_hooks_with_kwargs), len(layer._forward_pre_hooks_with_kwargs))
        )
    assert seen[0] == seen[1] == ([True, True, True], "OrderedDict([(N, True)])", 0, 0)


@pytest.mark.parity
def test_module_dicts_are_plain_dicts_as_pytorchs(torch):
    """``_parameters``/``_buffers``/``_modules`` print as PyTorch's (chenyuntc's book prints them)."""

    def shown(lib):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.BatchNorm1d(1))
        seq.insert(0, lib.nn.ReLU())
        mods = lib.nn.ModuleList([lib.nn.ReLU()])
        mods.insert(0, lib.nn.Tanh())
        return [repr(seq._modules), repr(seq[1]._parameters), repr(seq[2]._buffers), repr(mods._modules)]

    assert shown(dt) == shown(torch)


def _call_impl_cases(lib):
    """(``__call__`` is ``_wrapped_call_impl``, the direct ``_call_impl`` with a hook, an
    override of ``_call_impl`` seeing the call)."""
    seen = []

    class Logged(lib.nn.Identity):
        def _call_impl(self, *args, **kwargs):
            seen.append(len(args))
            return super()._call_impl(*args, **kwargs)

    m = lib.nn.Identity()
    m.register_forward_hook(lambda mod, inp, out: out * 2)
    direct = m._call_impl(lib.ones(1)).tolist()
    Logged()(lib.ones(1))
    return lib.nn.Module.__call__ is lib.nn.Module._wrapped_call_impl, direct, seen


def test_call_goes_through_call_impl():
    assert _call_impl_cases(dt) == (True, [2.0], [1])


@pytest.mark.parity
def test_call_impl_as_pytorch(torch):
    assert _call_impl_cases(torch) == _call_impl_cases(dt)
