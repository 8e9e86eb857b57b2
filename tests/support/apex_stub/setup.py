"""Stand-in APEX setup.py (see README.md): the flag handling the apex_build role relies on."""

import json
import os
import subprocess
import sys
import time

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

# The contract the role relies on: each APEX_* variable set to "1" requests its command-line flag.
# The table's name and the has_flag("--x", "APEX_X") calls are what the role reads from setup.py.
ENV_TO_FLAG = {
    "APEX_CPP_EXT": "--cpp_ext",
    "APEX_CUDA_EXT": "--cuda_ext",
    "APEX_DEMO_CONTRIB": "--demo_contrib",
}
REQUESTED = {flag for variable, flag in ENV_TO_FLAG.items() if os.environ.get(variable) == "1"}
REQUESTED.update(arg for arg in sys.argv[1:] if arg in ENV_TO_FLAG.values())
sys.argv = [arg for arg in sys.argv if arg not in ENV_TO_FLAG.values()]
print("[apex_stub] requested: %s" % (" ".join(sorted(REQUESTED)) or "no extension"))


def has_flag(flag, variable):
    """Was ``flag`` asked for, on the command line or through ``variable``?"""
    assert ENV_TO_FLAG[variable] == flag, (flag, variable)
    return flag in REQUESTED


def raise_if_cuda_home_none(option):
    if CUDA_HOME is None:
        raise RuntimeError(f"{option} was requested, but nvcc was not found.")


def require_nvcc_matching_torch(cuda_dir):
    output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True).split()
    release = output[output.index("release") + 1].rstrip(",")
    if release != torch.version.cuda:
        raise RuntimeError(f"nvcc is CUDA {release} but torch was built with CUDA {torch.version.cuda}.")


ext_modules = []

if has_flag("--cpp_ext", "APEX_CPP_EXT"):
    # -O0 -g0: the stand-in is compiled in every CI run; what matters is that it builds and runs.
    ext_modules.append(CppExtension("apex_C", ["csrc/flatten_unflatten.cpp"], extra_compile_args=["-O0", "-g0"]))

if has_flag("--cuda_ext", "APEX_CUDA_EXT"):
    raise_if_cuda_home_none("--cuda_ext")
    require_nvcc_matching_torch(CUDA_HOME)
    ext_modules.append(
        CUDAExtension(
            name="amp_C",
            sources=["csrc/amp_C_stub.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3"]},
        )
    )

if has_flag("--demo_contrib", "APEX_DEMO_CONTRIB"):
    ext_modules.append(CppExtension(name="apex_demo_contrib_C", sources=["csrc/demo_contrib.cpp"]))

parallel = os.environ.get("APEX_PARALLEL_BUILD")


def pause_if_asked():
    """Test hook for kill points: with APEX_STUB_PAUSE_FILE naming a file that exists, say where the
    build is (<file>.reached: this process's pid) and wait, mid-compile, while the file exists."""
    pause = os.environ.get("APEX_STUB_PAUSE_FILE")
    if not pause or not os.path.exists(pause):
        return
    with open(pause + ".reached.tmp", "w") as reached:  # renamed whole: its reader never sees half of it
        json.dump({"pid": os.getpid(), "where": "build_ext"}, reached)
    os.replace(pause + ".reached.tmp", pause + ".reached")
    while os.path.exists(pause):
        time.sleep(0.1)


class ParallelBuildExtension(BuildExtension):
    def finalize_options(self):
        if parallel:
            self.parallel = int(parallel)
        super().finalize_options()

    def build_extensions(self):
        pause_if_asked()
        super().build_extensions()


setup(
    name="apex",
    version="0.1",
    packages=find_packages(include=("apex", "apex.*")),
    description="Stand-in APEX source tree for the apex_build role's CI (not NVIDIA APEX)",
    ext_modules=ext_modules,
    cmdclass={"build_ext": ParallelBuildExtension} if ext_modules else {},
)
