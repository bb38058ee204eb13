"""What a program sees of a ``FullyShardedDataParallel`` model with an ``auto_wrap_policy``,
side by side with PyTorch's (gloo, CPU ranks): the nested wrappers (``named_modules``,
``print``), parameter names with every ``_fsdp_wrapped_module.`` prefix, state-dict keys
under each state-dict type, names inside ``summon_full_params``, the dtype of
``clip_grad_norm_``'s norm, and the optimiser state dicts' keys and order."""

from __future__ import annotations

import warnings
from importlib import import_module

import pytest

from dist_helpers import run_ranks


def _local(t):
    """A state tensor's memory (ours are laid out as their DTensor parameters)."""
    return t.to_local() if hasattr(t, "to_local") else t


def _layout_worker(rank: int, world: int, lib: str) -> dict:
    torch = import_module(lib)
    dist = import_module(f"{lib}.distributed")
    fsdp = import_module(f"{lib}.distributed.fsdp")
    FSDP, StateDictType = fsdp.FullyShardedDataParallel, fsdp.StateDictType
    policy = import_module(f"{lib}.distributed.fsdp.wrap").ModuleWrapPolicy
    nn = torch.nn
    dist.init_process_group("gloo") if lib == "torch" else dist.init_process_group()
    warnings.simplefilter("ignore")

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin, self.ln = nn.Linear(5, 5), nn.LayerNorm(5)

        def forward(self, x):
            return self.ln(self.lin(x))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb, self.blocks, self.head = (
                nn.Linear(3, 5),
                nn.ModuleList([Block(), Block()]),
                nn.Linear(5, 2),
            )

        def forward(self, x):
            x = self.emb(x)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    out = {}
    for use_orig_params in (False, True):
        torch.manual_seed(0)
        model = FSDP(
            Net(),
            auto_wrap_policy=policy({Block}),
            use_orig_params=use_orig_params,
            device_id=torch.device("cpu"),
        )
        seen = out[use_orig_params] = {"repr": repr(model)}
        seen["modules"] = [(n, type(m).__name__) for n, m in model.named_modules()]
        seen["wrappers"] = len(FSDP.fsdp_modules(model))
        if use_orig_params:  # PyTorch's default has one flat parameter per unit (not ours)
            seen["params"] = [n for n, _ in model.named_parameters()]
        model(torch.randn(4, 3)).sum().backward()
        seen["norm"] = (
            str(model.clip_grad_norm_(1.0).dtype).split(".")[-1],
            round(float(model.clip_grad_norm_(1.0)), 4),
        )
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        opt.step()
        for kind in ("FULL_STATE_DICT", "SHARDED_STATE_DICT", "LOCAL_STATE_DICT"):
            with FSDP.state_dict_type(model, StateDictType[kind]):
                seen[kind] = {k: type(v).__name__ for k, v in model.state_dict().items()}
        with FSDP.summon_full_params(model):
            seen["summoned"] = [(n, tuple(p.shape)) for n, p in model.named_parameters()]
        osd = FSDP.optim_state_dict(model, opt)
        seen["osd"] = (list(osd["state"]), osd["param_groups"][0]["params"], list(osd["state"]["emb.weight"]))
        full = FSDP.full_optim_state_dict(model, opt)
        seen["full_osd"] = list(full["state"]) if full else full
        before = opt.state_dict()["state"]
        opt.load_state_dict(FSDP.scatter_full_optim_state_dict(full or None, model, optim=opt))
        after = opt.state_dict()["state"]
        local = [(_local(before[i]["exp_avg"]), _local(after[i]["exp_avg"])) for i in before]
        seen["scattered"] = bool(local) and all(torch.equal(a, b) for a, b in local)
    dist.destroy_process_group()
    return out


@pytest.mark.parity
def test_auto_wrapped_model_looks_as_pytorchs(torch):
    ours = run_ranks(_layout_worker, 2, args=("disttorch",), timeout=120)
    theirs = run_ranks(_layout_worker, 2, args=("torch",), timeout=120)
    for rank in range(2):
        for use_orig_params in (False, True):
            a, b = ours[rank][use_orig_params], theirs[rank][use_orig_params]
            for key in b.keys() - {"scattered"}:  # ours: checked below
                assert a[key] == b[key], (rank, use_orig_params, key)
    seen = ours[0][True]
    assert (
        seen["wrappers"] == 3
        and ("_fsdp_wrapped_module.blocks.0", "FullyShardedDataParallel") in seen["modules"]
    )
    assert "_fsdp_wrapped_module.blocks.1._fsdp_wrapped_module.ln.bias" in seen["params"]
    assert ours[1][True]["full_osd"] == {}  # rank0_only
    assert all(out[u]["scattered"] for out in ours for u in (False, True))
