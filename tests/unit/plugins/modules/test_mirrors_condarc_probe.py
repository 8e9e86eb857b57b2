# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The mirrors_condarc_probe module: one read of what mirrors_condarc refuses on (conda and its solvers,
the accounts, the conda group) and of the role's copies a dropped user still has. The account database
and the group are fakes; conda is a script that prints what the conda stand-in's argparse prints."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import grp
import os
import pwd
import socket
import stat

from conftest import run_module
from ansible_collections.aistack.gpu_node.plugins.module_utils.conda import mirrors as cm
from ansible_collections.aistack.gpu_node.plugins.modules import mirrors_condarc_probe as probe

MARK = "# Managed by aistack.gpu_node.mirrors_condarc;"
Account = collections.namedtuple("Account", "pw_name pw_dir pw_uid pw_gid")
Group = collections.namedtuple("Group", "gr_mem")

# argparse's help for a choice option, as the stand-in (and conda) print it.
CREATE_HELP = """usage: conda create [-h] [--solver {classic,rattler,libmamba}] [--json] ...

options:
  --solver {classic,rattler,libmamba}
                        Choose which solver backend to use.
"""


def test_the_solvers_are_the_choices_of_create_help():
    assert cm.create_help_solvers(CREATE_HELP) == ["classic", "rattler", "libmamba"]
    assert cm.create_help_solvers("usage: conda create [-h] [--json]\n") == []
    assert cm.create_help_solvers("") == [] and cm.create_help_solvers(None) == []


def fake_node(monkeypatch, tmp_path, groups):
    homes = dict((name, tmp_path / name) for name in ("root", "alice", "bob", "carol"))
    for home in homes.values():
        home.mkdir()
    accounts = [Account(name, str(home), 1000 + index, 2000 + index) for index, (name, home) in enumerate(sorted(homes.items()))]
    # A system account without a home, and one sharing bob's: each home is looked at once.
    accounts += [Account("daemon", "", 1, 1), Account("bob2", str(homes["bob"]), 1100, 1100)]
    monkeypatch.setattr(pwd, "getpwall", lambda: accounts)

    def getgrnam(name):
        if name not in groups:
            raise KeyError(name)
        return Group(groups[name])
    monkeypatch.setattr(grp, "getgrnam", getgrnam)
    return homes


def fake_conda(tmp_path, text=CREATE_HELP, rc=0):
    conda = tmp_path / "conda"
    conda.write_text(u"#!/bin/sh\ncat <<'EOF'\n%sEOF\nexit %d\n" % (text, rc))
    conda.chmod(conda.stat().st_mode | stat.S_IXUSR)
    return str(conda)


def test_one_read_gives_conda_its_solvers_the_accounts_the_group_and_the_dropped_copies(monkeypatch, tmp_path, capsys):
    homes = fake_node(monkeypatch, tmp_path, {"conda": ["alice"]})
    # bob was dropped: his copy and a backup of one are the role's; his own file and carol's are not.
    (homes["bob"] / ".condarc").write_text(u"%s changes here are overwritten.\nchannels: [x]\n" % MARK)
    (homes["bob"] / ".condarc.4242.2026-12-06@10:00:00~").write_text(u"%s changes here are overwritten.\n" % MARK)
    (homes["bob"] / ".condarc.own~").write_text(u"channels: [mine]\n")
    (homes["carol"] / ".condarc").write_text(u"# my settings\n%s\n" % MARK)
    # alice is still a user: her copy stays.
    (homes["alice"] / ".condarc").write_text(u"%s changes here are overwritten.\n" % MARK)
    code, result = run_module(probe, dict(conda=fake_conda(tmp_path), users=["alice", "zed"], group="conda",
                                          copy_header=MARK), capsys)
    assert code == 0 and result["changed"] is False
    assert result["conda_present"] is True and result["solvers"] == ["classic", "rattler", "libmamba"]
    assert result["accounts"] == {"alice": {"home": str(homes["alice"]), "uid": 1000, "gid": 2000}}
    assert result["unknown_users"] == ["zed"] and result["group_members"] == ["alice"]
    assert result["dropped_copies"] == [str(homes["bob"] / ".condarc"), str(homes["bob"] / ".condarc.4242.2026-12-06@10:00:00~")]


def test_a_missing_conda_a_missing_group_and_no_header(monkeypatch, tmp_path, capsys):
    homes = fake_node(monkeypatch, tmp_path, {})
    (homes["bob"] / ".condarc").write_text(u"%s\n" % MARK)
    code, result = run_module(probe, dict(conda=str(tmp_path / "absent" / "conda"), users=[], group="conda"), capsys)
    assert code == 0 and result["conda_present"] is False and result["solvers"] == []
    assert result["group_members"] is None and result["dropped_copies"] == [] and result["accounts"] == {}


