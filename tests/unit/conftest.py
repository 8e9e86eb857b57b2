"""Make ``ansible_collections.aistack.gpu_node`` importable from the checkout.

Unit tests import the collection's code by its real package name, the way Ansible loads it.
A checkout is not laid out as ``ansible_collections/aistack/gpu_node``, so a private tree with
one symlink to the repository root is placed first on ``sys.path``.
"""

import hashlib
import json
import os
import sys
import tempfile

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# dev/'s scripts (tests/unit/dev) run from that folder, not as an installed package.
sys.path.insert(0, os.path.join(REPO_ROOT, "dev"))


def _collection_root():
    # One tree per checkout: two checkouts on one machine (a clone's `make test` beside a worktree's) would
    # otherwise turn one shared link to and fro, and one run would import the other checkout's plugins.
    checkout = hashlib.sha256(REPO_ROOT.encode("utf-8")).hexdigest()[:12]
    base = os.path.join(tempfile.gettempdir(), "aistack-gpu_node-unit-%d-%s" % (os.getuid(), checkout))
    namespace = os.path.join(base, "ansible_collections", "aistack")
    link = os.path.join(namespace, "gpu_node")
    os.makedirs(namespace, exist_ok=True)
    if os.path.realpath(link) != REPO_ROOT:
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(REPO_ROOT, link)
    return base


try:
    import ansible_collections.aistack.gpu_node  # noqa: F401  # already on the path; pylint: disable=unused-import
except ImportError:
    sys.path.insert(0, _collection_root())
    for name in [m for m in sys.modules if m == "ansible_collections" or m.startswith("ansible_collections.")]:
        del sys.modules[name]

FIXTURES = os.path.join(REPO_ROOT, "tests", "unit", "fixtures")
# Copies of the project's shared recorded data (tests/unit/fixtures/shared), kept in the repository so that a
# clone alone runs every test; test_shared_copies.py proves they equal the originals where a checkout has them beside it.
SHARED = os.path.join(FIXTURES, "shared")
SHARED_ORIGINAL = os.path.join(os.path.dirname(REPO_ROOT), "shared")
SHARED_COPIES = ("fixtures/conda-26.7", "fixtures/gpu-h200", "fixtures/gpu-h100", "reference/cuda_compat_data.yml")
# Shared files left out of the copies: ansible-test's line-endings check refuses the carriage
# returns that conda's progress bars left in this recording (it only holds progress and the error
# that the matching .json recording also has).
SHARED_NOT_COPIED = ("fixtures/conda-26.7/solve-fail-conflict.txt.stderr.txt",)

SHARED_H200 = os.path.join(SHARED, "fixtures", "gpu-h200")
SHARED_H100 = os.path.join(SHARED, "fixtures", "gpu-h100")
SHARED_CONDA = os.path.join(SHARED, "fixtures", "conda-26.7")
PUBLIC_FIXTURES = os.path.join(FIXTURES, "public")


def read_h200(name):
    """An unedited output captured on the H200 test host (``tests/unit/fixtures/shared/fixtures/gpu-h200``)."""
    with open(os.path.join(SHARED_H200, name)) as handle:
        return handle.read()


def read_h100(name):
    """An unedited output captured on the H100 test host (``tests/unit/fixtures/shared/fixtures/gpu-h100``)."""
    with open(os.path.join(SHARED_H100, name)) as handle:
        return handle.read()


def read_conda(name):
    """An unedited output of real conda 26.7 (``tests/unit/fixtures/shared/fixtures/conda-26.7``; INDEX.tsv names the command)."""
    with open(os.path.join(SHARED_CONDA, name)) as handle:
        return handle.read()


def read_public(name):
    """A public sample from ``tests/unit/fixtures/public`` without its leading ``# source:`` line."""
    with open(os.path.join(PUBLIC_FIXTURES, name)) as handle:
        lines = handle.read().splitlines(True)
    return "".join(lines[1:] if lines and lines[0].startswith("# source:") else lines)


def result_contract_problems(result):
    """What a module's or action plugin's result breaks of the contract ansible-core holds modules to: a
    non-zero ``rc`` comes with ``failed`` set by the module (ansible-core 2.22 deprecates inferring the
    failure from ``rc``), and no deprecation is returned."""
    problems = []
    rc = result.get("rc")
    if rc not in (None, 0, "0") and "failed" not in result:
        problems.append("rc=%r without `failed` (ansible-core infers the failure; 2.22 deprecates that)" % (rc,))
    if result.get("deprecations"):
        problems.append("deprecations returned: %r" % (result["deprecations"],))
    return problems


@pytest.fixture(autouse=True)
def module_results_keep_the_contract(monkeypatch):
    """Every module result a unit test produces (AnsibleModule.exit_json and fail_json end in
    _record_module_result) is checked by result_contract_problems; a test that produced a bad one fails."""
    from ansible.module_utils.basic import AnsibleModule

    problems = []
    record = AnsibleModule._record_module_result

    def checked(self, result):
        problems.extend(result_contract_problems(result))
        return record(self, result)
    monkeypatch.setattr(AnsibleModule, "_record_module_result", checked)
    yield
    assert not problems, "module result: %s" % "; ".join(problems)


