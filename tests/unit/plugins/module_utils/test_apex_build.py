"""apex_build decisions: setup.py parsing (fixtures written for this repository in the layout of
APEX's setup.py, and the CI stand-in), build plans, parallelism sizing, cache keys, legacy tags and
the CUDA blockers.

The fixtures under tests/unit/fixtures/apex_setup reproduce only the layout the parser must read;
the parser is proven on the real APEX tree by the GPU molecule scenario, where the role parses the
real setup.py from the downloaded archive.
"""

import json
import os

import pytest

from conftest import FIXTURES, REPO_ROOT

from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import apex_build


def _apex_layout(name):
    with open(os.path.join(FIXTURES, "apex_setup", name)) as handle:
        return handle.read()


APEX_HEAD = _apex_layout("current-layout.py.txt")
APEX_25_05 = _apex_layout("legacy-layout.py.txt")


def _stub_setup():
    with open(os.path.join(REPO_ROOT, "tests", "support", "apex_stub", "setup.py")) as handle:
        return handle.read()


# ---------------------------------------------------------------------------
# parse_setup_py
# ---------------------------------------------------------------------------

def test_current_apex_reads_environment_flags():
    parsed = apex_build.parse_setup_py(APEX_HEAD)
    assert parsed["env_flags"] == {"--cpp_ext": "APEX_CPP_EXT", "--cuda_ext": "APEX_CUDA_EXT", "--group_norm": "APEX_GROUP_NORM",
                                   "--cudnn_gbn": "APEX_CUDNN_GBN", "--xentropy": "APEX_XENTROPY",
                                   "--nccl_allocator": "APEX_NCCL_ALLOCATOR"}


def test_current_apex_extensions_per_flag():
    flags = apex_build.parse_setup_py(APEX_HEAD)["flags"]
    assert flags["--cpp_ext"] == {"cuda": False, "required": ["apex_C"], "optional": []}
    assert flags["--cuda_ext"] == {"cuda": True, "required": ["amp_C", "syncbn", "fused_layer_norm_cuda"], "optional": []}
    # group_norm_v2_cuda is built only with nvcc >= 12.4, cudnn_gbn_lib only with cuDNN >= 8.5.
    assert flags["--group_norm"] == {"cuda": True, "required": ["group_norm_cuda"], "optional": ["group_norm_v2_cuda"]}
    assert flags["--cudnn_gbn"] == {"cuda": True, "required": [], "optional": ["cudnn_gbn_lib"]}
    # "if '--parallel' in sys.argv" is a build option, not an extension.
    assert "--parallel" not in flags
    assert sorted(flags) == ["--cpp_ext", "--cuda_ext", "--cudnn_gbn", "--group_norm"]


def test_current_apex_reads_apex_parallel_build():
    assert apex_build.parse_setup_py(APEX_HEAD)["parallel_env"] is True


def test_flag_without_a_build_block_is_not_offered():
    # The fixture's ENV_TO_FLAG names APEX_XENTROPY but has no block that builds it: nothing to request.
    parsed = apex_build.parse_setup_py(APEX_HEAD)
    assert "--xentropy" in parsed["env_flags"] and "--xentropy" not in parsed["flags"]
    with pytest.raises(ValueError, match="no --xentropy; its contrib extensions are: cudnn_gbn, group_norm"):
        apex_build.build_plan(parsed, True, True, ["xentropy"])


def test_legacy_apex_reads_command_line_flags_only():
    parsed = apex_build.parse_setup_py(APEX_25_05)
    assert parsed["env_flags"] == {}
    assert parsed["parallel_env"] is False
    # "if '--cpp_ext' in sys.argv or '--cuda_ext' in sys.argv" (a version check) adds nothing.
    assert parsed["flags"]["--cpp_ext"]["required"] == ["apex_C"]
    assert parsed["flags"]["--cuda_ext"]["required"] == ["amp_C", "syncbn"]
    assert parsed["flags"]["--xentropy"] == {"cuda": True, "required": ["xentropy_cuda"], "optional": []}


