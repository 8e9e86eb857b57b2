"""What the GPU scenario left on the GPU host, checked from outside the roles (testinfra, local).

The env is the one site.yml made from nothing (tests/gpu/inventory): a conda env whose torch is the
CUDA build conda_env chose for the driver and installed through the env's pip.
"""

import json
import os

ENV_PREFIX = "/opt/conda/envs/torch"
TORCH_PYTHON = ENV_PREFIX + "/bin/python"
RESULTS = os.environ.get("GPU_RESULTS_DIR", "")
APEX_EXTENSIONS = ("apex_C", "amp_C", "syncbn", "fused_layer_norm_cuda", "mlp_cuda", "fused_dense_cuda")
KERNEL_JSON = "/usr/local/share/jupyter/kernels/torch/kernel.json"


def _results(host, name):
    return json.loads(host.file(os.path.join(RESULTS, name + ".json")).content_string)


def _python(host, python, code):
    return host.check_output("%s -c %s", python, code)


def test_apex_kernels_load(host):
    code = "import torch, importlib; [importlib.import_module(m) for m in %r]; print('ok')" % (APEX_EXTENSIONS,)
    assert _python(host, TORCH_PYTHON, code) == "ok"


def test_apex_fused_layer_norm_runs_on_the_gpu(host):
    code = (
        "import torch; from apex.normalization import FusedLayerNorm;"
        "x = torch.randn(64, 1024, device='cuda'); m = FusedLayerNorm(1024).cuda();"
        "ref = torch.nn.functional.layer_norm(x, (1024,), m.weight, m.bias);"
        "print(float((m(x) - ref).abs().max()) < 1e-4)"
    )
    assert _python(host, TORCH_PYTHON, code) == "True"


def test_the_env_is_a_conda_env_made_by_the_roles_with_cuda_torch_from_its_pip(host):
    assert host.file(ENV_PREFIX + "/conda-meta/history").is_file
    assert host.file("/opt/conda/conda-meta/history").is_file
    code = "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.__file__)"
    version, cuda, available, location = _python(host, TORCH_PYTHON, code).split()
    assert version == "2.11.0+cu130" and cuda == "13.0" and available == "True"
    assert location.startswith(ENV_PREFIX + "/lib/python3.12/site-packages/")
    # PyPI's torch 2.11.0 is its CUDA 13.0 build, with no local label in its metadata.
    code = "from importlib.metadata import distribution as d; print(d('torch').read_text('INSTALLER').strip())"
    assert _python(host, TORCH_PYTHON, code) == "pip"
    env = _results(host, "env")
    assert env["target"]["prefix"] == ENV_PREFIX and env["target"]["conda"] is True
    variant = env["info"]["torch_variant"]
    assert variant["variant"] == "cu130" and variant["chosen_by"].startswith("driver 580.159.04")
    assert variant["index"] == env["torch_index"] + "cu130"


def test_apex_was_compiled_in_the_env_against_its_python(host):
    toolchain = _results(host, "env")["build_toolchain"]
    assert toolchain["python"].startswith(ENV_PREFIX) and toolchain["python_h_present"]
    assert toolchain["kernel"].startswith(ENV_PREFIX + "/lib/python3.12/site-packages/")
    assert toolchain["libstdcxx_loaded"] and toolchain["nvcc_version"]


def test_thread_settings_are_set_on_activation(host):
    # What `conda activate torch` does with the env's hooks, and `conda deactivate` after it.
    out = host.check_output(
        "bash -c 'for hook in %s/etc/conda/activate.d/*.sh; do . \"$hook\"; done; echo $OMP_NUM_THREADS; "
        "for hook in %s/etc/conda/deactivate.d/*.sh; do . \"$hook\"; done; echo ${OMP_NUM_THREADS:-unset}'",
        ENV_PREFIX, ENV_PREFIX)
    active, restored = out.splitlines()
    assert int(active) >= 1
    assert restored == "unset"


def test_kernelspec_runs_the_torch_environment(host):
    spec = json.loads(host.file(KERNEL_JSON).content_string)
    # The env's own interpreter (bin/python or bin/python3: the same file in a venv).
    assert os.path.dirname(spec["argv"][0]) == os.path.join(ENV_PREFIX, "bin")
    assert host.file(spec["argv"][0]).linked_to == host.file(TORCH_PYTHON).linked_to
    assert spec["env"]["CUDA_HOME"] == "/usr/local/cuda"
    assert int(spec["env"]["OMP_NUM_THREADS"]) >= 1


def test_manifest_records_the_driver_and_a_passed_validation(host):
    manifest = json.loads(host.file("/etc/ansible/facts.d/aistack.fact").content_string)
    text = json.dumps(manifest)
    assert "580.159.04" in text
    assert manifest["validation"]["status"] == "passed"


def test_host_tuning_was_reverted(host):
    assert "[madvise]" in host.file("/sys/kernel/mm/transparent_hugepage/enabled").content_string
    assert host.file("/proc/sys/kernel/numa_balancing").content_string.strip() == "0"


def test_apex_was_published_at_the_cache_url_and_installed_from_it(host):
    results = RESULTS
    apex = _results(host, "apex")
    assert apex["built"]["installed_from"] == "build"
    assert apex["from_cache"]["installed_from"] == "url"
    key, wheel = apex["built"]["key"], apex["built"]["wheel"]
    requests = host.file(results + "/wheel-cache.log").content_string.splitlines()
    order = [requests.index(line) for line in ("PUT /apex/%s/%s 201" % (key, wheel),
                                               "PUT /apex/%s/aistack-apex.json 201" % key,
                                               "GET /apex/%s/%s 200" % (key, wheel))]
    assert order == sorted(order)


def test_the_kernel_ran_the_env_python_and_saw_the_gpu(host):
    ran = _results(host, "jupyter")
    assert ran["executable"].startswith(ENV_PREFIX + "/bin/python")
    # The host's first GPU, as its driver names it: the scenario runs on whichever GPU host it is given.
    first_gpu = _results(host, "host")["gpu_facts"]["gpus"][0]["name"]
    assert ran["cuda_available"] is True and ran["device"] == first_gpu and ran["torch"].endswith("+cu130")


def test_a_venv_named_in_one_place_is_the_target_and_validates(host):
    venv = _results(host, "venv")
    assert venv["target"]["prefix"] == "/opt/torch/.venv" and venv["target"]["conda"] is False
    assert venv["validation"]["gate"]["passed"] is True


def test_a_declared_gpu_more_than_the_host_has_fails_naming_the_missing_one(host):
    cases = dict((case["case"], case) for case in _results(host, "negatives"))
    refusal = cases["gpu_validate: one GPU more expected than the host has"]
    assert refusal["failed_as_designed"] is True
    assert "missing GPU index" in refusal["message"] and "gpu_validate_expect.count" in refusal["message"]
