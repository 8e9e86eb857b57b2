"""The test channel's numpy is a real OpenBLAS numpy, and its BLAS selectors behave like a real
OpenBLAS-only numpy's: asking for MKL with it cannot be solved."""

import json
import os
import subprocess

import pytest

MATMUL_THEN_MAPS = "import numpy; a = numpy.ones((64, 64)); print((a @ a).sum()); print(open('/proc/self/maps').read())"


def test_numpy_from_the_channel_runs_on_its_bundled_openblas(conda_base):
    base = conda_base()
    proc = base.run("create", "-y", "-n", "blas", "python=3.11", "numpy", "blas=*=openblas", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    linked = sorted(e["name"] for e in json.loads(proc.stdout)["actions"]["LINK"])
    assert {"numpy", "blas", "libblas", "python"} <= set(linked)
    python = os.path.join(base.prefix, "envs", "blas", "bin", "python")
    run = subprocess.run([python, "-I", "-B", "-c", MATMUL_THEN_MAPS], capture_output=True, text=True, check=False,
                         env={"OPENBLAS_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr
    product, maps = run.stdout.split("\n", 1)
    assert product == "262144.0"
    numpy_libs = os.path.join(base.prefix, "envs", "blas", "lib", "python3.11", "site-packages", "numpy.libs")
    assert "%s/libscipy_openblas" % numpy_libs in maps


@pytest.mark.parametrize("selector", ["blas=*=mkl", "libblas=*=*mkl"])
def test_mkl_with_the_openblas_numpy_is_an_honest_conflict(conda_base, selector):
    base = conda_base()
    alone = base.run("create", "--dry-run", "-n", "mkl", selector, "--json")
    assert alone.returncode == 0, "the MKL selector exists: %s" % alone.stdout
    proc = base.run("create", "--dry-run", "-n", "mkl", "python=3.11", "numpy", selector, "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["exception_name"] == "UnsatisfiableError", proc.stdout
