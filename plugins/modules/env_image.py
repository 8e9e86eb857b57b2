#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: env_image
short_description: Build a conda env as an OCI image from its explicit lock and pip lock, with podman
version_added: "0.2.0"
description:
  - Lays out a build context in O(work_dir) (the installer, the two locks, the pip wheels and the APEX wheel) and builds
    it with C(podman build) from the Containerfile that C(decide/env_image.containerfile) writes; see the
    aistack.gpu_node.env_image role.
  - The env is made with C(conda create --file <explicit lock>), so nothing is solved and no repodata is fetched.
  - Builds the stage before the clean-up (tagged C(<name>:<tag>-unpacked), removed afterwards unless O(keep_unpacked))
    and the final image, both with C(--timestamp) O(source_date_epoch), and reports both sizes and the final layers.
  - An image of that name and tag whose inputs label equals this context's sha256 is kept, and nothing is built.
author: aistack.gpu_node contributors (@aistack)
options:
  work_dir:
    description: Folder on the build host for the build context.
    type: path
    required: true
  explicit_lock:
    description: The env's explicit lock (C(conda list --explicit --md5)), on the build host.
    type: path
    required: true
  pip_lock:
    description: The env's pip lock (C(name==version) a line, maybe with C(--hash=sha256:...)); a missing file is an empty lock.
    type: path
    required: true
  pip_wheel_dir:
    description: Folder of wheels the pip lock is installed from (C(--no-index)); empty uses O(pip_index_url).
    type: path
  pip_index_url:
    description: Index URL for the pip lock; empty is pip's own.
    type: str
    default: ''
  apex_cache_entry:
    description: An APEX wheel cache entry (C(<cache>/<key>)) whose C(aistack-apex.json) names the wheel and its sha256; empty installs no APEX.
    type: path
  installer:
    description: The conda installer on the build host.
    type: path
    required: true
  installer_sha256:
    description: The installer's sha256.
    type: str
    required: true
  base_image:
    description: Image the env is built on.
    type: str
    required: true
  conda_prefix:
    description: Conda base inside the image.
    type: str
    default: /opt/conda
  env_name:
    description: Name of the env inside the image (C(<conda_prefix>/envs/<env_name>)).
    type: str
    required: true
  name:
    description: Image name.
    type: str
    required: true
  tag:
    description: Image tag.
    type: str
    required: true
  cuda_variant:
    description: CUDA variant label.
    type: str
    required: true
  collection_version:
    description: Version of the collection, a label.
    type: str
    required: true
  network:
    description: C(podman build --network) (C(host) reaches loopback mirrors); empty is podman's default.
    type: str
    default: ''
  no_cache:
    description: Build without podman's layer cache.
    type: bool
    default: false
  source_date_epoch:
    description: Timestamp of the image and of every file in its layers.
    type: int
    default: 0
  keep_unpacked:
    description: Keep the image of the stage before the clean-up.
    type: bool
    default: false
  compare_with:
    description: An image built from the same inputs before; its layers are compared with this build's, and where they
      differ the files that do (C(podman diff)) are returned in RV(differences).
    type: str
    default: ''
attributes:
  check_mode:
    support: full
    description: Reports whether the image would be built; builds nothing and writes nothing.
  diff_mode:
    support: none
    description: Returns no diff.
  platform:
    support: full
    platforms: posix
    description: A build host with podman.
'''

EXAMPLES = r'''
- name: Build the env image
  aistack.gpu_node.env_image:
    work_dir: /var/tmp/aistack-env-image
    explicit_lock: /opt/conda/envs/torch.explicit.txt
    pip_lock: /opt/conda/envs/torch.pip.txt
    installer: /var/tmp/Miniforge3-Linux-x86_64.sh
    installer_sha256: "{{ miniconda_installer_sha256 }}"
    base_image: docker.io/library/debian:bookworm-slim
    env_name: torch
    name: aistack-env-torch
    tag: latest
    cuda_variant: cu130
    collection_version: 1.0.0
'''

RETURN = r'''
image:
  description: The image built (or kept), C(name:tag).
  returned: always
  type: str
  sample: localhost/aistack-env-torch:latest
built:
  description: Whether podman built it in this run.
  returned: always
  type: bool
