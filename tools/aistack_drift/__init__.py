# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""aistack-drift: site.yml in check and diff mode over an inventory, as JSON, JUnit XML and a summary.

``events`` turns ansible-runner events into per-host findings, ``reports`` writes them; both are
pure. ``cli`` is the only part that runs anything (through the ansible-runner library).
"""