def test_stand_in_tree_parses_like_apex():
    parsed = apex_build.parse_setup_py(_stub_setup())
    assert parsed["env_flags"] == {"--cpp_ext": "APEX_CPP_EXT", "--cuda_ext": "APEX_CUDA_EXT", "--demo_contrib": "APEX_DEMO_CONTRIB"}
    assert parsed["parallel_env"] is True
    assert parsed["flags"]["--cuda_ext"] == {"cuda": True, "required": ["amp_C"], "optional": []}
    assert parsed["flags"]["--demo_contrib"] == {"cuda": False, "required": ["apex_demo_contrib_C"], "optional": []}


def test_commented_and_nested_lines_do_not_end_a_block():
    text = ("if has_flag('--x', 'APEX_X'):\n"
            "    # a comment\n"
            "\n"
            "    for arch in archs:\n"
            "        ext_modules.append(CUDAExtension(name='looped'))\n"
            "    ext_modules.append(\n"
            "        CUDAExtension(\n"
            "            name='plain',\n"
            "        )\n"
            "    )\n"
            "print('done')\n"
            "ext_modules.append(CppExtension('outside'))\n")
    assert apex_build.parse_setup_py(text)["flags"] == {"--x": {"cuda": True, "required": ["plain"], "optional": ["looped"]}}


# ---------------------------------------------------------------------------
# build_plan
# ---------------------------------------------------------------------------

def test_plan_for_current_apex_uses_environment_variables():
    plan = apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), True, True, ["APEX_GROUP_NORM", "cudnn_gbn"])
    assert plan["flags"] == ["--cpp_ext", "--cuda_ext", "--cudnn_gbn", "--group_norm"]
    assert plan["env"] == {"APEX_CPP_EXT": "1", "APEX_CUDA_EXT": "1", "APEX_CUDNN_GBN": "1", "APEX_GROUP_NORM": "1"}
    assert plan["config_settings"] == []
    assert plan["needs_nvcc"] is True
    assert plan["required_modules"] == ["apex_C", "amp_C", "syncbn", "fused_layer_norm_cuda", "group_norm_cuda"]
    assert plan["optional_modules"] == ["cudnn_gbn_lib", "group_norm_v2_cuda"]


def test_plan_for_legacy_apex_uses_build_options_never_global_option():
    plan = apex_build.build_plan(apex_build.parse_setup_py(APEX_25_05), True, True, ["--xentropy"])
    assert plan["env"] == {}
    assert plan["config_settings"] == ["--build-option=--cpp_ext", "--build-option=--cuda_ext", "--build-option=--xentropy"]
    assert not any("global-option" in option for option in plan["config_settings"])


def test_cpu_only_plan_needs_no_nvcc():
    plan = apex_build.build_plan(apex_build.parse_setup_py(_stub_setup()), True, False, ["demo_contrib"])
    assert plan["needs_nvcc"] is False
    assert plan["env"] == {"APEX_CPP_EXT": "1", "APEX_DEMO_CONTRIB": "1"}
    assert plan["required_modules"] == ["apex_C", "apex_demo_contrib_C"]


def test_unknown_contrib_names_the_variable_and_the_choices():
    with pytest.raises(ValueError) as error:
        apex_build.build_plan(apex_build.parse_setup_py(_stub_setup()), True, False, ["fast_layer_norm", "demo_contrib"])
    assert str(error.value) == ("apex_build_contrib_extensions: this APEX source has no --fast_layer_norm; "
                                "its contrib extensions are: demo_contrib")


def test_a_build_of_only_optional_modules_is_refused():
    # cudnn_gbn_lib is built only with cuDNN >= 8.5: alone, nothing would prove the build compiled anything.
    with pytest.raises(ValueError) as error:
        apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), False, False, ["cudnn_gbn"])
    assert str(error.value) == ("apex_build_contrib_extensions: --cudnn_gbn build only modules this setup.py may skip "
                                "(cudnn_gbn_lib); request apex_build_cpp_ext or apex_build_cuda_ext too")
    assert apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), False, True, ["cudnn_gbn"])["required_modules"] == [
        "amp_C", "syncbn", "fused_layer_norm_cuda"]


