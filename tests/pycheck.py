"""pycheck.py -- what the Python tests of dse share: counted checks, running
a program with its output captured, and the closing line with the exit status.

Invariant: a test that uses check() ends with `return summary(NAME)` from its
main, which prints "NAME: C checks, F failed" and gives 1 when any check failed
(CTest reads the exit status).  Import it with the tests folder on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
"""
import subprocess
import sys

failures = 0
checks = 0


def check(cond, msg):
    """Count a check; print msg when it fails.  Returns cond."""
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: " + str(msg), flush=True)
    return cond


def run(*args, env=None, timeout=None):
    """Run a program (arguments made text); (exit status, stdout, stderr)."""
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def summary(name):
    print("%s: %d checks, %d failed" % (name, checks, failures))
    return 1 if failures else 0


def need_onnx():
    """numpy and onnx, or exit 77 (CTest's "skipped") saying what is missing.
    Returns (np, onnx, TensorProto, helper, numpy_helper)."""
    try:
        import numpy as np
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        print("SKIP: %s has no onnx/numpy (python3-onnx; scripts/bootstrap)" % sys.executable)
        sys.exit(77)
    return np, onnx, TensorProto, helper, numpy_helper
