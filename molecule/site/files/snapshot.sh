#!/usr/bin/env bash
# snapshot.sh NAME: the node's state as the check-mode proof compares it, in /run/snapshot.NAME;
# prints its sha256. Every path under /etc, /opt, /usr/local, /var/lib and the homes (type, mode,
# owner, size, link target), the sha256 of every file there, and the package database. Left out:
# Ansible's own temporary files under the connecting user's home, and systemd's bookkeeping.
set -euo pipefail
out=/run/snapshot.$1
roots=(/etc /opt /usr/local /var/lib /root /home)
prune=(\( -path /root/.ansible -o -path /var/lib/systemd \) -prune -o)
find "${roots[@]}" -xdev "${prune[@]}" -printf '%p %y %m %u:%g %s %l\n' | LC_ALL=C sort > "$out"
find "${roots[@]}" -xdev "${prune[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum >> "$out"
dpkg-query -W -f '${Package} ${Version} ${Status}\n' >> "$out"
sha256sum "$out" | cut -d' ' -f1
