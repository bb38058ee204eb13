"""torch.utils.benchmark: Timer's measurements (timeit, blocked and adaptive autorange, thread
count), Measurement's statistics and repr, Compare's tables, and the layout against PyTorch."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.utils import benchmark


def fake_measurement(times, number=10, **labels):
    spec = benchmark.TaskSpec(stmt=labels.pop("stmt", "x + 1"), setup="pass", **labels)
    return benchmark.Measurement(number, [t * number for t in times], spec)


def test_timer_runs_the_statement_in_its_globals_with_its_thread_count():
    seen = []
    t = benchmark.Timer("seen.append(dt.get_num_threads())", globals={"seen": seen, "dt": dt}, num_threads=1)
    m = t.timeit(5)
    assert m.number_per_run == 5 and len(m.raw_times) == 1 and m.stmt == "seen.append(dt.get_num_threads())"
    assert seen == [1] * 7  # two warm-up runs, then five
    m = t.blocked_autorange(min_run_time=0.01)
    assert sum(m.raw_times) >= 0.01 and all(s == 1 for s in seen)
    blocks = []
    m = benchmark.Timer("sum(range(50))").adaptive_autorange(
        max_run_time=0.05, callback=lambda n, s: blocks.append(n)
    )
    assert len(blocks) == len(m.raw_times) >= 1 and m.median > 0
    with pytest.raises(ValueError, match="only a `str` stmt"):
        benchmark.Timer(lambda: None)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat()


def test_timer_namespace_holds_torch_unless_globals_name_it():
    seen = []
    benchmark.Timer("seen.append(torch)", "x = torch.ones(2)", globals={"seen": seen}).timeit(1)
    assert seen[-1] is dt  # the library, as PyTorch's Timer adds ``torch``
    benchmark.Timer("seen.append(torch)", globals={"seen": seen, "torch": np}).timeit(1)
    assert seen[-1] is np


def test_block_size_weighs_the_loop_cost_without_runs():
    clock, sizes = [0.0], []  # a clock that only the statement moves: 1 ms a run, the loop costs 0
    benchmark.Timer("clock[0] += 1e-3", globals={"clock": clock}, timer=lambda: clock[0]).blocked_autorange(
        callback=lambda n, s: sizes.append(n), min_run_time=0.01
    )
    assert sizes == [1] * 10  # one run already dwarfs the loop (not 100: the cost of one run)


def test_measurement_statistics_and_repr():
    m = fake_measurement([1e-6, 2e-6, 3e-6, 4e-6, 10e-6], label="adds", sub_label="small", description="f32")
    assert m.times == pytest.approx([1e-6, 2e-6, 3e-6, 4e-6, 10e-6])
    assert m.median == pytest.approx(3e-6) and m.mean == pytest.approx(4e-6)
    assert m.iqr == pytest.approx(np.quantile(m.times, 0.75) - np.quantile(m.times, 0.25))
    assert m.title == "adds: small" and m.as_row_name == "small" and m.env == "Unspecified env"
    assert not m.meets_confidence() and m.has_warnings
    lines = repr(m).splitlines()
    assert lines[1:4] == ["adds: small", "f32", "  Median: 3.00 us"]
    assert lines[5] == "  5 measurements, 10 runs per measurement, 1 thread"
    assert lines[6].startswith("  WARNING: Interquartile range is 66.7% of the median measurement.")
    one = fake_measurement([2.5e-3], number=3)
    assert repr(one).splitlines()[1:] == ["x + 1", "  2.50 ms", "  1 measurement, 3 runs , 1 thread"]
    merged = benchmark.Measurement.merge([one, fake_measurement([3.5e-3], number=1)])
    assert (
        len(merged) == 1
        and merged[0].number_per_run == 1
        and merged[0].times == pytest.approx([2.5e-3, 3.5e-3])
    )
    assert benchmark.select_unit(4.2e-5) == ("us", 1e-6) and benchmark.trim_sigfig(
        3.14159, 2
    ) == pytest.approx(3.1)


def test_compare_lays_out_rows_columns_and_thread_groups():
    results = [
        fake_measurement([t * 1e-6] * 4, label="ops", sub_label=s, description=d, num_threads=n)
        for n in (1, 2)
        for s, t in (("add", 1.5), ("matmul", 12.25))
        for d in ("f32", "f64")
    ]
    lines = str(benchmark.Compare(results)).splitlines()
    assert lines[0].startswith("[") and " ops " in lines[0] and lines[0].endswith("]")
    assert lines[1].split() == ["|", "f32", "|", "f64"]
    assert lines[2].startswith("1 threads: ---") and lines[5].startswith("2 threads: ---")
    assert lines[3].split() == ["add", "|", "1.5", "|", "1.5"] and lines[4].split()[2] == "12.2"
    assert lines[-1] == "Times are in microseconds (us)."
    with pytest.raises(ValueError, match="Measurement"):
        benchmark.Compare([1.0])


@pytest.mark.parity
def test_repr_and_table_match_pytorch(torch):
    from torch.utils import benchmark as theirs

    def build(lib):
        def one(times, **labels):
            spec = lib.TaskSpec(stmt="x + 1", setup="y = 2", **labels)
            return lib.Measurement(10, [t * 10 for t in times], spec)

        ms = [
            one([1e-6, 1.1e-6, 1.2e-6, 1.05e-6], label="L", sub_label=s, description=d)
            for s in "ab"
            for d in "cd"
        ]
        return ms, lib.Compare(ms)

    (ours, our_table), (their, their_table) = build(benchmark), build(theirs)
    for a, b in zip(ours, their):
        assert repr(a).splitlines()[1:] == repr(b).splitlines()[1:]
        assert a.significant_figures == b.significant_figures
    assert str(our_table) == str(their_table)
    our_table.trim_significant_figures()
    their_table.trim_significant_figures()
    assert str(our_table) == str(their_table)


def _styled_tables(lib):
    """Two thread counts, two columns, one noisy row: coloured by column, by row, and with
    the high-variance cells marked."""

    def one(times, **labels):
        return lib.Measurement(10, [t * 10 for t in times], lib.TaskSpec(stmt="f(x)", setup="pass", **labels))

    ms = []
    for n in (1, 2):
        for s, t in (("a", 3.2e-6), ("b", 4.1e-6), ("c", 12.7e-6)):
            for d, k in (("mul", 1.0), ("bmm", 2.3)):
                v = t * k * n
                times = [v, 2 * v, 0.5 * v, 3 * v, 0.3 * v] if s == "b" else [v, 1.02 * v, 0.97 * v, 1.2 * v]
                ms.append(one(times, label="dot", sub_label=s, description=d, num_threads=n))
    tables = []
    for style in ("colorize", "rowwise", "highlight_warnings"):
        compare = lib.Compare(ms)
        compare.trim_significant_figures()
        if style == "highlight_warnings":
            compare.highlight_warnings()
        else:
            compare.colorize(rowwise=style == "rowwise")
        tables.append(str(compare))
    return tables


def test_colorize_and_highlight_warnings():
    columns, rows, marked = _styled_tables(benchmark)
    assert "\033[92m\033[1m" in columns and columns != rows  # the best of a column, bold green
    assert "(! " in marked and marked.rstrip().endswith("where XX is the IQR / median * 100.")


@pytest.mark.parity
def test_colorize_and_highlight_warnings_match_pytorch(torch):
    from torch.utils import benchmark as theirs

    assert _styled_tables(benchmark) == _styled_tables(theirs)


def test_measurement_repr_names_pytorchs_class_under_the_alias(monkeypatch):
    """A program that prints a ``Measurement`` under the ``import torch`` alias reads
    PyTorch's first line; without it, disttorch's own class."""
    import sys

    import disttorch

    m = fake_measurement([1e-6])
    assert repr(m).startswith("<disttorch.utils.benchmark.common.Measurement object at 0x")
    monkeypatch.setitem(sys.modules, "torch", disttorch)
    assert repr(m).startswith("<torch.utils.benchmark.utils.common.Measurement object at 0x")


def _fuzzed_cases(lib):
    """Six cases of a fuzzer with each kind of parameter, strides, permuted layouts, an
    integer tensor and a constraint: parameters, shapes, strides, contiguity and values."""
    b = lib.utils.benchmark
    fuzzer = b.Fuzzer(
        parameters=[
            b.FuzzedParameter("k0", minval=1, maxval=300, distribution="loguniform"),
            b.FuzzedParameter("k1", minval=2, maxval=40, distribution="uniform"),
            b.FuzzedParameter("s", minval=1, maxval=3, distribution="uniform"),
            b.FuzzedParameter("p", minval=0.0, maxval=1.0, distribution="uniform"),
        ],
        tensors=[
            b.FuzzedTensor("x", size=("k0", "k1"), steps=(1, "s"), min_elements=16, max_elements=4000),
            b.FuzzedTensor("i", size=("k1", 3, "k0"), probability_contiguous=0.2, dtype=lib.int64),
        ],
        constraints=[lambda p: p["k0"] != p["k1"]],
        seed=7,
    )
    cases = []
    for tensors, properties, params in fuzzer.take(6):
        x, i = tensors["x"], tensors["i"]
        cases.append(
            (
                params,
                x.shape,
                x.stride(),
                i.stride(),
                properties["i"]["is_contiguous"],
                x.tolist(),
                i.tolist(),
            )
        )
    return cases, fuzzer.rejection_rate


def test_fuzzer_draws_parameters_and_tensors_within_their_bounds():
    cases, rejected = _fuzzed_cases(dt)
    for params, shape, *_ in cases:
        assert 1 <= params["k0"] <= 300 and params["k0"] != params["k1"] and 16 <= shape.numel() <= 4000
    assert 0 < rejected < 1 and _fuzzed_cases(dt) == (cases, rejected)  # the seed fixes everything
    fuzzer = benchmark.Fuzzer(
        parameters=[
            benchmark.FuzzedParameter("n", minval=4, maxval=9, distribution="uniform"),
            benchmark.FuzzedParameter("m", distribution={1: 0.5, benchmark.ParameterAlias("n"): 0.5}),
        ],
        tensors=[benchmark.FuzzedTensor("y", size=("m",))],
        seed=0,
    )
    drawn = [(p["n"], p["m"]) for _, _, p in fuzzer.take(8)]
    assert {m for _, m in drawn} - {1} and all(m in (1, n) for n, m in drawn)  # sometimes n, else 1
    with pytest.raises(AssertionError, match="normalized"):
        benchmark.FuzzedParameter("m", distribution={1: 0.5})


@pytest.mark.parity
def test_fuzzer_matches_pytorch(torch):
    assert _fuzzed_cases(dt) == _fuzzed_cases(torch)
