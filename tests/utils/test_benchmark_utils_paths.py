"""``torch.utils.benchmark.utils.{common,timer,compare,fuzzer}``: PyTorch's module paths for the
benchmark classes import here too, and name the same classes."""

import disttorch.utils.benchmark as bm
from disttorch.utils.benchmark.utils.common import Measurement, TaskSpec
from disttorch.utils.benchmark.utils.compare import Compare
from disttorch.utils.benchmark.utils.fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer
from disttorch.utils.benchmark.utils.timer import Language, Timer


def test_pytorch_paths_name_the_same_classes():
    assert (Measurement, TaskSpec, Compare, Timer, Language) == (
        bm.Measurement,
        bm.TaskSpec,
        bm.Compare,
        bm.Timer,
        bm.Language,
    )
    assert (Fuzzer, FuzzedParameter, FuzzedTensor) == (bm.Fuzzer, bm.FuzzedParameter, bm.FuzzedTensor)


def test_a_measurement_made_from_the_pytorch_path():
    m = Measurement(100, [2.5e-4], TaskSpec("x * y", "pass", label="L", sub_label="s", description="d"))
    assert repr(m).splitlines()[-2:] == ["  2.50 us", "  1 measurement, 100 runs , 1 thread"]
