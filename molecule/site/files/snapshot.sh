#!/usr/bin/env bash
# snapshot.sh NAME: the node's state as the check-mode proof compares it, in /run/snapshot.NAME;
# prints its sha256. Every path under /etc, /opt, /usr/local, /var/lib and the homes (type, mode,
# owner, size, link target), the sha256 of every file there, and the package database. Left out:
# Ansible's own temporary files under the connecting user's home, and systemd's bookkeeping.
# One walk lists the paths and names the files; the node's python3 hashes them all in one process
# (hashlib's sha256: the same digests as sha256sum), in sha256sum's format.
set -euo pipefail
out=/run/snapshot.$1
files=/run/snapshot.$1.files
roots=(/etc /opt /usr/local /var/lib /root /home)
prune=(\( -path /root/.ansible -o -path /var/lib/systemd \) -prune -o)
find "${roots[@]}" -xdev "${prune[@]}" -printf '%p %y %m %u:%g %s %l\n' \( -type f -fprint0 "$files" \) | LC_ALL=C sort > "$out"
LC_ALL=C sort -z "$files" | python3 -c '
import hashlib, sys
out = sys.stdout.buffer
for path in sys.stdin.buffer.read().split(b"\0")[:-1]:
    with open(path, "rb") as handle:
        out.write(hashlib.file_digest(handle, "sha256").hexdigest().encode() + b"  " + path + b"\n")
' >> "$out"
rm -f "$files"
dpkg-query -W -f '${Package} ${Version} ${Status}\n' >> "$out"
sha256sum "$out" | cut -d' ' -f1
