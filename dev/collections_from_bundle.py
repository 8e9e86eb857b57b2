"""Extract the collections listed in a requirements file from PyPI's `ansible` wheel.

Used when Galaxy is unreachable. Fails when the wheel carries another version than pinned,
so the two pins cannot drift apart silently.
"""

import json
import os
import shutil
import sys
import zipfile

import yaml


def main(wheel, requirements, dest):
    wanted = yaml.safe_load(open(requirements))['collections']
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        for entry in wanted:
            namespace, name = entry['name'].split('.')
            prefix = 'ansible_collections/%s/%s/' % (namespace, name)
            manifest = json.loads(archive.read(prefix + 'MANIFEST.json'))
            shipped = manifest['collection_info']['version']
            if shipped != str(entry['version']):
                sys.exit('%s: %s ships %s %s, dev/collections.yml pins %s'
                         % (requirements, os.path.basename(wheel), entry['name'], shipped, entry['version']))
            target = os.path.join(dest, 'ansible_collections', namespace, name)
            shutil.rmtree(target, ignore_errors=True)
            for member in names:
                if member.startswith(prefix) and not member.endswith('/'):
                    archive.extract(member, dest)
            print('%s %s -> %s' % (entry['name'], shipped, target))


if __name__ == '__main__':
    main(*sys.argv[1:4])