def test_extension_removed_upstream_is_refused_at_the_current_commit():
    # gpu_direct_storage was removed upstream (#2017): the current layout has no block for it.
    with pytest.raises(ValueError, match="no --gpu_direct_storage"):
        apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), True, True, ["gpu_direct_storage"])


@pytest.mark.parametrize("name, flag", [("xentropy", "--xentropy"), ("--xentropy", "--xentropy"),
                                        ("APEX_FAST_LAYER_NORM", "--fast_layer_norm"), (" apex_bnp ", "--bnp")])
def test_extension_names_normalise(name, flag):
    assert apex_build.normalize_extension_name(name) == flag


# ---------------------------------------------------------------------------
# Parallelism and environment
# ---------------------------------------------------------------------------

def test_gpu_host_sizing_stays_within_memory():
    # The H200 host: 16 cores, about 128 GiB, the 14 extensions of APEX_CPP_EXT+APEX_CUDA_EXT, arch 9.0.
    sizing = apex_build.build_parallelism(16, 128 * 1024, 12, 1, True)
    assert sizing == {"max_jobs": 4, "parallel_build": 8, "nvcc_threads": 1, "peak_jobs": 32, "memory_jobs": 35}
    assert sizing["peak_jobs"] * apex_build.DEFAULT_MIB_PER_JOB <= 128 * 1024


def test_several_architectures_use_nvcc_threads():
    sizing = apex_build.build_parallelism(16, 128 * 1024, 12, 7, True)
    assert sizing["nvcc_threads"] == 2
    assert sizing["parallel_build"] * sizing["max_jobs"] * 2 <= sizing["memory_jobs"]


def test_small_memory_limits_jobs_more_than_cores():
    sizing = apex_build.build_parallelism(64, 8 * 1024, 12, 3, True)
    assert sizing == {"max_jobs": 1, "parallel_build": 2, "nvcc_threads": 1, "peak_jobs": 2, "memory_jobs": 2}


def test_tiny_node_still_builds_one_job():
    assert apex_build.build_parallelism(1, 512, 2, 0, False) == {
        "max_jobs": 1, "parallel_build": 1, "nvcc_threads": None, "peak_jobs": 1, "memory_jobs": 1}


def test_settings_with_overrides_and_cuda_environment():
    plan = apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), True, True, [])
    settings = apex_build.build_settings(plan, 16, 128 * 1024, "/usr/local/cuda", "9.0",
                                         overrides={"max_jobs": 8, "parallel_build": 0, "nvcc_threads": 2})
    # 128 GiB hold 35 jobs: 8 jobs x 2 nvcc threads leave room for 2 extensions side by side, not 4.
    assert settings["parallelism"] == {"max_jobs": 8, "parallel_build": 2, "nvcc_threads": 2, "peak_jobs": 32,
                                       "memory_jobs": 35}
    assert settings["env"] == {"APEX_CPP_EXT": "1", "APEX_CUDA_EXT": "1", "MAX_JOBS": "8", "APEX_PARALLEL_BUILD": "2",
                               "CUDA_HOME": "/usr/local/cuda", "TORCH_CUDA_ARCH_LIST": "9.0", "NVCC_APPEND_FLAGS": "--threads 2"}


def test_overrides_that_do_not_fit_the_memory_are_refused_with_the_numbers():
    plan = apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), True, True, [])
    with pytest.raises(ValueError) as refused:
        apex_build.build_settings(plan, 16, 128 * 1024, "/usr/local/cuda", "9.0",
                                  overrides={"max_jobs": 16, "parallel_build": 4, "nvcc_threads": 2})
    assert str(refused.value).startswith(
        "MAX_JOBS 16 x APEX_PARALLEL_BUILD 4 x nvcc threads 2 = 128 compiler processes, at 3686 MiB each, need "
        "471808 MiB; the node has 131072 MiB available (room for 35). Lower apex_build_max_jobs")
    # One factor fixed too high on its own is refused too, even with the others left to the sizing.
    with pytest.raises(ValueError, match="MAX_JOBS 40 x APEX_PARALLEL_BUILD 1 x nvcc threads 1 = 40 compiler"):
        apex_build.build_settings(plan, 64, 128 * 1024, "/usr/local/cuda", "9.0", overrides={"max_jobs": 40})


