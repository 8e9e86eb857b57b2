"""Stand-in for ansible-test's pip bootstrap script where ci-files.testing.ansible.com is
unreachable (a machine that only reaches PyPI). ansible-test runs it inside a new, pip-less
virtual environment with pip-install arguments (its pinned pip); the pip wheel bundled with
the standard library's ensurepip runs straight from the wheel and installs them from the
package index, with the machine's pip configuration (index, CA bundle).
`make sanity` puts it in ansible-test's cache only when no real script is cached there.
"""

import glob
import os
import subprocess
import sys

import ensurepip

bundled = glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), '_bundled', 'pip-*.whl'))
if not bundled:
    sys.exit('ensurepip of %s bundles no pip wheel: install python3-venv / python3-pip-whl' % sys.executable)
arguments = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
sys.exit(subprocess.call([sys.executable, os.path.join(bundled[0], 'pip'), 'install'] + arguments))
