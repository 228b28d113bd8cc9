# SPDX-License-Identifier: MIT
"""python -m ringtrace run [options] script.py args...: run a script (or -m module)
with every function call recorded (ringtrace.profile; docs/python.md)."""

import argparse
import os
import runpy
import sys
import types

from ._profile import profile


def _parser():
    p = argparse.ArgumentParser(prog="python -m ringtrace")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a script with function tracing")
    run.add_argument("-o", "--output", default=None,
                     help="the trace file pattern (%%p pid...); default RINGTRACE_FILE "
                     "or ringtrace-%%p.json")
    run.add_argument("--include", action="append", default=[], metavar="PREFIX",
                     help="record only functions under this module or qualified name")
    run.add_argument("--exclude", action="append", default=[], metavar="PREFIX",
                     help="do not record functions under this module or qualified name")
    run.add_argument("--min-ns", type=int, default=0, help="drop calls shorter than this")
    run.add_argument("--max-depth", type=int, default=0, help="drop calls deeper than this")
    run.add_argument("--c-calls", action="store_true", help="record C function calls too")
    run.add_argument("-m", dest="module", default=None, help="run a module, as python -m")
    run.add_argument("args", nargs=argparse.REMAINDER, help="script.py and its arguments")
    return p


def _run_script(path, prof):
    """Run the file as __main__ (a module of its own in sys.modules, so that
    multiprocessing finds its functions), with only its own frames profiled."""
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    prof._begin(enable=False)
    try:
        prof._exec(code, main.__dict__)
    finally:
        prof.__exit__(None, None, None)


def main(argv=None):
    opts = _parser().parse_args(argv)
    if opts.module is None and not opts.args:
        _parser().error("run: give script.py (or -m module)")
    prof = profile(opts.output, include=opts.include, exclude=opts.exclude,
                   min_ns=opts.min_ns, max_depth=opts.max_depth, c_calls=opts.c_calls)
    if opts.module is not None:
        sys.argv = [opts.module] + opts.args
        with prof:
            runpy.run_module(opts.module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(opts.args)
        _run_script(opts.args[0], prof)


if __name__ == "__main__":
    main()