@pytest.mark.parametrize("overrides, cuda, refused", [
    ({"max_jobs": 16, "parallel_build": 4, "nvcc_threads": 2}, True, True),   # 128 > 35
    ({"max_jobs": 16, "parallel_build": 4, "nvcc_threads": 2}, False, True),  # 64 > 35: threads do not count
    ({"max_jobs": 16, "parallel_build": 2, "nvcc_threads": 2}, False, False),  # 32 fit
    ({"max_jobs": 35, "parallel_build": 0, "nvcc_threads": 0}, True, False),   # exactly the room
    ({"max_jobs": 36}, True, True),
    ({}, True, False),
])
def test_overrides_known_not_to_fit_are_found_before_the_source_is_read(overrides, cuda, refused):
    problem = apex_build.overrides_memory_problem(overrides, 128 * 1024, cuda)
    assert (problem is not None) is refused
    if refused:
        # The same refusal the build's own sizing makes with these factors.
        assert problem.endswith("Lower apex_build_max_jobs, apex_build_parallel_build or apex_build_nvcc_threads, "
                                "or set them to 0 to size the build from the node") and "(room for 35)" in problem
    if not refused and overrides:
        plan = apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), True, cuda, [])
        apex_build.build_settings(plan, 64, 128 * 1024, "/usr/local/cuda", "9.0", overrides=overrides)


def test_cpu_settings_carry_no_cuda_variables_and_legacy_no_parallel_variable():
    plan = apex_build.build_plan(apex_build.parse_setup_py(APEX_25_05), True, False, [])
    settings = apex_build.build_settings(plan, 2, 20000, "", "", overrides={"nvcc_threads": 4})
    assert settings["env"] == {"MAX_JOBS": "2"}
    assert settings["parallelism"]["nvcc_threads"] is None


def test_cpp_only_build_still_gets_the_given_cuda_home():
    plan = apex_build.build_plan(apex_build.parse_setup_py(APEX_HEAD), True, False, [])
    settings = apex_build.build_settings(plan, 2, 20000, "/usr/local/cuda-13.0", "9.0")
    assert settings["env"] == {"APEX_CPP_EXT": "1", "MAX_JOBS": "2", "APEX_PARALLEL_BUILD": "1",
                               "CUDA_HOME": "/usr/local/cuda-13.0"}


def test_unknown_override_is_refused():
    plan = apex_build.build_plan(apex_build.parse_setup_py(_stub_setup()), True, False, [])
    with pytest.raises(ValueError, match="unknown parallelism override jobs"):
        apex_build.build_settings(plan, 2, 20000, None, "", overrides={"jobs": 3})


@pytest.mark.parametrize("arch_list, count", [("9.0", 1), ("8.0;9.0+PTX", 2), ("7.5;8.0;8.6;9.0;10.0;11.0;12.0", 7), ("", 0), (None, 0)])
def test_arch_count(arch_list, count):
    assert apex_build.arch_count(arch_list) == count


# ---------------------------------------------------------------------------
# Cache key
# ---------------------------------------------------------------------------

H200_INPUTS = {"apex_source": "6424da3b4faa6c8f062da4a48c424fff3f02d42d", "torch_version": "2.11.0+cu130", "torch_cuda": "13.0",
               "torch_cuda_version": "13.0", "python_tag": "cp312", "platform": "linux_x86_64", "arch_list": "9.0",
               "flags": ["--cpp_ext", "--cuda_ext"]}


def test_cache_key_is_stable_and_ignores_flag_order_and_extra_fields():
    key = apex_build.cache_key(H200_INPUTS)
    assert len(key) == 24 and int(key, 16) >= 0
    reordered = dict(H200_INPUTS, flags=["--cuda_ext", "--cpp_ext"], note="not part of the key")
    assert apex_build.cache_key(reordered) == key


