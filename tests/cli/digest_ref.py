#!/usr/bin/env python3
"""An independent implementation of `caliber digest` (docs/formats.md, "Tree
digest"), used by tests/cli/t0400-digest.sh to check the C one."""
import hashlib
import os
import stat
import sys


def digest(root):
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")
                       and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames + [d for d in os.listdir(dirpath)
                                 if os.path.islink(os.path.join(dirpath, d))
                                 and os.path.isdir(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            entries.append((rel.encode(), full))
    total = hashlib.sha256()
    for rel, full in sorted(set(entries)):
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            mode, content = "120000", os.readlink(full).encode()
        else:
            mode = "100755" if st.st_mode & 0o111 else "100644"
            content = open(full, "rb").read()
        total.update(f"{mode} {hashlib.sha256(content).hexdigest()} ".encode() + rel + b"\n")
    return total.hexdigest()


if __name__ == "__main__":
    print(digest(sys.argv[1]))
