"""``torch._C``'s names libraries call and ``torch.__config__``, answering as the CPU build."""

from __future__ import annotations

import pytest

import disttorch as dt


def test_c_names():
    assert dt._C._log_api_usage_once("lib.event") is None
    assert dt._C._get_accelerator() == dt.device("cpu") and dt._C._get_default_device() == "cpu"
    assert dt._C.Generator is dt.Generator
    assert dt._C._disabled_torch_function_impl(dt.add, (), (dt.ones(1), 1)).tolist() == [2.0]


def test_parse_to_reads_to_s_arguments():
    parse = dt._C._nn._parse_to
    assert parse("cpu", dt.float64) == (dt.device("cpu"), dt.float64, False, None)
    assert parse(dt.float16) == (None, dt.float16, False, None)
    assert parse(dt.zeros(1, dtype=dt.int64), True) == (dt.device("cpu"), dt.int64, True, None)
    assert parse(float) == (None, dt.float64, False, None)
    assert parse(device="cpu", dtype=dt.int8, memory_format=dt.channels_last)[3] is dt.channels_last
    with pytest.raises(TypeError, match="invalid combination"):
        parse(dt.float16, True, "x")


def test_config_describes_the_build():
    text = dt.__config__.show()
    assert "USE_MKL=OFF" in text and "USE_CUDA=OFF" in text and "NumPy" in text
    assert f"at::get_num_threads() : {dt.get_num_threads()}" in dt.__config__.parallel_info()


@pytest.mark.parity
def test_parse_to_as_pytorch(torch):
    for make in (lambda t: ("cpu", t.float64), lambda t: (t.float16,), lambda t: (float,)):
        ours, theirs = dt._C._nn._parse_to(*make(dt)), torch._C._nn._parse_to(*make(torch))
        assert [str(x).replace("disttorch", "torch") for x in ours] == [str(x) for x in theirs]
    assert str(torch._C._get_accelerator()) == str(dt._C._get_accelerator())
    assert "USE_MKL=" in torch.__config__.show() and hasattr(torch.__config__, "parallel_info")


def test_torch_home(monkeypatch, tmp_path):
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert dt.hub._get_torch_home() == str(tmp_path / "torch")
    monkeypatch.setenv("TORCH_HOME", "~/th")
    assert dt.hub._get_torch_home().endswith("/th") and dt.hub.get_dir().endswith("/th/hub")


@pytest.mark.parity
def test_torch_home_as_pytorch(torch, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TORCH_HOME", raising=False)
    assert dt.hub._get_torch_home() == torch.hub._get_torch_home()


def test_hub_hash_regex_reads_checkpoint_names():
    assert dt.hub.HASH_REGEX.search("resnet18-f37072fd.pth").group(1) == "f37072fd"
    assert dt.hub.HASH_REGEX.search("model.pth") is None


@pytest.mark.parity
def test_hub_hash_regex_as_pytorch(torch):
    assert dt.hub.HASH_REGEX.pattern == torch.hub.HASH_REGEX.pattern


def test_torchscript_ir_types_are_names_for_annotations():
    def symbolic(g: dt._C.Graph, x: dt._C.Value) -> dt._C.Value:  # as ONNX symbolics annotate
        return x

    import inspect

    hints = inspect.get_annotations(symbolic, eval_str=True)  # (what a module without
    # ``from __future__ import annotations`` evaluates when it defines the function)
    assert hints["g"] is dt._C.Graph and hints["return"] is dt._C.Value and isinstance(dt._C.Node, type)
    assert not isinstance(dt.ones(1), (dt._C.Value, dt._C.Block))
    with pytest.raises(RuntimeError, match="no TorchScript IR"):
        dt._C.Graph()