@pytest.mark.parametrize("field, value", [("apex_source", "25.05"), ("torch_version", "2.11.1+cu130"), ("torch_cuda", "12.8"),
                                          ("torch_cuda_version", "12.8"), ("python_tag", "cp311"), ("platform", "linux_aarch64"),
                                          ("arch_list", "9.0;10.0"), ("flags", ["--cpp_ext"])])
def test_every_input_changes_the_key(field, value):
    assert apex_build.cache_key(dict(H200_INPUTS, **{field: value})) != apex_build.cache_key(H200_INPUTS)


def test_cache_key_names_missing_inputs():
    with pytest.raises(ValueError, match="lack arch_list, flags"):
        apex_build.cache_key(dict((k, v) for k, v in H200_INPUTS.items() if k not in ("arch_list", "flags")))


# ---------------------------------------------------------------------------
# Versions: legacy tags and the CUDA chain
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("ref, has_legacy", [("25.05", True), ("24.04.01", True), ("v25.04", True), ("25.07", False),
                                             ("25.09", False), ("6424da3b4faa6c8f062da4a48c424fff3f02d42d", None), ("master", None)])
def test_legacy_apis_by_ref(ref, has_legacy):
    assert apex_build.legacy_apis_ref(ref) is has_legacy


def _compat(torch_cuda="13.0", nvcc_release="13.0", findings=None):
    return {"torch": {"present": True, "version": "2.11.0+cu130" if torch_cuda else "2.13.0+cpu", "cuda": torch_cuda},
            "nvcc": {"present": nvcc_release is not None, "release": nvcc_release,
                     "error": None if nvcc_release else "/usr/local/cuda/bin/nvcc --version failed: not found"},
            "findings": findings or []}


CUDA_PLAN = {"needs_nvcc": True}


def test_matching_chain_has_no_blockers():
    assert apex_build.build_blockers(CUDA_PLAN, _compat(), False) == []


def test_apex_minor_mismatch_blocks_with_both_versions_and_the_fix():
    # The finding as aistack.gpu_node.cuda_compat reports it with apex: true (nvcc 13.1, torch cu130).
    finding = {"id": "apex.cuda_mismatch", "severity": "error",
               "message": "APEX's setup.py requires nvcc (13.1) to equal torch.version.cuda (13.0) exactly.",
               "fix": "Use the CUDA 13.0 toolkit for extension builds (set cuda_home / CUDA_HOME to it) or install torch built for CUDA 13.1."}
    blockers = apex_build.build_blockers(CUDA_PLAN, _compat(nvcc_release="13.1", findings=[finding]), False)
    assert blockers == [{"message": finding["message"], "fix": finding["fix"]}]


def test_cpu_torch_and_missing_nvcc_block_a_cuda_build():
    blockers = apex_build.build_blockers(CUDA_PLAN, _compat(torch_cuda=None, nvcc_release=None), True)
    messages = [item["message"] for item in blockers]
    assert messages[0] == "CUDA extensions were requested but torch 2.13.0+cpu is a CPU-only build."
    assert messages[1].startswith("CUDA extensions were requested but there is no nvcc (/usr/local/cuda/bin/nvcc")
    assert messages[2] == "No GPU here to derive TORCH_CUDA_ARCH_LIST from."
    assert "apex_build_arch_list" in blockers[2]["fix"]


def test_cpu_build_needs_only_torch():
    assert apex_build.build_blockers({"needs_nvcc": False}, _compat(torch_cuda=None, nvcc_release=None), True) == []
    missing = apex_build.build_blockers({"needs_nvcc": False}, {"torch": {"present": False, "error": "ModuleNotFoundError"}}, False)
    assert missing[0]["message"] == "torch is not importable in this environment (ModuleNotFoundError)."


# ---------------------------------------------------------------------------
# cache_entry: markers read from the node, the controller or a URL
# ---------------------------------------------------------------------------

