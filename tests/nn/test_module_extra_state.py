"""``Module.get_extra_state``/``set_extra_state``: non-tensor state saved in ``state_dict``
under ``"_extra_state"`` and given back on load, as in PyTorch."""

from __future__ import annotations

import pytest

import disttorch as dt


def _counter_net(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 1)
            self.steps = 0

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

    net = lib.nn.Sequential(Counter())
    return net


@pytest.mark.parity
def test_extra_state_round_trip_and_keys_as_pytorch(torch):
    seen = []
    for lib in (dt, torch):
        src, dst = _counter_net(lib), _counter_net(lib)
        src[0].steps = 7
        sd = src.state_dict()
        result = dst.load_state_dict(sd)
        missing = dst.load_state_dict({k: v for k, v in sd.items() if k != "0._extra_state"}, strict=False)
        with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "0._extra_state"'):
            dst.load_state_dict({k: v for k, v in sd.items() if k != "0._extra_state"})
        plain = lib.nn.Linear(2, 1)
        unexpected = plain.load_state_dict({**plain.state_dict(), "_extra_state": 1}, strict=False)
        seen.append(
            (
                list(sd),
                sd["0._extra_state"],
                dst[0].steps,
                list(result),
                missing.missing_keys,
                unexpected.unexpected_keys,
            )
        )
        assert lib.nn.modules.module._EXTRA_STATE_KEY_SUFFIX == "_extra_state"
        with pytest.raises(RuntimeError, match=r"Module.get_extra_state\(\) that should never be called"):
            plain.get_extra_state()
    assert seen[0] == seen[1]