id:
  description: The image id; null in check mode before a build.
  returned: always
  type: str
layers:
  description: The final image's layer digests (C(RootFS.Layers)).
  returned: always
  type: list
  elements: str
size_before_cleanup:
  description: Bytes of the image of the stage before the clean-up; null when nothing was built.
  returned: always
  type: int
size:
  description: Bytes of the final image.
  returned: always
  type: int
labels:
  description: The image's labels (lock digests, CUDA variant, collection version, the inputs' sha256).
  returned: always
  type: dict
differences:
  description: "The layers that differ from O(compare_with)'s by position (C(index), C(first), C(second)), and C(files),
    what C(podman diff) says changed between the two images (C(changed), C(added), C(deleted) - the first 50 paths of each, a
    timestamp change included - and C(counts)); empty without O(compare_with), C(files) empty when every layer is the same."
  returned: always
  type: dict
  sample: {layers: [], files: {}}
containerfile:
  description: The Containerfile written into the context.
  returned: always
  type: str
'''

import json
import os
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aistack.gpu_node.plugins.module_utils.decide import env_image as ei

INPUTS_LABEL = ei.LABEL_PREFIX + 'inputs.sha256'


def read(path, missing=None):
    if not os.path.exists(path):
        return missing
    with open(path) as handle:
        return handle.read()


def file_sha256(module, path):
    return module.digest_from_file(path, 'sha256')


def inspect(module, podman, image):
    rc, out, _err = module.run_command([podman, 'image', 'inspect', '--format', 'json', image])
    if rc != 0:
        return None
    found = json.loads(out)[0]
    return {'id': found.get('Id'), 'size': found.get('Size'), 'layers': (found.get('RootFS') or {}).get('Layers') or [],
            'labels': found.get('Labels') or {}}


def context_files(module, params):
    """``{name in the context: source path}`` and the APEX wheel's name, refusing what cannot be built."""
    explicit = read(params['explicit_lock'])
    if explicit is None:
        module.fail_json(msg='env_image_explicit_lock: %s does not exist on the build host (conda_env writes it '
                             'beside the env)' % params['explicit_lock'])
    problem = ei.explicit_lock_problem(explicit)
    if problem:
        module.fail_json(msg='env_image_explicit_lock: %s is no explicit conda lock: %s' % (params['explicit_lock'], problem))
    if file_sha256(module, params['installer']) != params['installer_sha256']:
        module.fail_json(msg='env_image_installer_sha256: %s does not have that sha256' % params['installer'])
    files = {'explicit.txt': params['explicit_lock'], os.path.basename(params['installer']): params['installer']}
    if os.path.exists(params['pip_lock']):
        files['pip.txt'] = params['pip_lock']
    apex_wheel = None
    if params['apex_cache_entry']:
        marker_path = os.path.join(params['apex_cache_entry'], 'aistack-apex.json')
        try:
            marker = json.loads(read(marker_path, 'null'))
        except ValueError:
            marker = None
        problem = ei.apex_entry_problem(marker) if marker is not None else 'it has no readable aistack-apex.json'
        wheel = os.path.join(params['apex_cache_entry'], (marker or {}).get('wheel') or '')
        if not problem and file_sha256(module, wheel) != marker['wheel_sha256']:
            problem = 'its wheel %s does not have the sha256 its marker names' % wheel
        if problem:
            module.fail_json(msg='env_image_apex_cache_entry: %s: %s' % (params['apex_cache_entry'], problem))
        apex_wheel = marker['wheel']
        files[apex_wheel] = wheel
    if params['pip_wheel_dir']:
        for name in sorted(os.listdir(params['pip_wheel_dir'])):
            if name.endswith('.whl'):
                files['wheels/' + name] = os.path.join(params['pip_wheel_dir'], name)
    return files, explicit, apex_wheel


def lay_out(context, files, text):
    if os.path.isdir(context):
        shutil.rmtree(context)
    os.makedirs(os.path.join(context, 'wheels'))
    for name in sorted(files):
        shutil.copyfile(files[name], os.path.join(context, name))
    with open(os.path.join(context, 'Containerfile'), 'w') as handle:
        handle.write(text)


def main():
    module = AnsibleModule(argument_spec=dict(
        work_dir=dict(type='path', required=True), explicit_lock=dict(type='path', required=True),
        pip_lock=dict(type='path', required=True), pip_wheel_dir=dict(type='path'), pip_index_url=dict(type='str', default=''),
        apex_cache_entry=dict(type='path'), installer=dict(type='path', required=True),
        installer_sha256=dict(type='str', required=True), base_image=dict(type='str', required=True),
        conda_prefix=dict(type='str', default='/opt/conda'), env_name=dict(type='str', required=True),
        name=dict(type='str', required=True), tag=dict(type='str', required=True), cuda_variant=dict(type='str', required=True),
        collection_version=dict(type='str', required=True), network=dict(type='str', default=''),
        no_cache=dict(type='bool', default=False), source_date_epoch=dict(type='int', default=0),
        keep_unpacked=dict(type='bool', default=False), compare_with=dict(type='str', default=''),
    ), supports_check_mode=True)
    params = module.params
    podman = module.get_bin_path('podman', required=True)
    files, explicit, apex_wheel = context_files(module, params)
    pip_lock = read(params['pip_lock'], '')
    labels = ei.labels(explicit, pip_lock, params['cuda_variant'], params['collection_version'],
                       file_sha256(module, files[apex_wheel]) if apex_wheel else None)

    def render(image_labels):
        return ei.containerfile(params['base_image'], params['conda_prefix'], params['env_name'],
                                os.path.basename(params['installer']), params['installer_sha256'], pip_lock, image_labels,
                                pip_wheel_dir='wheels' if params['pip_wheel_dir'] else None,
                                pip_index_url=params['pip_index_url'], apex_wheel=apex_wheel,
                                source_date_epoch=params['source_date_epoch'])

    # What the image is made from: the Containerfile and every file of the context, by name and content.
    inputs = ei.sha256_text(render(labels) + ''.join('%s %s\n' % (name, file_sha256(module, files[name])) for name in sorted(files)))
    labels[INPUTS_LABEL] = inputs
    text = render(labels)
    image = '%s:%s' % (params['name'], params['tag'])
    result = dict(changed=False, image=image, built=False, containerfile=text, size_before_cleanup=None, differences={})
    current = inspect(module, podman, image)
    if current and current['labels'].get(INPUTS_LABEL) == inputs:
        module.exit_json(id=current['id'], layers=current['layers'], size=current['size'], labels=current['labels'], **result)
    if module.check_mode:
        result.update(changed=True)
        module.exit_json(id=None, layers=[], size=None, labels=labels, **result)
    context = os.path.join(params['work_dir'], 'context')
    lay_out(context, files, text)
    build = [podman, 'build', '--timestamp', str(params['source_date_epoch']), '--layers', '--pull=never' if
             params['base_image'].startswith('localhost/') else '--pull=missing']
    build += ['--network', params['network']] if params['network'] else []
    build += ['--no-cache'] if params['no_cache'] else []
    unpacked = '%s:%s-unpacked' % (params['name'], params['tag'])
    for command in (build + ['--target', ei.UNPACKED_STAGE, '-t', unpacked, context], build + ['-t', image, context]):
        rc, out, err = module.run_command(command)
        if rc != 0:
            module.fail_json(msg='podman build failed (rc=%s): %s' % (rc, (err or out)[-3000:]), cmd=command, **result)
    before = inspect(module, podman, unpacked)
    if not params['keep_unpacked']:
        module.run_command([podman, 'rmi', unpacked])
    after = inspect(module, podman, image)
    result.update(changed=True, built=True, size_before_cleanup=before['size'])
    earlier = inspect(module, podman, params['compare_with']) if params['compare_with'] else None
    if earlier:
        result['differences'] = {'layers': ei.layer_differences(earlier['layers'], after['layers']), 'files': {}}
        if result['differences']['layers']:
            rc, out, _err = module.run_command([podman, 'diff', '--format', 'json', params['compare_with'], image])
            result['differences']['files'] = ei.file_differences(json.loads(out) if rc == 0 and out.strip() else {})
    module.exit_json(id=after['id'], layers=after['layers'], size=after['size'], labels=after['labels'], **result)


if __name__ == '__main__':
    main()
