#!/usr/bin/env python
"""Benchmarks on fresh podman nodes; prints figures, never judges time.

1. The full site.yml on one fresh node, then again: both times and their ratio, with the
   changed count of each; the second run must report 0 changed (that, and only that, fails the
   benchmark). The first run does the whole job: the conda base, the default env with CPU
   torch, APEX (the stand-in tree) built into it, threads, the kernel, the manifest.
2. tools/aistack-drift over one node, then over N nodes with N forks: time per host and the
   ratio of the N-node run to the one-node run, and the controller's CPU seconds per host (user
   and system time of the whole process tree, podman's commands included).
Beside each time: tasks run per host and module round-trips per host (what the podman
connection pays for), counted by tests/bench/callback_plugins/bench_counts.py.
3. With --against REF: the first run, the no-op re-run and the one-node drift check again on a
   fresh node with the collection as it was at REF (its site.yml, roles, drift tool and
   ansible.cfg, from `git archive`; the checkout is not touched), through the podman connection
   a user gets (containers.podman.podman), and the ratios of this tree's figures to REF's.

Nodes are the test bed's image (tests/support/testbed/build-node-image), started like molecule's
(molecule/resources/create.yml) and removed at the end. The inventory is the site scenario's
(molecule/site/group_vars: the shipped defaults with local sources, which
molecule/site/sources.yml lays out).
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
IMAGE = "localhost/aistack-debian12-node:latest"
SITE_SCENARIO = os.path.join(REPO_ROOT, "molecule", "site")
SOURCES = os.environ.setdefault("AISTACK_SITE_SOURCES", os.path.join(REPO_ROOT, ".cache", "site-molecule"))
CALLBACKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callback_plugins")
# The test bed's pipelining podman connection, which the site scenario's group_vars name.
CONNECTIONS = os.path.join(REPO_ROOT, "tests", "support", "testbed", "connection_plugins")


def sh(args, check=True, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    if check and proc.returncode != 0:
        sys.exit("%s exited %d\n%s\n%s" % (" ".join(args), proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:]))
    return proc


def start_nodes(names):
    for name in names:
        sh(["podman", "rm", "--force", "--ignore", name])
        # The host's network: the test bed's mirror listens on its loopback.
        sh(["podman", "run", "--detach", "--name", name, "--hostname", name, "--systemd=always", "--network=host",
            "--volume=%s:/srv/site-wheels:ro" % os.path.join(SOURCES, "wheels"), IMAGE, "/sbin/init"])
    for name in names:
        for _attempt in range(30):
            state = sh(["podman", "exec", name, "systemctl", "is-system-running", "--wait"], check=False).stdout.strip()
            if state in ("running", "degraded"):
                break
            time.sleep(1)


def write_inventory(folder, names, host_vars="", group_vars=os.path.join(SITE_SCENARIO, "group_vars")):
    """An inventory of the nodes beside the site scenario's group_vars; the first node builds APEX."""
    os.makedirs(folder)
    if os.path.isdir(group_vars):
        os.symlink(group_vars, os.path.join(folder, "group_vars"))
    hosts = "".join("        %s:%s\n" % (name, host_vars) for name in names)
    with open(os.path.join(folder, "hosts.yml"), "w") as handle:
        handle.write("all:\n  children:\n    gpu_nodes:\n      hosts:\n" + hosts
                     + "    build_hosts:\n      hosts:\n        %s:\n" % names[0])
    return folder


