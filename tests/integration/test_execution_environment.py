"""execution-environment.yml makes a build context with ansible-builder (no container engine needed)."""

import glob
import os
import re

from conftest import REPO_ROOT, run


def _pin(name):
    with open(os.path.join(REPO_ROOT, "dev", "requirements.txt")) as handle:
        return re.search(r"^%s==\S+$" % re.escape(name), handle.read(), re.M).group(0)


def test_ansible_builder_create_writes_a_context_with_the_collection_and_the_pins(tmp_path, collection_tarball):
    build = os.path.dirname(collection_tarball)
    context = tmp_path / "context"
    run(["ansible-builder", "create", "-f", "execution-environment.yml", "--context", str(context)])

    containerfile = (context / "Containerfile").read_text()
    stages = re.split(r"^FROM ", containerfile, flags=re.M)
    galaxy = [s for s in stages if s.startswith("base AS galaxy")][0]
    final = [s for s in stages if s.startswith("base AS final")][0]
    assert "COPY _build /build" in galaxy
    assert "ansible-galaxy collection install --offline -p /usr/share/ansible/collections " \
           "/build/collection/aistack-gpu_node-*.tar.gz" in galaxy
    assert "COPY --from=galaxy /usr/share/ansible /usr/share/ansible" in final
    assert "ENV ANSIBLE_COLLECTIONS_PATH=/usr/share/ansible/collections" in final

    tarballs = [os.path.basename(p) for p in glob.glob(str(context / "_build" / "collection" / "*.tar.gz"))]
    assert tarballs == [os.path.basename(p) for p in glob.glob(os.path.join(build, "aistack-gpu_node-*.tar.gz"))]
    # Same ansible-core and ansible-runner as the controller tooling.
    assert "ARG ANSIBLE_INSTALL_REFS=\"%s %s\"" % (_pin("ansible-core"), _pin("ansible-runner")) in containerfile
