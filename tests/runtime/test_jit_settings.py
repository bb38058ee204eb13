"""``torch.jit``'s executor and fuser settings keep the state a program sets, and
``TracerWarning`` is the class programs filter: each answers as PyTorch's."""

import warnings

import pytest

import disttorch as dt


def test_optimized_execution_and_fuser_are_context_managers_that_restore(torch):
    for lib in (dt, torch):
        with lib.jit.optimized_execution(False):
            assert lib.jit.onednn_fusion_enabled() is False
        with lib.jit.fuser("fuser3"):
            assert lib.jit.onednn_fusion_enabled() is True
        assert lib.jit.onednn_fusion_enabled() is False
        with pytest.raises(Exception, match=r"unrecognized fuser option \(name: bad\)"):
            with lib.jit.fuser("bad"):
                pass


def test_set_fusion_strategy_returns_the_previous_one_and_checks_its_kinds(torch):
    for lib in (dt, torch):
        first = lib.jit.set_fusion_strategy([("STATIC", 3)])
        assert lib.jit.set_fusion_strategy(first) == [("STATIC", 3)]
        with pytest.raises(ValueError, match="only supported 'STATIC' or 'DYNAMIC', got: X"):
            lib.jit.set_fusion_strategy([("X", 1)])
    assert dt.jit.set_fusion_strategy(first) == torch.jit.set_fusion_strategy(first)


def test_enable_onednn_fusion_is_remembered():
    dt.jit.enable_onednn_fusion(True)
    assert dt.jit.onednn_fusion_enabled()
    dt.jit.enable_onednn_fusion(False)
    assert not dt.jit.onednn_fusion_enabled()


def test_tracer_warning_is_a_warning_class_programs_can_filter():
    assert issubclass(dt.jit.TracerWarning, Warning)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=dt.jit.TracerWarning)
        warnings.warn("shape may change", dt.jit.TracerWarning, stacklevel=1)
    assert seen == []
