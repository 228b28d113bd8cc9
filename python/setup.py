# SPDX-License-Identifier: MIT
"""The extension module ringtrace._ringtrace for setuptools (pip install ./python).

It is the C of src/, built against the libringtrace that pkg-config finds (install
the library first: cmake --install, then PKG_CONFIG_PATH=<prefix>/lib/pkgconfig),
and linked with its shared library, with that library's directory as the module's
run path, so that it shares the recorder with every other user of libringtrace.so in
the process. The metadata is in pyproject.toml.
"""

import os
import shlex
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["module.c", "config.c", "intern.c", "args.c", "scope.c", "events.c", "traced.c",
           "profile.c", "track.c"]


def pkg_config(*args):
    try:
        out = subprocess.run(
            ["pkg-config", *args, "ringtrace"], check=True, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        sys.exit(
            "ringtrace: pkg-config does not find libringtrace "
            f"({getattr(err, 'stderr', err) or err}).\n"
            "Build and install the library first, then point pkg-config at it:\n"
            "  cmake --preset release && cmake --build build/release\n"
            "  cmake --install build/release --prefix /opt/ringtrace\n"
            "  PKG_CONFIG_PATH=/opt/ringtrace/lib/pkgconfig pip install --no-build-isolation ./python"
        )
    return out.strip()


def flags(opt, words):
    return [w[len(opt) :] for w in words if w.startswith(opt)]


cflags = shlex.split(pkg_config("--cflags"))
libs = shlex.split(pkg_config("--libs"))
libdir = pkg_config("--variable=libdir")

ext = Extension(
    "ringtrace._ringtrace",
    sources=[os.path.join("src", s) for s in SOURCES],
    include_dirs=flags("-I", cflags),
    library_dirs=flags("-L", libs),
    libraries=flags("-l", libs),
    runtime_library_dirs=[os.path.realpath(libdir)],
    extra_compile_args=["-std=c11", "-fvisibility=hidden"],
)

setup(ext_modules=[ext])