def ref_tree(ref, work):
    """REF's files, and the settings that make ansible-playbook take them as aistack.gpu_node (the
    other collections are the checkout's)."""
    tree = os.path.join(work, "ref")
    os.makedirs(tree)
    with subprocess.Popen(["git", "-C", REPO_ROOT, "archive", "--format=tar", ref], stdout=subprocess.PIPE) as archive:
        sh(["tar", "-x", "-C", tree], stdin=archive.stdout)
    if archive.returncode != 0:
        sys.exit("--against: git archive %s exited %d" % (ref, archive.returncode))
    collections = os.path.join(work, "ref-collections", "ansible_collections")
    os.makedirs(os.path.join(collections, "aistack"))
    os.symlink(tree, os.path.join(collections, "aistack", "gpu_node"))
    ours = os.path.join(os.environ["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)[0], "ansible_collections")
    for namespace in sorted(set(os.listdir(ours)) - {"aistack"}):
        os.symlink(os.path.join(ours, namespace), os.path.join(collections, namespace))
    return tree, {"ANSIBLE_CONFIG": os.path.join(tree, "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": os.path.dirname(collections)}


def recap(stdout):
    return {host: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counts)}
            for host, counts in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", stdout.split("PLAY RECAP", 1)[-1], re.M)}


class Run:
    """One timed run: wall seconds, controller CPU seconds, and the counts per host."""

    def __init__(self, args, counts, profile=None, env=None):
        callbacks = ["bench_counts"] + (["ansible.posix.profile_tasks"] if profile else [])
        env = dict(os.environ, AISTACK_BENCH_COUNTS=counts, ANSIBLE_CALLBACKS_ENABLED=",".join(callbacks),
                   ANSIBLE_CALLBACK_PLUGINS=CALLBACKS, ANSIBLE_CONNECTION_PLUGINS=CONNECTIONS, **(env or {}))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        self.proc = sh(args, check=False, env=env)
        self.seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with open(counts + ".json") as handle:
            self.counts = json.load(handle)
        if profile:
            with open(profile, "w") as handle:
                handle.write(self.proc.stdout)

    def per_host(self, hosts):
        """Tasks and round-trips per host, averaged over the hosts."""
        return tuple(sum(self.counts[kind].get(h, 0) for h in hosts) / len(hosts) for kind in ("tasks", "round_trips"))


def timed_site(inventory, extra, counts, profile=None, root=REPO_ROOT, env=None):
    run = Run(["ansible-playbook", os.path.join(root, "site.yml"), "-i", inventory] + extra, counts, profile, env)
    if run.proc.returncode != 0:
        sys.exit("site.yml exited %d\n%s\n%s" % (run.proc.returncode, run.proc.stdout[-4000:], run.proc.stderr[-4000:]))
    return run, recap(run.proc.stdout)


def timed_drift(inventory, forks, extra, skip_tags, out, counts, env=None, root=REPO_ROOT):
    args = [sys.executable, os.path.join(root, "tools", "aistack-drift"), "-i", inventory, "-f", str(forks), "-o", out]
    args += ["--skip-tags", skip_tags] if skip_tags else []
    run = Run(args + [a for e in extra for a in ("-e", e)], counts, env=env)
    if run.proc.returncode != 0:
        sys.exit("aistack-drift exited %d on provisioned nodes:\n%s" % (run.proc.returncode, run.proc.stdout))
    with open(os.path.join(out, "drift.json")) as handle:
        return run, json.load(handle)


def compare_to_ref(args, work, node, extra, counts, ours, stock_runs):
    """The site twice and the one-node drift check with REF's collection, and this tree's ratios to it."""
    tree, env = ref_tree(args.against, work)
    # REF's own inventory settings where it had the site scenario, through the connection users get.
    inventory = write_inventory(os.path.join(work, "ref-one"), [node], " {ansible_connection: containers.podman.podman}",
                                os.path.join(tree, "molecule", "site", "group_vars"))
    start_nodes([node])
    first, first_recap = timed_site(inventory, extra, counts, root=tree, env=env)
    second, second_recap = timed_site(inventory, extra, counts, root=tree, env=env)
    alone = timed_drift(inventory, 1, args.extra_vars, args.skip_tags, os.path.join(work, "drift-one-ref"), counts,
                        env, tree)[0]
    print("at %s (its site.yml, roles, drift tool and ansible.cfg; containers.podman.podman): first run %.1f s "
          "(changed=%d), no-op re-run %.1f s (changed=%d), %.0f tasks per host, %.0f module round-trips per host, "
          "controller CPU %.1f s; aistack-drift, 1 node: %.1f s, controller CPU %.1f s"
          % ((args.against, first.seconds, first_recap[node]["changed"], second.seconds, second_recap[node]["changed"])
             + second.per_host([node]) + (second.cpu, alone.seconds, alone.cpu)))
    for label, (our_second, our_alone) in (("this tree", ours), ("this tree through containers.podman.podman", stock_runs or (None, None))):
        if our_second is not None:
            print("  %s/%s: no-op re-run %.2f (CPU %.2f), drift %.2f (CPU %.2f)" % (
                label, args.against, our_second.seconds / second.seconds, our_second.cpu / second.cpu,
                our_alone.seconds / alone.seconds, our_alone.cpu / alone.cpu))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--nodes", type=int, default=4, help="nodes in the drift run (default 4)")
    parser.add_argument("-e", "--extra-vars", action="append", default=[], help="passed to every run")
    parser.add_argument("--skip-tags", default="", help="components left out of every run (default: none)")
    parser.add_argument("--keep", action="store_true", help="leave the nodes running")
    parser.add_argument("--profile", metavar="DIR",
                        help="also time every task (ansible.posix.profile_tasks) and keep the site runs' output in DIR")
    parser.add_argument("--against", metavar="REF",
                        help="also run the site twice and the one-node drift check with the collection as it was at "
                             "REF (a commit of this repository), on a fresh node, and print this tree's ratios to it")
    parser.add_argument("--mitogen", action="store_true",
                        help="also run the drift checks with Mitogen's strategy (pip install mitogen; docs/performance.md)")
    parser.add_argument("--stock-connection", action="store_true",
                        help="also repeat the no-op re-run and the one-node drift check through containers.podman.podman "
                             "(no pipelining), on the same nodes, and print the ratios")
    args = parser.parse_args()
    if args.against and sh(["git", "-C", REPO_ROOT, "rev-parse", "--verify", "--quiet", args.against + "^{commit}"],
                           check=False).returncode != 0:
        parser.error("--against: %r is not a commit of this repository" % args.against)
    names = ["aistack-bench-%d" % i for i in range(1, args.nodes + 1)]
    ref_node = "aistack-bench-ref"
    extra = [a for e in args.extra_vars for a in ("-e", e)] + (["--skip-tags", args.skip_tags] if args.skip_tags else [])
    work = tempfile.mkdtemp(prefix="aistack-bench-")
    one = write_inventory(os.path.join(work, "one"), names[:1])
    fleet = write_inventory(os.path.join(work, "fleet"), names)
    sh(["ansible-playbook", os.path.join(SITE_SCENARIO, "sources.yml")])
    try:
        start_nodes(names)
        counts = os.path.join(work, "counts")
        if args.profile:
            os.makedirs(args.profile, exist_ok=True)
        profile = (lambda name: os.path.join(args.profile, name)) if args.profile else (lambda name: None)
        first, first_recap = timed_site(one, extra, counts, profile("site-first.txt"))
        second, second_recap = timed_site(one, extra, counts, profile("site-second.txt"))
        changed = second_recap[names[0]]["changed"]
        print("full site.yml on one fresh node: first run %.1f s (changed=%d), second run %.1f s (changed=%d), "
              "ratio first/second %.2f" % (first.seconds, first_recap[names[0]]["changed"], second.seconds, changed,
                                           first.seconds / second.seconds))
        for label, run in (("first", first), ("second", second)):
            print("  %s run: %.0f tasks per host, %.0f module round-trips per host, controller CPU %.1f s"
                  % ((label,) + run.per_host(names[:1]) + (run.cpu,)))

        timed_site(fleet, extra, counts)  # the other nodes provisioned, so that the drift runs find none
        alone = timed_drift(one, 1, args.extra_vars, args.skip_tags, os.path.join(work, "drift-one"), counts)[0]
        many, report = timed_drift(fleet, args.nodes, args.extra_vars, args.skip_tags,
                                   os.path.join(work, "drift-fleet"), counts)
        print("aistack-drift, 1 node: %.1f s, %.0f tasks per host, %.0f module round-trips per host, "
              "controller CPU %.1f s per host" % ((alone.seconds,) + alone.per_host(names[:1]) + (alone.cpu,)))
        print("aistack-drift, %d nodes, %d forks: %.1f s, %.1f s per host, ratio to one node %.2f (status %s), "
              "%.0f tasks per host, %.0f module round-trips per host, controller CPU %.1f s per host"
              % ((args.nodes, args.nodes, many.seconds, many.seconds / args.nodes, many.seconds / alone.seconds,
                  report["status"]) + many.per_host(names) + (many.cpu / args.nodes,)))
        stock_runs = None
        if args.stock_connection:
            # The same provisioned node through the stock connection: the test bed's pipelining
            # connection against the one users of podman nodes get by default, in one run.
            stock = write_inventory(os.path.join(work, "stock"), names[:1], " {ansible_connection: containers.podman.podman}")
            s_second, s_recap = timed_site(stock, extra, counts)
            s_alone = timed_drift(stock, 1, args.extra_vars, args.skip_tags, os.path.join(work, "drift-one-stock"), counts)[0]
            print("through containers.podman.podman: no-op site re-run %.1f s (changed=%d), controller CPU %.1f s; "
                  "aistack-drift, 1 node: %.1f s, controller CPU %.1f s" % (
                      s_second.seconds, s_recap[names[0]]["changed"], s_second.cpu, s_alone.seconds, s_alone.cpu))
            print("  pipelining/stock: no-op re-run %.2f (CPU %.2f), drift %.2f (CPU %.2f)" % (
                second.seconds / s_second.seconds, second.cpu / s_second.cpu, alone.seconds / s_alone.seconds,
                alone.cpu / s_alone.cpu))
            stock_runs = (s_second, s_alone)
        if args.mitogen:
            import ansible_mitogen  # pylint: disable=import-outside-toplevel
            mitogen = {"ANSIBLE_STRATEGY_PLUGINS": os.path.join(os.path.dirname(ansible_mitogen.__file__), "plugins", "strategy"),
                       "ANSIBLE_STRATEGY": "mitogen_linear"}
            # Mitogen takes over only the connections it knows by their short names: a host variable,
            # so that tasks delegated to the controller keep theirs. Its modules bypass the counter.
            m_one, m_fleet = (write_inventory(os.path.join(work, "mitogen-" + name), hosts, " {ansible_connection: podman}")
                              for name, hosts in (("one", names[:1]), ("fleet", names)))
            m_alone = timed_drift(m_one, 1, args.extra_vars, args.skip_tags, os.path.join(work, "drift-one-mitogen"),
                                  counts, mitogen)[0]
            m_many, m_report = timed_drift(m_fleet, args.nodes, args.extra_vars, args.skip_tags,
                                           os.path.join(work, "drift-fleet-mitogen"), counts, mitogen)
            print("aistack-drift with Mitogen, 1 node: %.1f s, controller CPU %.1f s; %d nodes, %d forks: %.1f s, "
                  "ratio to one node %.2f (status %s), controller CPU %.1f s per host"
                  % (m_alone.seconds, m_alone.cpu, args.nodes, args.nodes, m_many.seconds,
                     m_many.seconds / m_alone.seconds, m_report["status"], m_many.cpu / args.nodes))
        if args.against:
            # Last: the sources are laid out again, so that REF's first run builds APEX from an
            # empty controller cache too.
            sh(["ansible-playbook", os.path.join(SITE_SCENARIO, "sources.yml")])
            compare_to_ref(args, work, ref_node, extra, counts, (second, alone), stock_runs)
        return 1 if changed else 0
    finally:
        if not args.keep:
            for name in names + [ref_node]:
                sh(["podman", "rm", "--force", "--ignore", name], check=False)
        sh([sys.executable, "-m", "conda_testbed.serve", "stop", "--dir", os.path.join(SOURCES, "conda")], check=False,
           cwd=os.path.join(REPO_ROOT, "tests", "support", "conda"), env=dict(os.environ, PYTHONPATH=os.path.join(REPO_ROOT, "tests", "support", "conda")))


if __name__ == "__main__":
    sys.exit(main())
