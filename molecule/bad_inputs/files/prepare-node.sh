#!/usr/bin/env bash
# The node states some catalogue cases need (tests/bad_inputs.yml), none of them made by a role.
# One script rather than a task per file: each task costs a round trip to a podman node.
set -euo pipefail

# A full disk at a prefix: fill the small tmpfs at /srv/full to its last block.
dd if=/dev/zero of=/srv/full/fill bs=64k 2>/dev/null || test -s /srv/full/fill

# A conda prefix whose conda runs (one line for any arguments: the miniconda role asks an installed
# prefix's conda only whether it runs and, from `config --show --json`, its settings, which this
# answer leaves unknown), with a tampered completion marker claiming a Miniconda newer than any known.
mkdir -p /opt/conda/bin
printf '#!/bin/sh\necho "conda 26.7.1"\n' > /opt/conda/bin/conda
chmod 0755 /opt/conda/bin/conda
printf '{"flavor": "miniconda", "version": "99.1.1-0", "sha256": "%064d"}\n' 0 > /opt/conda/.aistack-miniconda.json

# Where a conda base could go but must not: a folder of someone else's (data, no conda-meta/), and a file.
mkdir -p /opt/datasets
echo "an admin's data" > /opt/datasets/imagenet.tar
echo "an admin's notes" > /opt/conda-notes.txt
# An installer that writes into its prefix as the real one does, for the cases that must be refused before
# any installer runs (their miniconda_installer_sha256 is this file's).
cat > /root/installer-writes-its-prefix.sh <<'EOF'
#!/bin/sh
while getopts "bfup:" option; do [ "$option" = p ] && prefix=$OPTARG; done
mkdir -p "$prefix/bin" && echo installed > "$prefix/bin/installed"
EOF

# Other bytes under the Miniconda installer's name.
printf '#!/bin/sh\necho "not the Miniconda installer"\n' > /root/Miniconda3-py311_25.1.1-2-Linux-x86_64.sh

# A file:// mirror that answers with an HTML page where repodata.json belongs.
for subdir in noarch linux-64; do
  mkdir -p /srv/lying-mirror/conda-forge/$subdir
  echo '<html><body>Mirror maintenance</body></html>' > /srv/lying-mirror/conda-forge/$subdir/repodata.json
done
