# SPDX-License-Identifier: MIT
"""The pytest plugin (ringtrace.pytest): a generated suite run by pytest in a fresh
interpreter, every test's slice, outcome and phases read back from its trace."""

import os
import subprocess
import sys

import ringtrace
from conftest import Trace, nests

SUITE = '''
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("setup fails")

@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown fails")

def test_pass():
    pass

def test_fail():
    assert False

@pytest.mark.skip(reason="not today")
def test_skip():
    pass

def test_skip_inside():
    pytest.skip("decided in the call")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.mark.xfail(reason="fixed meanwhile")
def test_xpass():
    pass

def test_setup_error(broken):
    pass

def test_teardown_error(bad_teardown):
    pass

def test_fail_and_teardown_error(bad_teardown):
    assert False

@pytest.mark.parametrize("n", [1, 2])
def test_scope(ringtrace_scope, n):
    with ringtrace_scope("step", n=n):
        with ringtrace_scope("inner"):
            pass
'''

# test: (its outcome, the phases' outcomes in order, its line: the first decorator's)
EXPECTED = {
    "test_pass": ("passed", ["passed", "passed", "passed"], 13),
    "test_fail": ("failed", ["passed", "failed", "passed"], 16),
    "test_skip": ("skipped", ["skipped", "passed"], 19),
    "test_skip_inside": ("skipped", ["passed", "skipped", "passed"], 23),
    "test_xfail": ("xfailed", ["passed", "skipped", "passed"], 26),
    "test_xpass": ("xpassed", ["passed", "passed", "passed"], 30),
    "test_setup_error": ("error", ["failed", "passed"], 34),
    "test_teardown_error": ("error", ["passed", "passed", "failed"], 37),
    "test_fail_and_teardown_error": ("failed", ["passed", "failed", "failed"], 40),
    "test_scope[1]": ("passed", ["passed", "passed", "passed"], 43),
    "test_scope[2]": ("passed", ["passed", "passed", "passed"], 43),
}
PHASES_OF = {2: ["setup", "teardown"], 3: ["setup", "call", "teardown"]}


def run_pytest(tmp_path, *args, env_extra=None, python_path=()):
    """python -m pytest on the suite in tmp_path, with this interpreter's package."""
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RINGTRACE_")}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([*python_path, package_root])
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args,
         "test_suite.py"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )


def check_suite(trace):
    """Every test of SUITE once, with its outcome, file, line and phases nested."""
    tests = [e for e in trace.of("X", "pytest") if "::" in e["name"]]
    assert sorted(e["name"] for e in tests) == sorted(f"test_suite.py::{t}" for t in EXPECTED)
    phases = [e for e in trace.of("X", "pytest") if e["name"] in ("setup", "call", "teardown")]
    steps = trace.of("X", "pytest", "step")
    inners = trace.of("X", "pytest", "inner")
    tid = tests[0]["tid"]
    for e in tests + phases + steps + inners:
        assert e["tid"] == tid
    for test in tests:
        outcome, phase_outcomes, line = EXPECTED[test["name"].split("::")[1]]
        assert test["args"] == {"outcome": outcome, "file": "test_suite.py", "line": line}
        inside = sorted((p for p in phases if nests(p, test)), key=lambda p: p["ts"])
        assert [p["name"] for p in inside] == PHASES_OF[len(phase_outcomes)], test["name"]
        assert [p["args"] for p in inside] == [{"outcome": o} for o in phase_outcomes]
        for earlier, later in zip(inside, inside[1:]):
            assert earlier["ts"] + earlier["dur"] <= later["ts"]
        if test["name"].startswith("test_suite.py::test_scope["):
            call = inside[1]
            n = int(test["name"][-2])
            (step,) = [s for s in steps if nests(s, call)]
            assert step["args"] == {"n": n}
            (inner,) = [i for i in inners if nests(i, step)]
            assert "args" not in inner
    assert len(phases) == sum(len(o) for _, o, _ in EXPECTED.values())
    assert len(steps) == 2 and len(inners) == 2
    # nothing else recorded: the tests, their phases, the scopes
    assert len(trace.user()) == len(tests) + len(phases) + 4


