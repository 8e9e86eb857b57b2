"""The tags preflight accepts are exactly the tags site.yml's plays carry."""

import re

import yaml
from conftest import REPO_ROOT, run


def test_known_tags_match_the_tags_in_site_yml():
    listing = run(["ansible-playbook", "site.yml", "-i", "inventories/gpu_cluster", "--list-tags"]).stdout
    carried = set()
    for tags in re.findall(r"TASK TAGS: \[(.*?)\]", listing):
        carried.update(t.strip() for t in tags.split(",") if t.strip())
    with open("%s/playbooks/preflight.yml" % REPO_ROOT) as handle:
        known = set(yaml.safe_load(handle)[0]["vars"]["__aistack_known_tags"])
    assert carried - {"always"} == known - {"all", "always"}
