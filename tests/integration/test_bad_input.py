"""Bad input to site.yml stops it in the preflight play with a named error: no provisioning task runs.

Each run is in check mode on this machine, so that a refusal that came too late would show as
predicted changes (and still change nothing here); the molecule drift scenario refuses the same
input for real on a fresh node.
"""

import pytest
from conftest import recap, run


def refused(args, inventory="inventories/local/hosts.yml"):
    proc = run(["ansible-playbook", "site.yml", "--check", "-i", inventory] + args, check=False)
    counts = recap(proc.stdout)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert sum(host["failed"] for host in counts.values()) >= 1
    assert sum(host["changed"] for host in counts.values()) == 0, proc.stdout
    assert "PLAY [Provision GPU nodes]" not in proc.stdout
    return proc.stdout


def test_unknown_inventory_group(tmp_path):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  children:\n    gpu_node:\n      hosts:\n        localhost:\n"
        "          ansible_connection: local\n          ansible_python_interpreter: '{{ ansible_playbook_python }}'\n")
    out = refused([], inventory=str(inventory))
    assert "Unknown inventory group(s) gpu_node: the plays target gpu_nodes and build_hosts; " \
           "declare your own groups in aistack_extra_groups." in out


def test_declared_extra_group_is_accepted(tmp_path):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  children:\n    gpu_nodes:\n      children:\n        rack_a:\n          hosts:\n            localhost:\n"
        "              ansible_connection: local\n              ansible_python_interpreter: '{{ ansible_playbook_python }}'\n")
    out = run(["ansible-playbook", "playbooks/preflight.yml", "-i", str(inventory), "--skip-tags", "conda",
               "-e", '{"aistack_extra_groups": ["rack_a"]}'], check=False).stdout
    assert recap(out)["localhost"]["failed"] == 0, out


@pytest.mark.parametrize("extra, message", [
    ("gpu_validate_min_amp_samples_per_s=fast",
     "gpu_validate: bad input: gpu_validate_min_amp_samples_per_s must be a number of at least 0, got 'fast'"),
    ('{"gpu_validate_min_fraction": {"gemm_bf16_tflops": "high", "gemm_fp16_tflops": 0.85, "copy_gbps": 0.6, '
     '"fused_adamw_ms": 0.6}}',
     "gpu_validate_min_fraction.gemm_bf16_tflops must be a number above 0 and at most 1.5"),
])
def test_threshold_that_is_not_a_number(extra, message):
    assert message in refused(["-e", extra])


def test_unknown_tag():
    out = refused(["--tags", "drivers"])
    assert "Unknown tag(s) drivers: known tags are preflight, driver, conda, env, apex, numa, jupyter, manifest, " \
           "validate." in out
