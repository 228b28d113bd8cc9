# SPDX-License-Identifier: MIT
"""Memory is flat while Python records: bench/python_memory.py's 10^7 scope events,
RSS sampled every 10^6, grows by far less than 16 MiB from the first sample to the
last (it measured +0.00 MiB; bench/RESULTS.md). Not under a sanitizer, whose
allocator keeps freed memory in quarantine (ASan holds up to 256 MiB of it)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import ringtrace

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python_memory.py"
MIB = 1 << 20


@pytest.mark.skipif(bool(os.environ.get("RTR_TEST_SANITIZER")),
                    reason="a sanitizer's allocator quarantines freed memory")
def test_rss_is_flat_over_ten_million_scopes(tmp_path):
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ringtrace.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, str(BENCH), "--events", "10000000", "--every",
                        "1000000", "--path", os.devnull, "--json"], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert [n for n, _ in result["samples"]] == [k * 10**6 for k in range(1, 11)]
    assert result["recorded"] == result["written"] == 10**7 and result["dropped"] == 0
    assert result["growth"] < 16 * MIB, result["samples"]
