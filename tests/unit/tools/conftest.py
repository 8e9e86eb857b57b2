"""Put tools/ on the path: the drift tool runs from there, not as an installed package."""

import json
import os
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))

DRIFT_FIXTURES = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "drift")


def recorded(name):
    """A recorded run: {'rc': ansible-playbook's exit code, 'events': [...]}."""
    with open(os.path.join(DRIFT_FIXTURES, name)) as handle:
        return json.load(handle)
