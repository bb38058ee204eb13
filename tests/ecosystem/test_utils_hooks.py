"""``torch.utils.hooks``: ``RemovableHandle`` is the handle modules and optimisers return."""

from __future__ import annotations

import pickle
import warnings
from collections import OrderedDict

import pytest

import disttorch as dt
from disttorch.utils.hooks import RemovableHandle, unserializable_hook, warn_if_has_hooks


def test_handle_removes_its_entry_and_the_extra_dicts():
    hooks, extra = OrderedDict(), OrderedDict()
    h = RemovableHandle(hooks, extra_dict=[extra])
    hooks[h.id], extra[h.id] = "hook", "info"
    assert RemovableHandle(hooks).id == h.id + 1  # ids come from one shared counter
    h.remove()
    h.remove()  # a second remove does nothing
    assert h.id not in hooks and not extra


def test_handle_is_a_context_manager_and_pickles():
    hooks = OrderedDict()
    with RemovableHandle(hooks) as h:
        hooks[h.id] = "hook"
    assert not hooks
    again = pickle.loads(pickle.dumps(RemovableHandle(OrderedDict())))
    assert RemovableHandle.next_id > again.id
    again.remove()


def test_modules_and_optimisers_return_it():
    lin = dt.nn.Linear(2, 2)
    h = lin.register_forward_hook(lambda *a: None)
    assert isinstance(h, RemovableHandle) and h.id in lin._forward_hooks
    h.remove()
    assert not lin._forward_hooks
    opt = dt.optim.SGD(lin.parameters(), lr=0.1)
    assert isinstance(opt.register_step_post_hook(lambda *a: None), RemovableHandle)


def test_tensor_and_node_hooks_return_it():
    w = dt.ones(2, requires_grad=True)
    y = w * 2
    handles = [w.register_hook(lambda g: g * 3), w.register_post_accumulate_grad_hook(lambda p: None)]
    handles += [y.grad_fn.register_hook(lambda *a: None), y.grad_fn.register_prehook(lambda *a: None)]
    assert all(isinstance(h, RemovableHandle) for h in handles)
    assert [h.id for h in handles] == list(range(handles[0].id, handles[0].id + 4))
    with handles[0]:
        (w * 1).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    w.grad = None
    (w * 1).sum().backward()  # removed on leaving the with block
    assert w.grad.tolist() == [1.0, 1.0]
    copy = pickle.loads(pickle.dumps(handles[1]))
    copy.remove()  # a plain handle without its hooks: removes nothing
    assert type(copy) is RemovableHandle and copy.id == handles[1].id


def test_warn_if_has_hooks_skips_unserializable_hooks():
    t = dt.ones(2, requires_grad=True)
    t.register_hook(unserializable_hook(lambda g: g))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_has_hooks(t)
    t.register_hook(lambda g: g)
    with pytest.warns(UserWarning, match="will not be serialized"):
        warn_if_has_hooks(t)


@pytest.mark.parity
def test_same_names_as_pytorch(torch):
    import disttorch.utils.hooks as ours

    assert {"RemovableHandle", "unserializable_hook", "warn_if_has_hooks"} <= set(dir(torch.utils.hooks))
    assert set(ours.__all__) <= set(dir(torch.utils.hooks))
