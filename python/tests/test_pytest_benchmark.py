# SPDX-License-Identifier: MIT
"""The fixture ringtrace_benchmark (ringtrace.pytest, docs/benchmark.md): a generated
pytest-benchmark suite run in a fresh interpreter with --ringtrace and
--benchmark-json, each benchmark's slice, the spans nested in it and its extra_info
read back and compared with the trace."""

import json
import os
import subprocess
import sys

import pytest

import ringtrace
from conftest import Trace, nests

pytest.importorskip(
    "pytest_benchmark", reason="no pytest-benchmark (Debian: python3-pytest-benchmark)"
)

SUITE = '''
import pytest
import ringtrace

def work(n):
    with ringtrace.scope("app", "step"):
        with ringtrace.scope("app", "inner"):
            sum(range(n))

def quiet():
    return 1

@pytest.mark.parametrize("n", [10, 1000])
def test_work(ringtrace_benchmark, n):
    ringtrace_benchmark(work, n)

def test_pedantic(ringtrace_benchmark):
    ringtrace_benchmark.pedantic(work, args=(50,), rounds=7, iterations=3, warmup_rounds=2)

def test_quiet(ringtrace_benchmark):
    assert ringtrace_benchmark(quiet) == 1
'''

NAMES = ["test_pedantic", "test_quiet", "test_work[1000]", "test_work[10]"]


def nearest_rank(values, hundredths):
    values = sorted(values)
    return values[max(1, -(-hundredths * len(values) // 100)) - 1]


def run_suite(tmp_path):
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RINGTRACE_")}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    env["RINGTRACE_ON_FULL"] = "block"  # every span: the counts exact
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = package_root
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p",
         "ringtrace.pytest", "--ringtrace=t.json", "--benchmark-json=b.json",
         "--benchmark-max-time=0.02", "--benchmark-min-rounds=5", "test_suite.py"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with open(tmp_path / "b.json", encoding="utf-8") as f:
        return Trace(tmp_path / "t.json"), json.load(f)


def test_each_benchmark_a_slice_with_its_spans_and_statistics(tmp_path):
    trace, report = run_suite(tmp_path)
    assert trace.end_marker()["args"]["dropped"] == 0
    slices = trace.of("X", "benchmark")
    assert sorted(s["name"] for s in slices) == NAMES
    benchmarks = {b["name"]: b for b in report["benchmarks"]}
    assert sorted(benchmarks) == NAMES
    calls = trace.of("X", "pytest", "call")
    spans = trace.of("X", "app")
    placed = 0
    for s in slices:
        b = benchmarks[s["name"]]
        # inside its test's call phase, on its thread
        assert len([c for c in calls if nests(s, c) and c["tid"] == s["tid"]]) == 1
        stats = b["stats"]
        assert s["args"]["rounds"] == stats["rounds"]
        assert s["args"]["iterations"] == stats["iterations"]
        for key in ("min", "median", "mean", "max"):
            assert s["args"][key + "_ns"] == round(stats[key] * 1e9)
        mine = [e for e in spans if e["tid"] == s["tid"] and nests(e, s)]
        placed += len(mine)
        steps = [e for e in mine if e["name"] == "step"]
        inners = [e for e in mine if e["name"] == "inner"]
        for i in inners:
            assert len([t for t in steps if nests(i, t)]) == 1
        info = b["extra_info"]["ringtrace"]
        assert info["dropped"] == 0
        if s["name"] == "test_quiet":
            assert steps == [] and info["spans"] == {}
            continue
        assert sorted(info["spans"]) == ["step", "step>inner"]
        assert len(steps) == len(inners) >= stats["rounds"] * stats["iterations"]
        if s["name"] == "test_pedantic":
            # 2 warmup rounds and 7 rounds of 3, then one call for the result
            assert len(steps) == (2 + 7) * 3 + 1
        for key, events in (("step", steps), ("step>inner", inners)):
            got = info["spans"][key]
            durs = [round(e["dur"] * 1000) for e in events]
            assert got["count"] == len(durs)
            for hundredths, field in ((50, "p50_ns"), (99, "p99_ns")):
                exact = nearest_rank(durs, hundredths)
                assert abs(got[field] - exact) <= 0.01 * exact + 1, (s["name"], key, field)
    assert placed == len(spans)  # no span outside its benchmark
    assert (tmp_path / "t.json.profile.json").exists()


def test_without_a_session_it_is_the_benchmark_alone(tmp_path):
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RINGTRACE_")}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = package_root
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p",
         "ringtrace.pytest", "--benchmark-json=b.json", "--benchmark-max-time=0.01",
         "test_suite.py"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with open(tmp_path / "b.json", encoding="utf-8") as f:
        report = json.load(f)
    assert sorted(b["name"] for b in report["benchmarks"]) == NAMES
    assert all(b["extra_info"] == {} for b in report["benchmarks"])
    assert list(tmp_path.glob("*.json")) == [tmp_path / "b.json"]
