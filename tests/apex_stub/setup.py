"""Stand-in APEX setup.py (see README.md): the flag handling the apex_build role relies on."""

import os
import subprocess
import sys

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

# Same contract as APEX: an environment variable set to 1 adds its command-line flag.
ENV_TO_FLAG = {
    "APEX_CPP_EXT": "--cpp_ext",
    "APEX_CUDA_EXT": "--cuda_ext",
    "APEX_DEMO_CONTRIB": "--demo_contrib",
}
for env_var, flag in ENV_TO_FLAG.items():
    if os.environ.get(env_var, "0") == "1" and flag not in sys.argv:
        print(f"[apex_stub] Detected {env_var}=1, adding {flag} to build flags.")
        sys.argv.append(flag)


def has_flag(flag, env_var):
    return flag in sys.argv or os.environ.get(env_var, "0") == "1"


def raise_if_cuda_home_none(option):
    if CUDA_HOME is None:
        raise RuntimeError(f"{option} was requested, but nvcc was not found.")


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True).split()
    release = output[output.index("release") + 1].rstrip(",")
    if release != torch.version.cuda:
        raise RuntimeError(f"nvcc is CUDA {release} but torch was built with CUDA {torch.version.cuda}.")


ext_modules = []

if has_flag("--cpp_ext", "APEX_CPP_EXT"):
    if "--cpp_ext" in sys.argv:
        sys.argv.remove("--cpp_ext")
    # -O0 -g0: the stand-in is compiled in every CI run; what matters is that it builds and runs.
    ext_modules.append(CppExtension("apex_C", ["csrc/flatten_unflatten.cpp"], extra_compile_args=["-O0", "-g0"]))

if has_flag("--cuda_ext", "APEX_CUDA_EXT"):
    if "--cuda_ext" in sys.argv:
        sys.argv.remove("--cuda_ext")
    raise_if_cuda_home_none("--cuda_ext")
    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)
    ext_modules.append(
        CUDAExtension(
            name="amp_C",
            sources=["csrc/amp_C_stub.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3"]},
        )
    )

if has_flag("--demo_contrib", "APEX_DEMO_CONTRIB"):
    if "--demo_contrib" in sys.argv:
        sys.argv.remove("--demo_contrib")
    ext_modules.append(CppExtension(name="apex_demo_contrib_C", sources=["csrc/demo_contrib.cpp"]))

parallel = os.environ.get("APEX_PARALLEL_BUILD")


class ParallelBuildExtension(BuildExtension):
    def finalize_options(self):
        if parallel:
            self.parallel = int(parallel)
        super().finalize_options()


setup(
    name="apex",
    version="0.1",
    packages=find_packages(include=("apex", "apex.*")),
    description="Stand-in APEX source tree for the apex_build role's CI (not NVIDIA APEX)",
    ext_modules=ext_modules,
    cmdclass={"build_ext": ParallelBuildExtension} if ext_modules else {},
)
