"""What the GPU scenario left on the GPU host, checked from outside the roles (testinfra, local)."""

import json
import os

TORCH_PYTHON = os.environ.get("GPU_PYTHON", "/opt/torch/.venv/bin/python3")
ENV_PREFIX = os.path.dirname(os.path.dirname(TORCH_PYTHON))
APEX_EXTENSIONS = ("apex_C", "amp_C", "syncbn", "fused_layer_norm_cuda", "mlp_cuda", "fused_dense_cuda")
KERNEL_JSON = "/usr/local/share/jupyter/kernels/torch/kernel.json"


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


def test_thread_settings_are_set_on_activation(host):
    out = host.check_output("bash -c '. %s/bin/activate; echo $OMP_NUM_THREADS; deactivate; echo ${OMP_NUM_THREADS:-unset}'",
                            ENV_PREFIX)
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
    results = os.environ["GPU_RESULTS_DIR"]
    apex = json.loads(host.file(results + "/apex.json").content_string)
    assert apex["built"]["installed_from"] == "build"
    assert apex["from_cache"]["installed_from"] == "url"
    key, wheel = apex["built"]["key"], apex["built"]["wheel"]
    requests = host.file(results + "/wheel-cache.log").content_string.splitlines()
    order = [requests.index(line) for line in ("PUT /apex/%s/%s 201" % (key, wheel),
                                               "PUT /apex/%s/aistack-apex.json 201" % key,
                                               "GET /apex/%s/%s 200" % (key, wheel))]
    assert order == sorted(order)