def test_every_test_with_its_outcome_and_phases(tmp_path):
    result = run_pytest(tmp_path, "-p", "ringtrace.pytest", "--ringtrace=t-%p.json")
    assert result.returncode == 1, result.stdout + result.stderr  # tests failed
    assert "2 failed, 4 passed, 2 skipped, 1 xfailed, 1 xpassed, 3 errors" in result.stdout
    # (with pytest-benchmark installed, the profile is beside it: ringtrace_benchmark)
    (path,) = [p for p in tmp_path.glob("t-*.json") if not p.name.endswith(".profile.json")]
    assert path.name != "t-%p.json"
    trace = Trace(path)
    check_suite(trace)
    trace.end_marker()  # stopped at pytest_unconfigure


def test_the_ini_option(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nringtrace = from-ini.json\n")
    result = run_pytest(tmp_path, "-p", "ringtrace.pytest")
    assert result.returncode == 1, result.stdout + result.stderr
    check_suite(Trace(tmp_path / "from-ini.json"))


def test_without_the_option_nothing_is_recorded_and_the_fixture_works(tmp_path):
    result = run_pytest(tmp_path, "-p", "ringtrace.pytest", "-k", "scope or test_pass")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
    # no trace written (other plugins' hidden folders, pytest-benchmark's .benchmarks
    # among them, aside)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "test_suite.py"
    ]


def test_records_into_a_running_session_and_leaves_it_running(tmp_path):
    env = {"RINGTRACE_AUTOSTART": "1", "RINGTRACE_FILE": "auto.json"}
    # records after every other pytest_unconfigure: the session still runs then
    (tmp_path / "late.py").write_text(
        "import pytest, ringtrace\n"
        "@pytest.hookimpl(trylast=True)\n"
        "def pytest_unconfigure(config):\n"
        "    ringtrace.instant('late', 'after unconfigure')\n"
    )
    result = run_pytest(
        tmp_path, "-p", "ringtrace.pytest", "-p", "late", "--ringtrace=unused.json",
        env_extra=env,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert not (tmp_path / "unused.json").exists()
    trace = Trace(tmp_path / "auto.json")  # finished by the exit handler
    late = trace.one("i", "late", "after unconfigure")
    trace.events.remove(late)
    check_suite(trace)
    trace.end_marker()


def test_the_entry_point_autoloads_and_p_does_not_register_it_twice(tmp_path):
    # what pip install leaves: a distribution whose pytest11 entry point is the plugin
    site = tmp_path / "site"
    dist = site / "ringtrace-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ringtrace\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text(
        "[pytest11]\nringtrace.pytest = ringtrace.pytest\n"
    )
    for args, name in ((["-p", "ringtrace.pytest"], "twice.json"), ([], "auto.json")):
        result = run_pytest(tmp_path, *args, f"--ringtrace={name}", python_path=[str(site)])
        assert result.returncode == 1, result.stdout + result.stderr
        check_suite(Trace(tmp_path / name))
    # autoloaded without the option: nothing
    result = run_pytest(tmp_path, "-k", "test_pass", python_path=[str(site)])
    assert result.returncode == 0, result.stdout + result.stderr
    traces = [p.name for p in tmp_path.glob("*.json") if not p.name.endswith(".profile.json")]
    assert sorted(traces) == ["auto.json", "twice.json"]


def test_a_file_that_cannot_be_opened_is_a_usage_error(tmp_path):
    (tmp_path / "plain").write_text("")  # in the way of the directory to make
    result = run_pytest(tmp_path, "-p", "ringtrace.pytest", "--ringtrace=plain/t.json")
    assert result.returncode == 4, result.stdout + result.stderr  # pytest's usage error
    assert "ERROR: --ringtrace=plain/t.json: [Errno 20]" in result.stderr
    assert "passed" not in result.stdout and "failed" not in result.stdout
