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
  - The decisions of the P(aistack.gpu_node.apex_build#role) role, taken on the controller from the role's variables
    and what the role read from the node; it never reads or changes the node.
  - With O(stage=gate), the APEX version to build, the requested setup.py flags, whether that version still has
    the legacy APIs, and whether the node gets APEX at all (a node without a GPU gets its CUDA kernels only as a
    build host with a declared arch list).
  - With O(stage=key), the wheel's cache key, its inputs (the APEX source, torch, torch's CUDA as
    C(torch_cuda_version) for builds that compile CUDA, the Python tag, the platform, the arch list, the flags)
    and the places named after it.
  - With O(stage=markers), the state of the cache entry's marker on the node, in the controller cache (read here)
    and at the cache URL.
  - With O(stage=action), what this host does (C(build), C(install) or C(none)), what it hands on, and, for a
    build, what stops it before its source is read, each blocker with its fix.
  - With O(stage=source), the build of the source's C(setup.py) (read, never run), that is its flags, environment,
    parallelism sized for the node, and the blockers of the plan's own CUDA needs.
  - With O(stage=entry), the verified entry an installing host takes and where it is.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description: Which decision, see the description.
    type: str
    required: true
    choices: [gate, key, markers, action, source, entry]
  version:
    description: C(apex_build_version) for O(stage=gate); the resolved version for O(stage=key).
    type: str
    default: ''
  legacy_apis:
    description: C(apex_build_legacy_apis). Used by O(stage=gate).
    type: bool
    default: false
  tested_commit:
    description: The APEX commit built when O(version) is empty and O(legacy_apis) not set. Used by O(stage=gate).
    type: str
    default: ''
  cpp_ext:
    description: C(apex_build_cpp_ext). Used by O(stage=gate) and O(stage=source).
    type: bool
    default: true
  cuda_ext:
    description: C(apex_build_cuda_ext). Used by every stage but O(stage=markers) and O(stage=entry).
    type: bool
    default: true
  contrib_extensions:
    description: C(apex_build_contrib_extensions). Used by O(stage=gate), O(stage=key) and O(stage=source).
    type: list
    elements: str
    default: []
  gpu_state:
    description: The node's C(ansible_facts.aistack_gpu.state) from M(aistack.gpu_node.gpu_facts). Used by O(stage=gate).
    type: str
    default: ''
  build_host:
    description: Whether the node is one of C(apex_build_build_hosts). Used by O(stage=gate).
    type: bool
    default: false
  arch_list:
    description:
      - C(apex_build_arch_list) for O(stage=gate) and O(stage=key); the arch list RV(arch_list) returned by
        O(stage=key) for O(stage=action) and O(stage=source).
    type: str
    default: ''
  probe_output:
    description: What the role's environment probe (C(apex_env.py probe)) printed, JSON. Used by O(stage=key).
    type: str
    default: ''
  probe:
    description: The probe's reading, RV(probe) of O(stage=key). Used by O(stage=markers), O(stage=action) and O(stage=source).
    type: dict
  compat:
    description: The C(report) of M(aistack.gpu_node.cuda_compat) run with C(apex=true). Used by O(stage=key), O(stage=action) and O(stage=source).
    type: dict
    default: {}
  source_type:
    description: C(apex_build_source_type). Used by O(stage=key).
    type: str
    choices: [git, archive]
    default: git
  archive_sha256:
    description: The sha256 of the source archive, for O(source_type=archive). Used by O(stage=key).
    type: str
    default: ''
  archive:
    description:
      - The source archive on the controller, for O(source_type=archive) without O(archive_sha256); hashed on the
        controller. An archive that cannot be read fails the module naming C(apex_build_archive). Used by O(stage=key).
    type: str
    default: ''
  flags:
    description: The requested flags, RV(flags) of O(stage=gate). Used by O(stage=key).
    type: list
    elements: str
    default: []
  cache_dir:
    description: C(apex_build_cache_dir). Used by O(stage=key).
    type: str
    default: ''
  work_dir:
    description: C(apex_build_work_dir). Used by O(stage=key).
    type: str
    default: ''
  cache_url:
    description: C(apex_build_cache_url). Used by O(stage=key).
    type: str
    default: ''
  key:
    description: The cache key, RV(key) of O(stage=key). Used by O(stage=markers), O(stage=action) and O(stage=entry).
    type: str
    default: ''
  marker_name:
    description: The file name of a cache entry's marker.
    type: str
    default: aistack-apex.json
  node_marker:
    description:
      - The registered result of M(ansible.builtin.slurp) of the entry's marker on the node. Used by O(stage=markers).
      - Not needed when the probe read the entry (its C(cache_entries) has O(key)).
    type: dict
    default: {}
  url_marker:
    description:
      - The registered result of M(ansible.builtin.uri) fetching the marker at the cache URL; only a status of 200
        counts as a marker. Used by O(stage=markers) and O(stage=entry).
    type: dict
    default: {}
  shared_marker:
    description:
      - The registered result of M(ansible.builtin.slurp) re-reading the node's marker on a shared cache folder;
        skipped or empty, the node entry of O(stage=action) counts instead. Used by O(stage=entry).
    type: dict
    default: {}
  controller_cache_dir:
    description:
      - C(apex_build_controller_cache_dir), whose marker for O(key) is read on the controller. Used by O(stage=markers),
        O(stage=action) and O(stage=entry).
    type: str
    default: ''
  markers:
    description: RV(markers) of O(stage=markers). Used by O(stage=action).
    type: dict
    default: {}
  node_wheel:
    description:
      - The registered result of M(ansible.builtin.stat) (sha256) of the node entry's wheel. Used by O(stage=action).
      - Not needed when the probe read the entry (its C(cache_entries) has O(key)).
    type: dict
    default: {}
  node_entry:
    description: RV(node_entry) of O(stage=action). Used by O(stage=entry).
    type: dict
  is_builder:
    description: Whether this host builds for its cache key (the role elects one builder per key). Used by O(stage=action).
    type: bool
    default: false
  force_rebuild:
    description: C(apex_build_force_rebuild). Used by O(stage=action) and O(stage=entry).
    type: bool
    default: false
  cache_url_upload:
    description: C(apex_build_cache_url_upload). Used by O(stage=action).
    type: bool
    default: false
  overrides:
    description:
      - The parallelism set by hand, C(max_jobs), C(parallel_build), C(nvcc_threads) (0 sizes it from the node). Used by
        O(stage=action) and O(stage=source).
    type: dict
    default: {}
  mib_per_job:
    description: C(apex_build_mib_per_job). Used by O(stage=action) and O(stage=source).
    type: int
    default: 3686
  setup_py:
    description: The registered result of M(ansible.builtin.slurp) of the source's C(setup.py). Used by O(stage=source).
    type: dict
    default: {}
  cuda_home:
    description: C(apex_build_cuda_home); it counts only where cuda_compat found nvcc. Used by O(stage=source).
    type: str
    default: ''
  inputs:
    description:
      - The role's other variables to check at O(stage=gate), named without the C(apex_build_) prefix (C(env_prefix),
        C(source_type), C(archive), C(cache_dir), C(work_dir), C(controller_cache_dir), C(poll_s), C(timeout_s),
        C(cache_url), C(cache_url_upload)); each check runs only for the names given. What is wrong comes back as
        RV(problems).
    type: dict
    default: {}
  proof_inputs:
    description:
      - What a verify of the installed APEX proves against besides the wheel's cache key, the environment, the driver
        and the GPUs (which the environment probe compares itself), that is the verify's options and the verify
        script's digest. Used by O(stage=key).
    type: dict
    default: {}
  proof_key:
    description: RV(proof_key) of O(stage=key). Used by O(stage=action).
    type: str
    default: ''
  verify_always:
    description: C(apex_build_verify_always); when set, no recorded proof stands for a verify. Used by O(stage=action).
    type: bool
    default: false