def run_module(module, args, capsys):
    """Run ``module.main()`` with ``args``; return its exit code and the JSON it printed."""
    from ansible.module_utils.testing import patch_module_args

    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            module.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


# Fake sysfs trees for the NUMA tests.

def _cpus(cpulist):
    cpus = []
    for part in cpulist.split(","):
        first, _dash, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def write(root, path, text):
    full = os.path.join(str(root), path)
    if not os.path.isdir(os.path.dirname(full)):
        os.makedirs(os.path.dirname(full))
    with open(full, "w") as handle:
        handle.write(text)


def make_host(root, nodes, siblings_offset=None, gpus=()):
    """A sysfs tree: ``nodes`` {node: cpulist}; SMT sibling of cpu c is c + ``siblings_offset``;
    ``gpus`` a list of (bus id, numa_node, local_cpulist)."""
    for node, cpulist in nodes.items():
        write(root, "sys/devices/system/node/node%d/cpulist" % node, cpulist + "\n")
        for cpu in _cpus(cpulist):
            group = [cpu]
            if siblings_offset:
                group = sorted({cpu, cpu + siblings_offset if cpu < siblings_offset else cpu - siblings_offset})
            write(root, "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % cpu,
                  ",".join(str(sibling) for sibling in group) + "\n")
    for bus, numa, cpulist in gpus:
        device = "sys/bus/pci/devices/%s/" % bus
        for name, value in (("vendor", "0x10de"), ("class", "0x030200"), ("numa_node", str(numa)),
                            ("local_cpulist", cpulist)):
            write(root, device + name, value + "\n")


def h200_host(root):
    """The H200 test host as recorded: sysfs-node.txt, sysfs-gpu-numa.txt, one thread per core (lscpu)."""
    node_cpulist = read_h200("sysfs-node.txt").split()[-1]
    path, _class, numa, cpulist = read_h200("sysfs-gpu-numa.txt").split()
    make_host(root, {0: node_cpulist},
              gpus=[(os.path.basename(path), int(numa.split("=")[1]), cpulist.split("=")[1])])


def run_action(action_class, args, search_path, check_mode=False, task_vars=None, register=None):
    """Run an action plugin of the collection on the controller with ``args`` (and ``task_vars``); files
    are looked up under ``search_path`` (its ``files/`` folder, like a role's)."""
    from unittest import mock

    from ansible.parsing.dataloader import DataLoader
    from ansible.playbook.play_context import PlayContext

    task = mock.MagicMock(args=args, async_val=0, check_mode=check_mode, action=action_class.__module__, register=register)
    task.get_search_path.return_value = [str(search_path)]
    action = action_class(task, mock.MagicMock(), PlayContext(), DataLoader(), mock.MagicMock(), mock.MagicMock())
    result = action.run(task_vars=task_vars or {})
    assert not result_contract_problems(result), "action result: %s" % "; ".join(result_contract_problems(result))
    return result


def _trusted(value):
    """A role file's value as the role's loader gives it: its templates trusted."""
    from ansible.template import trust_as_template  # pylint: disable=import-outside-toplevel
    if isinstance(value, dict):
        return dict((key, _trusted(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_trusted(item) for item in value]
    return trust_as_template(value) if isinstance(value, str) and "{{" in value else value


def run_planner(action_class, variables, node, args=None, check_mode=False, register=None):
    """Run a planning action plugin as a task with ``args`` on a host whose variables are ``variables``, templated
    by a real Templar (the role's settings are read from them); ``node`` answers its ``_execute_module`` calls."""
    from unittest import mock  # pylint: disable=import-outside-toplevel

    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    from ansible.playbook.play_context import PlayContext  # pylint: disable=import-outside-toplevel
    from ansible.template import Templar  # pylint: disable=import-outside-toplevel

    task = mock.MagicMock(args=args or {}, async_val=0, check_mode=check_mode, action=action_class.__module__,
                          register=register)
    action = action_class(task, mock.MagicMock(), PlayContext(), DataLoader(),
                          Templar(loader=DataLoader(), variables=variables), mock.MagicMock())
    with mock.patch.object(action_class, "_execute_module", side_effect=node):
        result = action.run(task_vars=variables)
    assert not result_contract_problems(result), result
    return result


def read_role_vars(role):
    """``(defaults, vars)`` of ``roles/<role>`` as the role's loader gives them to a task (templates trusted)."""
    import yaml  # pylint: disable=import-outside-toplevel
    loaded = []
    for name in ("defaults", "vars"):
        with open(os.path.join(REPO_ROOT, "roles", role, name, "main.yml")) as handle:
            loaded.append(_trusted(yaml.safe_load(handle)))
    return tuple(loaded)