def _h200_marker(**changes):
    """A marker with the key, wheel and modules of the H200 run (tests/gpu/results/h200/apex.json)."""
    with open(os.path.join(REPO_ROOT, "tests", "gpu", "results", "h200", "apex.json")) as handle:
        built = json.load(handle)["built"]
    marker = {"key": built["key"], "wheel": built["wheel"], "wheel_sha256": "ab" * 32,
              "required_modules": sorted(built["modules"]), "built_on": built["built_on"]}
    marker.update(changes)
    return marker


H200_KEY = _h200_marker()["key"]


def test_a_valid_marker_is_the_entry():
    marker = _h200_marker()
    assert apex_build.cache_entry(json.dumps(marker), H200_KEY) == {"entry": marker, "problem": None}


@pytest.mark.parametrize("text", ["", "  \n", None])
def test_no_marker_is_no_entry_and_no_problem(text):
    assert apex_build.cache_entry(text, H200_KEY) == {"entry": None, "problem": None}


@pytest.mark.parametrize("text, problem", [
    ("<html>404 Not Found</html>", "not JSON"),
    (json.dumps(["apex"]), "not a JSON object"),
    (json.dumps(_h200_marker(key="0" * 24)), "for key '000000000000000000000000', not " + H200_KEY),
    (json.dumps(_h200_marker(wheel="../../etc/cron.d/apex-1.whl")), "is not an apex-*.whl file name"),
    (json.dumps(_h200_marker(wheel="torch-2.11.0-cp312-cp312-linux_x86_64.whl")), "is not an apex-*.whl file name"),
    (json.dumps(_h200_marker(wheel_sha256="AB" * 32)), "is not 64 hex digits"),
    (json.dumps(_h200_marker(required_modules=[])), "no required_modules"),
])
def test_a_bad_marker_is_a_problem_not_an_entry(text, problem):
    result = apex_build.cache_entry(text, H200_KEY)
    assert result["entry"] is None and problem in result["problem"]


def test_an_environment_without_setuptools_cannot_build_and_ninja_is_not_required():
    tools = {"setuptools": None, "ninja": None}
    blockers = apex_build.build_blockers({"needs_nvcc": False}, _compat(torch_cuda=None, nvcc_release=None), False, tools)
    assert blockers == [{"message": "setuptools is not installed in this environment, and pip wheel --no-build-isolation "
                                    "builds with the environment's own.",
                         "fix": "Install setuptools (and ninja, for parallel compiles) into the environment."}]
    ready = {"setuptools": "80.9.0", "ninja": None}
    assert apex_build.build_blockers(CUDA_PLAN, _compat(), False, ready) == []


# --- which nodes get APEX ------------------------------------------------------------------------

def test_a_node_without_gpu_skips_the_cuda_kernels_with_one_line():
    gate = apex_build.gpu_gate("no_gpu", cuda_ext=True, build_host=False, arch_list="")
    assert gate["run"] is False and "\n" not in gate["reason"]
    assert gate["reason"].startswith("no NVIDIA GPU on this node for APEX's CUDA kernels (apex_build_cuda_ext)")
    assert "not a build host (apex_build_build_hosts) with apex_build_arch_list declared" in gate["reason"]
    # An arch list alone does not make a node a build host.
    assert apex_build.gpu_gate("no_gpu", True, False, "9.0")["run"] is False


def test_a_gpu_less_build_host_builds_only_for_a_declared_arch_list():
    assert apex_build.gpu_gate("no_gpu", True, True, "8.0;9.0+PTX") == {"run": True, "reason": None}
    for blank in ("", "  ", None):
        gate = apex_build.gpu_gate("no_gpu", True, True, blank)
        assert gate["run"] is False and "Declare apex_build_arch_list" in gate["reason"]


@pytest.mark.parametrize("state", ["ok", "gpu_no_driver", "mismatch", "driver_error"])
def test_a_node_with_a_gpu_always_runs(state):
    assert apex_build.gpu_gate(state, True, False, "") == {"run": True, "reason": None}


def test_a_cpp_only_build_runs_without_gpu():
    assert apex_build.gpu_gate("no_gpu", False, False, "") == {"run": True, "reason": None}