def test_a_conda_whose_help_fails_has_no_solvers_to_judge(monkeypatch, tmp_path, capsys):
    fake_node(monkeypatch, tmp_path, {})
    code, result = run_module(probe, dict(conda=fake_conda(tmp_path, "Traceback\n", rc=1)), capsys)
    assert code == 0 and result["conda_present"] is True and result["solvers"] == []
    assert result["group_members"] is None and os.path.exists(str(tmp_path / "conda"))


SHOW_SOURCES = u"""==> /opt/conda/.condarc <==
channel_alias: https://mirror.example/conda
channels:
  - conda-forge

"""


def fake_conda_with_sources(tmp_path, sources=SHOW_SOURCES, sources_rc=0):
    """A conda that prints its create --help, or (config --show-sources) ``sources`` with ``sources_rc``."""
    conda = tmp_path / "conda"
    conda.write_text(u"#!/bin/sh\nif [ \"$1 $2\" = 'config --show-sources' ]; then\ncat <<'EOF'\n%sEOF\nexit %d\nfi\n"
                     u"cat <<'EOF'\n%sEOF\n" % (sources, sources_rc, CREATE_HELP))
    conda.chmod(conda.stat().st_mode | stat.S_IXUSR)
    return str(conda)


def test_show_sources_is_read_in_the_same_round_trip_as_the_solvers(monkeypatch, tmp_path, capsys):
    fake_node(monkeypatch, tmp_path, {})
    code, result = run_module(probe, dict(conda=fake_conda_with_sources(tmp_path), show_sources=True), capsys)
    assert code == 0 and result["changed"] is False
    assert result["show_sources"] == SHOW_SOURCES and result["solvers"] == ["classic", "rattler", "libmamba"]


def test_show_sources_is_not_read_unless_asked(monkeypatch, tmp_path, capsys):
    fake_node(monkeypatch, tmp_path, {})
    code, result = run_module(probe, dict(conda=fake_conda_with_sources(tmp_path)), capsys)
    assert code == 0 and result["show_sources"] is None and result["solvers"] == ["classic", "rattler", "libmamba"]


def test_a_failed_show_sources_is_no_reading(monkeypatch, tmp_path, capsys):
    """conda config --show-sources that exits non-zero gives nothing to judge: the role asks conda again,
    and that command fails with conda's own words."""
    fake_node(monkeypatch, tmp_path, {})
    conda = fake_conda_with_sources(tmp_path, sources=u"CondaError: bad .condarc\n", sources_rc=1)
    code, result = run_module(probe, dict(conda=conda, show_sources=True), capsys)
    assert code == 0 and result["show_sources"] is None and result["solvers"] == ["classic", "rattler", "libmamba"]


def test_a_missing_conda_shows_no_sources(monkeypatch, tmp_path, capsys):
    fake_node(monkeypatch, tmp_path, {})
    code, result = run_module(probe, dict(conda=str(tmp_path / "absent" / "conda"), show_sources=True), capsys)
    assert code == 0 and result["conda_present"] is False and result["show_sources"] is None


def test_a_conda_that_cannot_start_fails_the_read(monkeypatch, tmp_path, capsys):
    """As module.run_command fails when it cannot start conda (here: no execute bit): one failure, never
    a result printed beside it from the other conda run."""
    fake_node(monkeypatch, tmp_path, {})
    conda = tmp_path / "conda"
    conda.write_text(u"#!/bin/sh\nexit 0\n")
    conda.chmod(0o644)
    code, result = run_module(probe, dict(conda=str(conda), show_sources=True), capsys)
    assert code != 0 and result["failed"] is True and result["msg"] == "Error executing command." and result["rc"] == 13
    assert result["cmd"] == "%s create --help" % conda


def test_the_mirrors_are_probed_in_the_same_round_trip(monkeypatch, tmp_path, capsys):
    """The probe of conda_mirror_probe, run while conda does; without conda too (check mode on a fresh node)."""
    fake_node(monkeypatch, tmp_path, {})
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    down = "http://127.0.0.1:%d" % closed.getsockname()[1]
    closed.close()
    settings = dict(mirrors=[down], subdirs=["noarch"], timeout=2)
    for conda in (fake_conda_with_sources(tmp_path), str(tmp_path / "absent" / "conda")):
        code, result = run_module(probe, dict(conda=conda, show_sources=True, probe=settings), capsys)
        assert code == 0 and result["probe"]["candidates"] == [down] and result["probe"]["chosen"] is None
        assert result["probe"]["message"].startswith("no healthy mirror: %s (" % down)
        assert result["probe"]["ranked"][0]["healthy"] is False
    code, result = run_module(probe, dict(conda=fake_conda_with_sources(tmp_path)), capsys)
    assert code == 0 and result["probe"] is None


def test_a_malformed_mirror_fails_the_read_as_it_fails_the_probe(monkeypatch, tmp_path, capsys):
    fake_node(monkeypatch, tmp_path, {})
    code, result = run_module(probe, dict(conda=fake_conda_with_sources(tmp_path), probe=dict(mirrors=["mirror.example"])), capsys)
    assert code == 1 and result["msg"].startswith("mirrors[0]: 'mirror.example' is not a mirror URL")
