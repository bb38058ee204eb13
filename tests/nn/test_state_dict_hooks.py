"""Hooks around Module.state_dict / load_state_dict: pre and post, public and private forms,
in-place changes, replaced dicts, handles that remove them, and the caller's dict untouched."""

import pytest

import disttorch as dt
from disttorch import nn


class Renamed(nn.Module):
    """Saves its weight under an old name and loads it back from there (as opacus' DPLSTM)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self._register_state_dict_hook(self._to_old)
        self._register_load_state_dict_pre_hook(self._from_old, with_module=True)

    @staticmethod
    def _to_old(module, sd, prefix, local_metadata):
        return {(k.replace("lin.", "old.") if k.startswith(prefix + "lin.") else k): v for k, v in sd.items()}

    @staticmethod
    def _from_old(module, sd, prefix, *rest):
        for k in [k for k in sd if k.startswith(prefix + "old.")]:
            sd[k.replace("old.", "lin.")] = sd.pop(k)


def test_private_hooks_rename_keys_both_ways():
    m = Renamed()
    sd = m.state_dict()
    assert sorted(sd) == ["old.bias", "old.weight"]
    m2 = Renamed()
    m2.load_state_dict(sd)
    assert dt.equal(m2.lin.weight, m.lin.weight)
    assert sorted(sd) == ["old.bias", "old.weight"]  # the caller's dict is not changed


def test_public_hooks_order_arguments_and_removal():
    seq = nn.Sequential(nn.Linear(2, 2))
    calls = []
    h1 = seq[0].register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(("pre", prefix, keep)))
    h2 = seq.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop("0.bias"))
    with pytest.raises(RuntimeError, match="must return None"):
        seq.state_dict(keep_vars=True)
    h2.remove()
    seq.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.__setitem__("extra", 1) or None)
    sd = seq.state_dict()
    assert calls[-1] == ("pre", "0.", False) and sd["extra"] == 1
    h1.remove()
    seq.state_dict()
    assert len(calls) == 2


def test_load_hooks_see_and_change_keys():
    m = nn.Linear(2, 2)
    seen = []

    def pre(module, sd, prefix, local_metadata, strict, missing, unexpected, errors):
        seen.append((module is m, strict))
        sd.pop("unused", None)

    def post(module, keys):
        keys.missing_keys.clear()  # forgive the missing bias

    m.register_load_state_dict_pre_hook(pre)
    m.register_load_state_dict_post_hook(post)
    w = dt.ones(2, 2)
    result = m.load_state_dict({"weight": w, "unused": dt.zeros(1)})
    assert seen == [(True, True)] and result.missing_keys == [] and result.unexpected_keys == []
    assert dt.equal(m.weight.detach(), w)
    m.register_load_state_dict_post_hook(lambda module, keys: 1)
    with pytest.raises(RuntimeError, match="must return None"):
        m.load_state_dict({"weight": w, "bias": dt.zeros(2)})


class OwnLoader(nn.Module):
    """Overrides ``_load_from_state_dict`` with PyTorch's seven parameters (as torchmetrics'
    ``Metric`` does), and records what it was given."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.seen = []

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        self.seen.append((prefix, dict(local_metadata)))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)


@pytest.mark.parametrize("assign", [False, True])
def test_load_from_state_dict_has_pytorchs_signature(assign):
    src, dst = OwnLoader(), nn.Sequential(OwnLoader())
    sd = {"0." + k: v for k, v in src.state_dict().items()}
    dst.load_state_dict(sd, assign=assign)
    assert dst[0].seen == [("0.", {"assign_to_params_buffers": True} if assign else {})]
    assert dt.equal(dst[0].lin.weight, src.lin.weight)
    if assign:  # the checkpoint's own storage
        assert dst[0].lin.weight.data_ptr() == sd["0.lin.weight"].data_ptr()


def test_load_passes_saved_metadata_to_each_module():
    dst = nn.Sequential(OwnLoader())
    sd = dict(OwnLoader().state_dict())
    sd = type("SD", (dict,), {})({"0." + k: v for k, v in sd.items()})
    sd._metadata = {"0": {"version": 3}}
    dst.load_state_dict(sd)
    assert dst[0].seen == [("0.", {"version": 3})]
