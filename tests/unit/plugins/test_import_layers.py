# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The layers of plugins/: no import circle (a lazy import inside a function counts), module_utils
imports only module_utils, and plugin_utils no plugin that Ansible loads; inside module_utils, every
file is in a wing (decide/, probe/, conda/, cuda/) or the small core, and no decision reaches a node
reader (probe/), directly or through another file (issue 37, item 6)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import os

from conftest import REPO_ROOT

PACKAGE = 'ansible_collections.aistack.gpu_node.plugins.'


def import_graph(plugins_root):
    """``{"kind/name": {"kind/name", ...}}``: what each Python file under ``plugins_root`` imports of the collection.
    A name is the file's path under ``plugins_root`` without ``.py``: ``module_utils/decide/nvidia_driver``."""
    def target(dotted):
        return '/'.join(dotted[len(PACKAGE):].split('.'))

    graph = {}
    for folder, _dirs, files in os.walk(plugins_root):
        for filename in sorted(f for f in files if f.endswith('.py') and f != '__init__.py'):
            path = os.path.join(folder, filename)
            node = os.path.relpath(path, plugins_root)[:-3]
            with open(path) as handle:
                tree = ast.parse(handle.read(), path)
            targets = set()
            for statement in ast.walk(tree):
                if isinstance(statement, ast.ImportFrom) and (statement.module or '').startswith(PACKAGE):
                    module = target(statement.module)
                    for alias in statement.names:
                        # from ...module_utils.decide import nvidia_driver: a file of the package; else a name in a file
                        submodule = '%s/%s' % (module, alias.name)
                        targets.add(submodule if os.path.isfile(os.path.join(plugins_root, submodule + '.py')) else module)
                elif isinstance(statement, ast.Import):
                    targets.update(target(alias.name) for alias in statement.names if alias.name.startswith(PACKAGE))
            graph[node] = targets
    return graph


def circles(graph):
    """Every import circle, each as the list of files around it."""
    found, done = [], set()

    def visit(node, path):
        if node in path:
            found.append(path[path.index(node):] + [node])
            return
        if node in done:
            return
        for target in sorted(graph.get(node, ())):
            visit(target, path + [node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
    return found


def layer_problems(graph):
    allowed = {'module_utils': ('module_utils',), 'plugin_utils': ('module_utils', 'plugin_utils')}
    return ['%s imports %s' % (node, target) for node, targets in sorted(graph.items()) for target in sorted(targets)
            if node.split('/')[0] in allowed and target.split('/')[0] not in allowed[node.split('/')[0]]]


READERS = 'module_utils/probe/'
WINGS = ('module_utils/decide/', READERS, 'module_utils/conda/', 'module_utils/cuda/')
# What every wing may build on; kept small: a file that fits a wing goes there.
CORE = ('module_utils/known_variables', 'module_utils/versions')


def node_reader_imports(graph):
    """Each module_utils file outside probe/ (a decision, conda's or CUDA's rules, the core) that imports
    a node reader, directly or through other files, with the files in between."""
    problems = []
    for node in sorted(n for n in graph if n.startswith('module_utils/') and not n.startswith(READERS)):
        via, queue = {node: None}, [node]
        while queue:
            current = queue.pop(0)
            for target in sorted(graph.get(current, ())):
                if target in via:
                    continue
                via[target] = current
                if target.startswith(READERS):
                    between, step = [], current
                    while step != node:
                        between.insert(0, step)
                        step = via[step]
                    problems.append('%s imports %s%s' % (node, target, ' (through %s)' % ', '.join(between) if between else ''))
                else:
                    queue.append(target)
    return problems


GRAPH = import_graph(os.path.join(REPO_ROOT, 'plugins'))


def test_the_graph_sees_the_imports():
    # A reader that saw nothing would pass the tests below: these edges are known to exist.
    assert 'module_utils/conda/spec' in GRAPH['module_utils/conda/blas']
    assert 'module_utils/probe/nvidia_parsers' in GRAPH['module_utils/probe/gpu_collection']
    assert 'module_utils/decide/fabric_manager' in GRAPH['module_utils/decide/nvidia_driver']  # from a package
    assert 'module_utils/decide/apex_build' in GRAPH['action/apex_build_plan']
    assert 'plugin_utils/plan_action' in GRAPH['action/apex_build_plan']


def test_every_import_is_a_file_the_graph_read():
    # An import the reader resolved wrong (a package, a name) would hide its edges from the tests below.
    assert [(node, target) for node, targets in sorted(GRAPH.items()) for target in sorted(targets)
            if target not in GRAPH] == []


def test_no_import_circle_in_plugins():
    assert circles(GRAPH) == []


def test_module_utils_and_plugin_utils_import_no_plugin_that_ansible_loads():
    assert layer_problems(GRAPH) == []


def test_no_decision_imports_a_node_reader():
    assert node_reader_imports(GRAPH) == []


def test_every_module_utils_file_is_in_a_wing_or_the_core():
    assert sorted(node for node in GRAPH if node.startswith('module_utils/')
                  and not node.startswith(WINGS) and node not in CORE) == []
    assert all(node in GRAPH for node in CORE)


def test_a_circle_and_a_layer_breach_are_found():
    graph = {'module_utils/a': {'module_utils/b'}, 'module_utils/b': {'module_utils/a', 'modules/m'}, 'modules/m': set()}
    assert circles(graph) == [['module_utils/a', 'module_utils/b', 'module_utils/a']]
    assert layer_problems(graph) == ['module_utils/b imports modules/m']


def test_a_decision_that_reaches_a_node_reader_is_found():
    graph = {'module_utils/decide/d': {'module_utils/conda/c', 'module_utils/versions'},
             'module_utils/conda/c': {'module_utils/probe/p'}, 'module_utils/versions': set(),
             'module_utils/probe/p': {'module_utils/decide/x'}, 'module_utils/decide/x': set()}
    assert node_reader_imports(graph) == [
        'module_utils/conda/c imports module_utils/probe/p',
        'module_utils/decide/d imports module_utils/probe/p (through module_utils/conda/c)']  # a reader may import a decision
