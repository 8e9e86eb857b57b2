#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: apex_build_plan
short_description: Decide what the apex_build role does on a node
version_added: 0.2.0
description:
  - The decisions of the P(aistack.gpu_node.apex_build#role) role, taken on the controller. It reads the role's
    variables from the task's variables, templated and typed by the role's C(meta/argument_specs.yml) (as
    C(ansible.builtin.validate_argument_spec) does), so a task passes only what its own YAML knows. It reads the
    node through read-only modules, one round-trip each and only where one is needed, and never changes it.
  - Each stage returns the plan so far with its own keys added; the role registers it and hands it to the next
    stage as O(plan).
  - With O(stage=before), the inputs (what is wrong with them fails the task, naming each variable) and whether the
    node gets APEX (a node without a GPU gets its CUDA kernels only as a build host with a declared arch list).
    With O(probe), on a node that gets APEX, also the environment (its Python tag, platform, cores, memory, build
    tools, installed APEX, the proof an earlier verify recorded and the CUDA toolkit), the CUDA chain with APEX's rule
    (M(aistack.gpu_node.cuda_compat), or the report the proof recorded while RV(cuda_chain_key) is the same), the
    wheel's cache key, and the cache entry's markers on the node, in the
    controller cache and at the cache URL. Given the O(plan) of a pass without O(probe), it takes that pass's
    gate instead of deciding it again (the role looks for the environment in between).
  - With O(stage=decide), what this host does (C(build), C(install) or C(none)) and what it hands on, given the
    O(builder) the role elected among the hosts with this cache key. A build that the CUDA chain, the tools or
    the memory stop fails the task, with each blocker's fix.
  - With O(stage=source), after the source is checked out, the build of its C(setup.py) (read, never run), that is
    its flags, environment and parallelism sized for the node.
  - With O(stage=entry), the verified cache entry this host installs and where it is, or with O(build) the entry of
    the wheel this host built.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: Which decision, see the description.
    type: str
    required: true
    choices: [before, decide, source, entry]
  probe:
    description:
      - Whether O(stage=before) reads the environment and the caches; V(false) checks the inputs and the gate alone
        (the role's C(gate) entry point, before the environment may exist). Required by O(stage=before).
    type: bool
  plan:
    description:
      - The registered result of the stage before. Required by O(stage=decide), O(stage=source) and O(stage=entry).
      - For O(stage=before) with O(probe), the result of the pass without it.
    type: dict
  builder:
    description:
      - The host that builds for this node's cache key, elected by the role across the play's hosts. It counts only
        when a wheel can travel (a shared cache folder, a controller cache or an uploadable cache URL); otherwise
        every host builds its own. Required by O(stage=decide).
    type: str
  build:
    description:
      - The registered C(ansible.builtin.async_status) result of this host's build, for O(stage=entry). A build that
        failed fails the task with its last lines; else the one wheel in the build folder's C(dist) is described.
    type: dict
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
attributes:
  action:
    support: full
    description:
      - Runs on the controller as an action plugin. It reads the node with C(ansible.builtin.command) (the
        environment probe), M(aistack.gpu_node.cuda_compat), M(ansible.builtin.stat), M(ansible.builtin.slurp),
        C(ansible.builtin.find) and M(ansible.builtin.uri) (a GET of the cache URL's marker).
  check_mode:
    support: full
    description:
      - Read-only. Check mode would skip the environment probe, so the role runs O(stage=before) with
        C(check_mode) set to false.
  diff_mode:
    support: none
    description: Returns no diff.
  platform:
    support: full
    platforms: posix
    description: Any controller; the modules it runs on the node need a POSIX node.
notes:
  - The role's variables are read by their names (C(apex_build_*)) and the role's private C(__apex_build_tested_commit),
    C(__apex_build_marker_name), C(__apex_build_env_script), C(__apex_build_proof_path) and
    C(__apex_build_verify_options) (C(vars/main.yml)); the other options are all a task passes.
  - O(stage=source) fails naming C(apex_build_contrib_extensions) for an extension the source does not have, and
    the parallelism factors when they cannot fit the node's memory.
seealso:
  - module: aistack.gpu_node.cuda_compat
'''

EXAMPLES = r'''
# In the apex_build role: the inputs, the environment and the caches, read-only.
- name: Check the inputs, the environment, the CUDA chain and the caches
  aistack.gpu_node.apex_build_plan:
    stage: before
    probe: "{{ node_probe_env_ready }}"
  register: __apex_build_plan
  check_mode: false

- name: Decide what this run does
  aistack.gpu_node.apex_build_plan:
    stage: decide
    plan: "{{ __apex_build_plan }}"
    builder: "{{ groups['build_hosts'] | first }}"
  register: __apex_build_plan
'''

RETURN = r'''
version:
  description: The APEX version to build.
  returned: always
  type: str
  sample: 6424da3b4faa6c8f062da4a48c424fff3f02d42d
flags:
  description: The setup.py flags requested.
  returned: always
  type: list
  elements: str
  sample: ["--cpp_ext", "--cuda_ext"]
legacy_tag:
  description: The last APEX tag with C(apex.amp) and C(apex.parallel) (upstream removed them after it), built when
    C(apex_build_legacy_apis) is set and C(apex_build_version) empty.
  returned: always
  type: str
  sample: '25.05'
legacy_apis_ref:
  description: Whether the version still has C(apex.amp) and C(apex.parallel); null for a commit, which cannot tell.
  returned: always
  type: bool
run:
  description: Whether the node gets APEX.
  returned: always
  type: bool
reason:
  description: Why the node gets no APEX, the one line a skipped node reports; null when it gets it.
  returned: always
  type: str
probed:
  description: Whether the environment and the caches were read (O(probe) on a node that gets APEX); the later stages need it.
  returned: always
  type: bool
key:
  description: The cache key, 24 hex digits; null when RV(probed) is false.
  returned: always
  type: str
probe:
  description:
    - The environment probe's reading (Python tag, platform, cores, memory, build tools, installed APEX).
    - Also the environment's state digest C(env_state), and the C(proof) an earlier verify recorded for that state, or null.
    - C(toolkit) holds each CUDA home M(aistack.gpu_node.cuda_compat) may take (the role's C(apex_build_cuda_home),
      E(CUDA_HOME), E(CUDA_PATH), the one of nvcc on E(PATH), C(/usr/local/cuda)) with its real path and its nvcc's real
      path, size and mtime, and the forward-compat libraries (C(/usr/local/cuda-*/compat/libcuda.so*)).
    - C(cache_entries) holds the node cache's entries whose marker names the installed wheel, by key (the marker's text
      and the sha256 of the entry's wheel as it is now), so that a run that changes nothing reads neither again.
  returned: RV(probed)
  type: dict
compat:
  description:
    - The C(report) of M(aistack.gpu_node.cuda_compat) with APEX's rule, on the environment as it was before any change.
    - The one the probe's C(proof) recorded, without running M(aistack.gpu_node.cuda_compat), when the proof's
      C(cuda_chain_key) is RV(cuda_chain_key).
  returned: RV(probed)
  type: dict
cuda_chain_key:
  description:
    - The key of what RV(compat) rests on besides the environment's state (which the proof is read for) - the
      interpreter, C(apex_build_cuda_home), the C(aistack_gpu) facts (driver, GPUs, compute capabilities), the probe's
      C(toolkit), the digest of M(aistack.gpu_node.cuda_compat)'s code and the month (a driver branch's end of life);
      24 hex digits, null without GPU facts. The role records it with the proof; any change checks the chain again.
  returned: RV(probed)
  type: str
arch_list:
  description: The TORCH_CUDA_ARCH_LIST of the build, the user's or derived from the GPUs; empty when neither.
  returned: RV(probed)
  type: str
  sample: "9.0"
key_inputs:
  description: What the cache key is computed from.
  returned: RV(probed)
  type: dict
entry:
  description: The cache entry's folder on the node.
  returned: RV(probed)
  type: str
tree_root:
  description: The build folder on the node.
  returned: RV(probed)
  type: str
url_entry:
  description: The cache entry's URL, empty without a cache URL.
  returned: RV(probed)
  type: str
marker_name:
  description: The file name of a cache entry's marker.
  returned: RV(probed)
  type: str
proof_key:
  description: The key a verify's proof is recorded under, from the cache key, the verify's options and the verify script's digest; 24 hex digits.
  returned: RV(probed)
  type: str
markers:
  description: For C(node), C(controller) and C(url), C(entry) (the marker, or null) and C(problem) (why a marker is not used, or null).
  returned: RV(probed)
  type: dict
node_wheel_sha256:
  description: The sha256 of the node entry's wheel as it is now, empty without one.
  returned: RV(probed)
  type: str
builder:
  description: The host that builds for this cache key; this host when a wheel cannot travel.
  returned: O(stage=decide) and after
  type: str
action:
  description: C(build), C(install) or C(none) (the verified wheel is installed).
  returned: O(stage=decide) and after
  type: str
node_entry:
  description: The node's own entry when its wheel still has the marker's sha256, else null.
  returned: O(stage=decide) and after
  type: dict
entry_meta:
  description: The marker of the entry this host installs or has installed (O(stage=decide) the node's own, O(stage=entry) the one found or built), or null.
  returned: O(stage=decide) and after
  type: dict
entry_source:
  description: Where RV(entry_meta) is, C(node), C(controller), C(url) or C(build) (the wheel this host built), or null.
  returned: O(stage=decide) and after
  type: str
controller_has_entry:
  description: Whether the controller cache has a valid entry.
  returned: O(stage=decide) and after
  type: bool
url_has_entry:
  description: Whether the cache URL has a valid entry.
  returned: O(stage=decide) and after
  type: bool
share_pending:
  description: Whether this builder keeps a verified entry the controller cache lacks.
  returned: O(stage=decide) and after
  type: bool
publish_pending:
  description: Whether this builder keeps a verified entry the cache URL lacks (and uploads are on).
  returned: O(stage=decide) and after
  type: bool
proven:
  description:
    - Whether the proof recorded by an earlier verify (the probe's C(proof), made on the environment's present state)
      stands for this run's, so that the installed APEX need not be imported again. Only with RV(action=none), the
      same RV(proof_key), no problem found and C(apex_build_verify_always) off.
  returned: O(stage=decide) and after
  type: bool
setup_py:
  description: The C(setup.py) the build runs.
  returned: O(stage=source) and after
  type: str
build_plan:
  description: The build's C(flags), C(env), C(config_settings), C(needs_nvcc), C(required_modules), C(optional_modules), C(parallel_env).
  returned: O(stage=source) and after
  type: dict
build_settings:
  description: C(parallelism) (C(max_jobs), C(parallel_build), C(nvcc_threads), C(peak_jobs), C(memory_jobs)) and the build's C(env).
  returned: O(stage=source) and after
  type: dict
wheel_path:
  description: The wheel this host built, in the build folder.
  returned: O(stage=entry) with O(build)
  type: str
'''
