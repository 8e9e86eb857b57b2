"""What numa_tuning and jupyter_kernel left on the node, checked from outside the roles."""

import json
import os
import shlex

import pytest
import yaml

VENV = "/opt/torch/.venv"
CONDA = "/opt/fakeconda"
EXTRA = ("AISTACK_NUMA_TEST", "two words; $HOME")
TOKEN_FILE = "/etc/jupyterlab/token.env"
with open(os.path.join(os.path.dirname(__file__), "..", "molecule.yml")) as _scenario:
    LAB_PASSWORD = yaml.safe_load(_scenario)["provisioner"]["inventory"]["group_vars"]["all"]["numa_jupyter_lab_password"]


@pytest.fixture
def physical_cores(host):
    """Distinct (package, core) pairs of the online CPUs: what the thread budget must equal on a GPU-less node."""
    script = ("import glob\n"
              "cores = set()\n"
              "for path in glob.glob('/sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list'):\n"
              "    cores.add(open(path).read().strip())\n"
              "print(len(cores))\n")
    return int(host.check_output("python3 -c %s" % shlex.quote(script)))


def shell(host, script):
    return host.run("bash -c %s" % shlex.quote(script))


def show(names):
    return "; ".join('echo "%s=${%s-<unset>}"' % (name, name) for name in names)


NAMES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", EXTRA[0])


def test_venv_activation_sets_and_deactivate_restores(host, physical_cores):
    result = shell(host, "export OMP_NUM_THREADS=before; unset MKL_NUM_THREADS; export %s=old\n"
                         ". %s/bin/activate; %s; deactivate; %s" % (EXTRA[0], VENV, show(NAMES), show(NAMES)))
    assert result.rc == 0, result.stderr
    assert result.stdout.splitlines() == [
        "OMP_NUM_THREADS=%d" % physical_cores, "MKL_NUM_THREADS=%d" % physical_cores, "%s=%s" % EXTRA,
        "OMP_NUM_THREADS=before", "MKL_NUM_THREADS=<unset>", "%s=old" % EXTRA[0]]


def test_venv_reactivation_keeps_the_original_values(host):
    result = shell(host, "export OMP_NUM_THREADS=before\n. %s/bin/activate; . %s/bin/activate; deactivate; %s"
                   % (VENV, VENV, show(["OMP_NUM_THREADS", "VIRTUAL_ENV"])))
    assert result.stdout.splitlines() == ["OMP_NUM_THREADS=before", "VIRTUAL_ENV=<unset>"], result.stderr


def test_conda_activate_d_sets_and_deactivate_d_restores(host, physical_cores):
    activate = "%s/etc/conda/activate.d/aistack-numa.sh" % CONDA
    deactivate = "%s/etc/conda/deactivate.d/aistack-numa.sh" % CONDA
    # conda sources these with sh-compatible shells: run them under dash too
    for interpreter in ("bash", "sh"):
        result = host.run("%s -c %s" % (interpreter, shlex.quote(
            "unset OMP_NUM_THREADS; export MKL_NUM_THREADS=4\n. %s; %s; . %s; %s" % (activate, show(NAMES), deactivate, show(NAMES)))))
        assert result.rc == 0, result.stderr
        assert result.stdout.splitlines() == [
            "OMP_NUM_THREADS=%d" % physical_cores, "MKL_NUM_THREADS=%d" % physical_cores, "%s=%s" % EXTRA,
            "OMP_NUM_THREADS=<unset>", "MKL_NUM_THREADS=4", "%s=<unset>" % EXTRA[0]]


def test_launcher_runs_unbound_without_gpu_and_sets_the_nvls_policy(host, physical_cores):
    result = host.run("%s/bin/aistack-numa-launch sh -c %s" % (VENV, shlex.quote(
        "echo $OMP_NUM_THREADS $NCCL_NVLS_ENABLE $TORCH_SYMM_MEM_DISABLE_MULTICAST $NVSHMEM_DISABLE_NVLS")))
    assert result.rc == 0
    assert result.stdout.split() == [str(physical_cores), "0", "1", "1"]
    assert "no NUMA node known for GPU '0'" in result.stderr
    assert host.run("NCCL_NVLS_ENABLE=1 %s/bin/aistack-numa-launch sh -c 'echo $NCCL_NVLS_ENABLE'" % VENV).stdout.strip() == "1"
    assert host.run("%s/bin/aistack-numa-launch" % VENV).rc == 2


def test_no_host_tuning_in_the_container(host):
    for path in ("/etc/sysctl.d/90-aistack-numa.conf", "/etc/tmpfiles.d/aistack-numa.conf", "/var/lib/aistack/numa_host_tuning.json"):
        assert not host.file(path).exists