extends_documentation_fragment:
  - aistack.gpu_node.attributes.read_only
  - aistack.gpu_node.attributes.controller_plan
  - aistack.gpu_node.attributes.per_host
notes:
  - O(stage=source) fails naming C(apex_build_contrib_extensions) for an extension the source does not have, and
    the parallelism factors when they cannot fit the node's memory.
seealso:
  - module: aistack.gpu_node.cuda_compat
'''

EXAMPLES = r'''
- name: Decide whether this node gets APEX
  aistack.gpu_node.apex_build_plan:
    stage: gate
    tested_commit: 6424da3b4faa6c8f062da4a48c424fff3f02d42d
    gpu_state: "{{ ansible_facts.aistack_gpu.state }}"
    build_host: "{{ inventory_hostname in apex_build_build_hosts }}"
    inputs:
      source_type: git
      cache_dir: /var/cache/aistack/apex-wheels
  register: gate

- name: Size the build of the source's setup.py
  aistack.gpu_node.apex_build_plan:
    stage: source
    setup_py: "{{ setup_text }}"
    probe: "{{ keyed.probe }}"
    compat: "{{ compat.report }}"
    arch_list: "{{ keyed.arch_list }}"
  register: source
'''

RETURN = r'''
version:
  description: The APEX version to build.
  returned: O(stage=gate)
  type: str
  sample: 6424da3b4faa6c8f062da4a48c424fff3f02d42d