ROLE_INPUTS = dict(env_prefix="/opt/conda/envs/torch", cpp_ext=True, cuda_ext=True, contrib_extensions=[], source_type="git",
                   archive="", arch_list="", cache_dir="/var/cache/aistack/apex-wheels", work_dir="/var/tmp/aistack-apex-build",
                   controller_cache_dir="", poll_s=15, timeout_s=7200, cache_url="", cache_url_upload=False, legacy_apis=False,
                   mib_per_job=3686, max_jobs=0, parallel_build=0, nvcc_threads=0)


def test_the_shipped_defaults_are_good_input():
    assert apex_build.input_problems(ROLE_INPUTS, "6424da3b4faa6c8f062da4a48c424fff3f02d42d", None) == []
    assert apex_build.input_problems(dict(ROLE_INPUTS, env_prefix=""), "25.05", True) == []


@pytest.mark.parametrize("changed, version, message", [
    (dict(env_prefix="opt/torch/.venv"), "25.05", 'apex_build_env_prefix must be an absolute path (got "opt/torch/.venv").'),
    (dict(cache_dir=""), "25.05", 'apex_build_cache_dir must be an absolute path (got "").'),
    (dict(work_dir="tmp"), "25.05", 'apex_build_work_dir must be an absolute path (got "tmp").'),
    (dict(controller_cache_dir="cache"), "25.05", 'apex_build_controller_cache_dir must be an absolute path (got "cache").'),
    (dict(cpp_ext=False, cuda_ext=False), "25.05", "a Python-only APEX has no kernels; request at least one."),
    ({}, "master", 'apex_build_version must be a commit id or a tag like 25.05, never a branch (got "master").'),
    (dict(source_type="archive"), "25.05", 'apex_build_source_type=archive needs apex_build_archive, an absolute path'),
    (dict(source_type="archive", archive="/srv/apex.rar"), "25.05", '(got "/srv/apex.rar")'),
    (dict(arch_list="sm_90"), "25.05", 'apex_build_arch_list must look like "9.0" or "8.0;9.0+PTX" (got "sm_90").'),
    (dict(timeout_s=10, poll_s=15), "25.05", "apex_build_timeout_s (10) must exceed apex_build_poll_s (15)"),
    (dict(poll_s=0), "25.05", "apex_build_timeout_s (7200) must exceed apex_build_poll_s (0), which must be above 0."),
    (dict(cache_url="ftp://cache.example/apex"), "25.05", 'apex_build_cache_url must be an http:// or https:// URL (got "ftp://'),
    (dict(cache_url_upload=True), "25.05", "apex_build_cache_url_upload needs apex_build_cache_url"),
    (dict(mib_per_job=0), "25.05", "apex_build_mib_per_job must be at least 256 (MiB one compiler process"),
    (dict(max_jobs=-1), "25.05", "apex_build_max_jobs must be from 0 (sized from cores and memory) to 1024, got -1."),
    (dict(nvcc_threads=100000), "25.05", "apex_build_nvcc_threads must be from 0 (sized from cores and memory) to 1024"),
])
def test_each_bad_input_is_named_with_what_was_expected(changed, version, message):
    problems = apex_build.input_problems(dict(ROLE_INPUTS, **changed), version, None)
    assert len(problems) == 1 and message in problems[0]


def test_legacy_apis_on_a_tag_without_them():
    problems = apex_build.input_problems(dict(ROLE_INPUTS, legacy_apis=True), "25.07", apex_build.legacy_apis_ref("25.07"))
    assert problems == ["apex_build_legacy_apis is set but apex_build_version 25.07 is newer than tag 25.05: apex.amp and "
                        "apex.parallel were removed after it. Pin 25.05 or older, or port the code to torch.amp and torch DDP."]
    assert apex_build.input_problems(dict(ROLE_INPUTS, legacy_apis=True), "25.05", apex_build.legacy_apis_ref("25.05")) == []


def test_only_the_inputs_given_are_checked():
    assert apex_build.input_problems({"cpp_ext": True}, "", None) == []
    assert apex_build.input_problems({"cpp_ext": True, "source_type": "git"}, "", None) == [
        'apex_build_version must be a commit id or a tag like 25.05, never a branch (got "").']