def test_kernelspec_names_the_venv_python_and_env(host, physical_cores):
    spec = json.loads(host.file("/usr/local/share/jupyter/kernels/torch/kernel.json").content_string)
    assert spec["argv"] == ["%s/bin/python" % VENV, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert spec["env"] == {"OMP_NUM_THREADS": str(physical_cores), "MKL_NUM_THREADS": str(physical_cores), EXTRA[0]: EXTRA[1]}


def test_kernel_starts_and_runs_code_in_the_venv(host, physical_cores):
    script = (
        "from jupyter_client.manager import start_new_kernel\n"
        "km, kc = start_new_kernel(kernel_name='torch', startup_timeout=120)\n"
        "out = []\n"
        "kc.execute_interactive(\"import os, sys; print(sys.executable, os.environ['OMP_NUM_THREADS'], 6 * 7)\",\n"
        "                       timeout=120, output_hook=lambda m: out.append(m['content'].get('text', '')))\n"
        "kc.stop_channels(); km.shutdown_kernel(now=True)\n"
        "print(''.join(out).strip())\n")
    output = host.check_output("%s/bin/python -c %s" % (VENV, shlex.quote(script)))
    assert output.split() == ["%s/bin/python" % VENV, str(physical_cores), "42"]


def test_jupyterlab_listens_on_loopback_as_its_own_user(host):
    service = host.service("jupyterlab")
    assert service.is_running and service.is_enabled
    assert host.socket("tcp://127.0.0.1:8888").is_listening
    assert not host.socket("tcp://0.0.0.0:8888").is_listening
    users = host.check_output("ps -o user= -C jupyter-lab || ps -eo user,args | awk '/jupyter.lab/ && !/awk/ {print $1}'").split()
    assert users and set(users) == {"jupyter"}


def test_jupyterlab_needs_the_token(host):
    token = host.file(TOKEN_FILE).content_string.strip().split("=", 1)[1]
    assert host.file(TOKEN_FILE).mode == 0o600
    url = "http://127.0.0.1:8888/api/kernelspecs"
    status = "curl -s -o /dev/null -w '%%{http_code}' %s %s"
    assert host.check_output(status % ("", url)) == "403"
    assert host.check_output(status % ("-H 'Authorization: token wrong'", url)) == "403"
    assert host.check_output(status % ("-H 'Authorization: token %s'" % token, url)) == "200"
    specs = json.loads(host.check_output("curl -s -H 'Authorization: token %s' %s" % (token, url)))
    assert "torch" in specs["kernelspecs"]


def login(host, password):
    """A browser's login with curl (a cookie jar of its own): the login page's _xsrf cookie sent back in
    the form with the password. The status of the login, then of a kernels request with the jar's cookies."""
    jar = host.check_output("mktemp")
    url = "http://127.0.0.1:8888"
    try:
        host.run_expect([0], "curl -s -o /dev/null -c %s %s/login" % (jar, url))
        xsrf = host.check_output("awk '$6 == \"_xsrf\" {print $7}' %s" % jar)
        assert xsrf, host.file(jar).content_string
        posted = host.check_output("curl -s -o /dev/null -w '%%{http_code}' -b %s -c %s --data-urlencode %s --data-urlencode %s %s/login"
                                   % (jar, jar, shlex.quote("password=" + password), shlex.quote("_xsrf=" + xsrf), url))
        api = host.check_output("curl -s -o /dev/null -w '%%{http_code}' -b %s %s/api/kernelspecs" % (jar, url))
        return posted, api
    finally:
        host.run("rm -f %s" % jar)


def test_jupyterlab_logs_in_with_the_password_only(host):
    password = LAB_PASSWORD
    config = json.loads(host.file("/etc/jupyterlab/jupyter_server_config.json").content_string)
    assert config["PasswordIdentityProvider"]["hashed_password"].startswith("argon2:")
    assert password not in host.file("/etc/jupyterlab/jupyter_server_config.json").content_string
    assert login(host, password + "x") == ("401", "403")
    assert login(host, "") == ("401", "403")
    assert login(host, password) == ("302", "200")


def test_jupyterlab_files_holding_the_token_are_its_users_alone(host):
    """JupyterLab writes the token into its runtime files (jpserver-<pid>-open.html with its umask):
    the unit's UMask keeps them from other users."""
    token = host.file(TOKEN_FILE).content_string.strip().split("=", 1)[1]
    found = host.check_output("grep -rlF %s /var/lib/jupyterlab || true" % shlex.quote(token)).split()
    assert any(path.endswith(".json") and "/runtime/jpserver-" in path for path in found), found
    assert [(path, oct(host.file(path).mode), host.file(path).user) for path in found
            if host.file(path).mode & 0o077 or host.file(path).user != "jupyter"] == []