flags:
  description: The setup.py flags requested.
  returned: O(stage=gate)
  type: list
  elements: str
  sample: ["--cpp_ext", "--cuda_ext"]
legacy_tag:
  description: The last APEX tag with C(apex.amp) and C(apex.parallel) (upstream removed them after it), built when
    O(legacy_apis) is set and O(version) empty.
  returned: O(stage=gate)
  type: str
  sample: '25.05'
legacy_apis_ref:
  description: Whether the version still has C(apex.amp) and C(apex.parallel); null for a commit, which cannot tell.
  returned: O(stage=gate)
  type: bool
problems:
  description:
    - What is wrong with the inputs beyond their types, one message per variable naming what was expected (a branch
      as O(version), a relative path, an arch list in C(sm_90) form, a legacy-API request on a version without them
      ...); empty when nothing is.
  returned: O(stage=gate)
  type: list
  elements: str
gate:
  description: C(run) (whether the node gets APEX) and C(reason), the one line a skipped node reports.
  returned: O(stage=gate)
  type: dict
  sample: {"run": true, "reason": null}
probe:
  description:
    - The environment probe's reading (Python tag, platform, cores, memory, build tools, installed APEX).
    - Also the environment's state digest C(env_state), and the C(proof) an earlier verify recorded for that state, or null.
    - C(cache_entries) holds the node cache's entries whose marker names the installed wheel, by key (the marker's text
      and the sha256 of the entry's wheel as it is now), so that a run that changes nothing reads neither again.
  returned: O(stage=key)
  type: dict
arch_list:
  description: The TORCH_CUDA_ARCH_LIST of the build, the user's or derived from the GPUs; empty when neither.
  returned: O(stage=key)
  type: str
  sample: "9.0"
key_inputs:
  description: What the cache key is computed from.
  returned: O(stage=key)
  type: dict
key:
  description: The cache key, 24 hex digits.
  returned: O(stage=key)
  type: str
entry:
  description: The cache entry's folder on the node.
  returned: O(stage=key)
  type: str
tree_root:
  description: The build folder on the node.
  returned: O(stage=key)
  type: str
url_entry:
  description: The cache entry's URL, empty without a cache URL.
  returned: O(stage=key)
  type: str
markers:
  description: For C(node), C(controller) and C(url), C(entry) (the marker, or null) and C(problem) (why a marker is not used, or null).
  returned: O(stage=markers)
  type: dict
proof_key:
  description: The key a verify's proof is recorded under, from the cache key and O(proof_inputs); 24 hex digits.
  returned: O(stage=key)
  type: str
proven:
  description:
    - Whether the proof recorded by an earlier verify (the probe's C(proof), made on the environment's present state)
      stands for this run's, so that the installed APEX need not be imported again. Only with RV(action=none), the
      same RV(proof_key) and no problem found.
  returned: O(stage=action)
  type: bool
action:
  description: C(build), C(install) or C(none) (the verified wheel is installed).
  returned: O(stage=action)
  type: str
node_entry:
  description: The node's own entry when its wheel still has the marker's sha256, else null.
  returned: O(stage=action)
  type: dict
entry_source:
  description: C(node) with a node entry, else null (O(stage=action)); where the chosen entry is, C(node), C(controller) or C(url), or null (O(stage=entry)).
  returned: O(stage=action), O(stage=entry)
  type: str
controller_has_entry:
  description: Whether the controller cache has a valid entry.
  returned: O(stage=action)
  type: bool
url_has_entry:
  description: Whether the cache URL has a valid entry.
  returned: O(stage=action)
  type: bool
share_pending:
  description: Whether this builder keeps a verified entry the controller cache lacks.
  returned: O(stage=action)
  type: bool
publish_pending:
  description: Whether this builder keeps a verified entry the cache URL lacks (and uploads are on).
  returned: O(stage=action)
  type: bool
blockers:
  description: Why this host cannot build, each C(message) with its C(fix); empty when it can or does not build.
  returned: O(stage=action), O(stage=source)
  type: list
  elements: dict
overrides_problem:
  description: Why the parallelism set by hand cannot fit the node's memory, or null.
  returned: O(stage=action)
  type: str
plan:
  description: The build's C(flags), C(env), C(config_settings), C(needs_nvcc), C(required_modules), C(optional_modules), C(parallel_env).
  returned: O(stage=source)
  type: dict
settings:
  description: C(parallelism) (C(max_jobs), C(parallel_build), C(nvcc_threads), C(peak_jobs), C(memory_jobs)) and the build's C(env).
  returned: O(stage=source)
  type: dict
entry_meta:
  description: The marker of the verified entry to install, or null when no place has one.
  returned: O(stage=entry)
  type: dict
'''
