#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

# The module runs on the controller, as the action plugin of the same name; this file holds its documentation.

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: nvidia_driver_plan
short_description: Decide what the nvidia_driver role does on a node, and check its install
version_added: 0.1.0
description:
  - The decisions of the P(aistack.gpu_node.nvidia_driver#role) role, taken on the controller. It reads the role's
    variables from the task's variables, templated and typed by the role's C(meta/argument_specs.yml) (as
    C(ansible.builtin.validate_argument_spec) does), and the facts it needs from C(ansible_facts) (C(aistack_gpu),
    gathered once per run by the P(aistack.gpu_node.preflight#role) role, C(distribution), C(distribution_version),
    C(architecture), C(pkg_mgr), C(virtualization_role), C(virtualization_type)). A task passes only what its own
    YAML knows, the registered results. It never changes the node.
  - With O(stage=preflight) it first refuses what the argument spec cannot say (the formats of the branch and the
    versions, the reboot timeout above 0, Debian components not empty, the repository base a URL), naming each
    rule and the values given. Where this run has not read the facts it needs yet (a role run alone), it reads
    them in one M(aistack.gpu_node.node_facts) run and returns them as C(ansible_facts).
  - With O(stage=preflight) it reads the node through M(aistack.gpu_node.nvidia_driver_probe) (one round-trip for the
    role's install record, the boot id, the packages that own the driver's files, the installed driver packages and
    kernel headers, the installed kernels, the NVSwitches and Fabric Manager, the Secure Boot state), then returns
    the mode (C(install), C(adopt) or C(skip)), the install plan or the adopt report, and every problem that stops the
    role, each naming its variable and the way out. This decision is keyed (RV(inputs_key)). Registered under the same
    name with the same settings, facts, check mode and C(nvidia_driver_report), it is handed back (RV(reused)) without
    reading the node again. That is how the role's run right after site.yml's preflight play takes the decision made
    there, and how a later run of the role in the same playbook decides again.
  - With O(stage=installed), after the packages, it reads C(dkms status) for the planned module, what is held and,
    where the package manager ran outside check mode, the installed driver packages (one round-trip; none when none
    of them is read, and then the preflight's reading of the packages stands), and returns the installed driver
    version, the DKMS registrations and their problems, the packages to hold, and whether the node needs a reboot.
  - With O(stage=works), after the install and the reboot the role made, if any, it judges the install against the GPU
    facts read then, with a problem when a GPU node does not run the installed version and none while a reboot is
    still pending. With O(stage=fabric) it judges the NVSwitch fabric state in O(fabric_state). Neither reads the node.
author: aistack.gpu_node contributors (@aistack)
options:
  stage:
    description:
      - C(preflight) decides before any change; C(installed) checks the install after the packages; C(works) checks
        the driver runs at the installed version; C(fabric) checks the NVSwitch fabric state in O(fabric_state).
    type: str
    choices: [preflight, installed, works, fabric]
    default: preflight
  decision:
    description: What O(stage=preflight) returned (registered). Required by O(stage=installed).
    type: dict
  install:
    description:
      - The registered result of the role's package install task. Required by O(stage=installed), which reads whether
        it changed the packages (a new kernel module) or was skipped (check mode before the repository exists, or
        every planned package already installed).
    type: dict
  installed:
    description:
      - What O(stage=installed) returned (registered). Required by O(stage=works), which judges it against
        C(ansible_facts.aistack_gpu) read after the install (and the reboot, if any).
    type: dict
  fabric_state:
    description: The output of C(nvidia-smi -q) on a node with NVSwitches. Required by O(stage=fabric).
    type: str
extends_documentation_fragment:
  - aistack.gpu_node.attributes.per_host
attributes:
  action:
    support: full
    description:
      - Runs on the controller as an action plugin. It reads the node with M(aistack.gpu_node.nvidia_driver_probe)
        in O(stage=preflight) (unless the decision is handed back) and O(stage=installed).
  check_mode:
    support: full
    description: Read-only; runs the same way in check mode (O(stage=installed) leaves DKMS alone before the packages).
  diff_mode:
    support: none
    description: Returns no diff.
  platform:
    support: full
    platforms: posix
    description: Any controller; the probe needs a Linux node with apt or dnf.
notes:
  - The role's variables are read by their names (C(nvidia_driver_*)) and the role's private
    C(__nvidia_driver_record_path) (C(vars/main.yml)); the options are all a task passes.
  - Bad values of the role's variables come back as RV(problems), each naming its variable; the role's argument
    spec refuses bad types before this runs. With O(stage=preflight), problems fail the task too, its message
    naming the host and each problem (C(nvidia_driver on <host>), C((adopt)) after the host in adopt mode, then the problems).
    A record that is not JSON, a failing C(dkms status) and a failing C(dpkg --get-selections) fail the task.
seealso:
  - module: aistack.gpu_node.nvidia_driver_probe
  - module: aistack.gpu_node.gpu_facts
'''

EXAMPLES = r'''
# In the nvidia_driver role: the settings and the facts are read from the task's variables; a problem of the
# preflight decision fails the task.
- name: Decide install, adopt or skip, and plan the packages
  aistack.gpu_node.nvidia_driver_plan:
    stage: preflight
  register: __nvidia_driver_decision

- name: Check the install after the packages
  aistack.gpu_node.nvidia_driver_plan:
    stage: installed
    decision: "{{ __nvidia_driver_decision }}"
    install: "{{ __nvidia_driver_install }}"
  register: __nvidia_driver_installed

- name: Stop on the problems of the install check
  ansible.builtin.fail:
    msg: "{{ __nvidia_driver_installed.dkms.problems | join(' | ') }}"
  when: __nvidia_driver_installed.dkms.problems | length > 0

- name: Check the driver works at the installed version
  aistack.gpu_node.nvidia_driver_plan:
    stage: works
    installed: "{{ __nvidia_driver_installed }}"
  register: __nvidia_driver_works
'''

RETURN = r'''
ansible_facts:
  description:
    - What M(aistack.gpu_node.node_facts) read for a role run alone (C(ansible.builtin.setup)'s C(min) and C(virtual)
      subsets, C(aistack_gpu) where it was not set), published as facts; never part of a decision handed back.
  returned: O(stage=preflight), where this run had not read those facts yet and the decision has no problem
  type: dict
inputs_key:
  description: The sha256 of what the decision rests on (the settings, the facts, the record's path, check mode and
    C(nvidia_driver_report)).
  returned: O(stage=preflight)
  type: str
reused:
  description: Whether the decision was handed back from the registered one with the same RV(inputs_key), the node unread.
  returned: O(stage=preflight)
  type: bool
mode:
  description: C(install), C(adopt) or C(skip) (no NVIDIA GPU); null when the requested mode is unknown.
  returned: O(stage=preflight)
  type: str
  sample: install
reason:
  description:
    - Why that mode, in one line; null when a problem stops the role. A node left alone (no GPU) also hears the branch
      it would get and that branch's lifecycle.
  returned: O(stage=preflight)
  type: str
  sample: no driver on the node
plan:
  description:
    - The install plan (install mode), null otherwise. Keys C(family), C(package_manager) (apt, dnf), C(source),
      C(branch), C(version) (exact pin or null), C(flavour) (open, proprietary), C(flavour_reason), C(build)
      (dkms, precompiled), C(dkms_module), C(packages), C(install_names) (with the version pin), C(version_package),
      C(pin_version), C(dnf_module) (null without module streams, as on EL10), C(el_repositories) (distribution
      repositories enabled first, such as RHEL 10's extensions one for Red Hat's signed kmod-nvidia), C(packaging_sources)
      (where this plan's package names and pinning rules come from), C(hold_pattern) (what the pin and the hold cover),
      C(pinning_package) (NVIDIA's
      version-locking package, installed before the driver; null where NVIDIA publishes none), C(upgrader_exclusions)
      (unattended-upgrades blacklist entries or dnf-automatic C(excludepkgs) globs), C(headers), C(nvidia_repo),
      C(signed_modules), C(lifecycle) (the branch's C(status) V(supported), V(end_of_life) or V(unknown), its
      C(designation), C(eol) month and an end-of-life branch's C(successor)), C(warnings) (an end-of-life branch, shown
      as task warnings too), C(fabric_manager) (C(needed), C(reason) (V(no NVSwitch ...) without one), C(switches),
      C(packages), C(service)), C(missing) (with apt, the pinning package, headers and C(install_names) that are
      not installed at the planned version, so that apt runs only for them; null with dnf, which always runs),
      C(problems).
  returned: O(stage=preflight)
  type: dict
  sample: {"family": "debian", "source": "distro", "branch": 535, "version": "535.309.01", "flavour": "proprietary",
           "build": "dkms", "dkms_module": "nvidia-current", "packages": ["nvidia-kernel-dkms", "nvidia-smi", "libcuda1",
           "nvidia-persistenced"]}
adopt:
  description:
    - Adopt mode, what the node runs (C(version), C(branch), C(flavour), C(owners), C(gpus), C(reboot_needed), C(lifecycle)...).
    - C(fabric_manager) (C(needed), C(switches), C(version), C(reason)) says "no NVSwitch" on a node without one; with
      NVSwitches a Fabric Manager at another version than the driver is a problem.
  returned: O(stage=preflight)
  type: dict
problems:
  description:
    - What stops the role, each naming its variable and the way out; empty when nothing does. Only the first failing
      step's (mode, then the plan or the adopt policy, then Secure Boot). After the install, the DKMS problems
      (O(stage=installed)), the driver not working (O(stage=works)) or the fabric not trained (O(stage=fabric)).
  returned: always
  type: list
  elements: str
  sample: ["nvidia_driver_flavour: proprietary is impossible here: ..."]
secure_boot:
  description: C(enabled), C(disabled) or C(unsupported) (no EFI); null when no unsigned module is planned.
  returned: O(stage=preflight)
  type: str
  sample: disabled
record:
  description: The role's record of its own install, null when there is none.
  returned: O(stage=preflight)
  type: dict
owners:
  description: The packages that own the driver's files.
  returned: O(stage=preflight)
  type: list
  elements: str
  sample: ["libnvidia-ml1", "nvidia-smi"]
packages:
  description: The installed driver packages and kernel headers, by name, with their versions.
  returned: O(stage=preflight)
  type: dict
  sample: {"nvidia-kernel-dkms": "535.309.01-0+deb12u1"}
kernels:
  description: The installed kernels (C(/lib/modules/*) with a C(modules.order)).
  returned: O(stage=preflight)
  type: list
  elements: str
  sample: ["6.1.0-41-amd64"]
container:
  description: Whether the node is a container sharing its host's kernel (no reboot, no initramfs).
  returned: O(stage=preflight)
  type: bool
boot_id:
  description:
    - The boot id when the node was read. O(stage=installed) without DKMS or the hold to read returns the preflight's
      (the role reboots only after that stage).
  returned: O(stage=preflight) and O(stage=installed)
  type: str
installed_version:
  description: The driver version of the installed package, null when it is not installed.
  returned: O(stage=installed)
  type: str
  sample: 535.309.01
dkms:
  description: C(checked) (bool), C(entries) (module, version, kernel, arch, state) and C(problems).
  returned: O(stage=installed)
  type: dict
hold:
  description:
    - C(names), the installed driver packages the hold covers, and C(missing), those not held yet; both empty
      without C(nvidia_driver_hold).
  returned: O(stage=installed)
  type: dict
  sample: {"names": ["libcuda1", "nvidia-kernel-dkms"], "missing": ["libcuda1"]}
reboot_needed:
  description: The kernel module changed and no reboot followed, or the loaded module is not the installed one.
  returned: O(stage=installed)
  type: bool
reboot_now:
  description: Reboot needed, allowed by C(nvidia_driver_reboot_ok), and the node is not a container.
  returned: O(stage=installed)
  type: bool
reboot_pending:
  description: Reboot needed and not done by the role; what it reports.
  returned: O(stage=installed)
  type: bool
states:
  description: O(stage=fabric), the C(Fabric) section of each GPU, C(state) and C(status) (C(N/A) where the GPU reports none).
  returned: O(stage=fabric)
  type: list
  elements: dict
'''
