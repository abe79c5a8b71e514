#!/usr/bin/env python3
"""Stages in order, checked by the test command (scripts/test.sh): a file under
crates/core/src/<stage>/ names no later stage (base → schema → check → read → analyse → show),
and a file of a collector wing, crates/collector/src/<wing>.rs or <wing>/, names no later wing
(record → wire → plan → server → load).
Comments, string literals and inline test modules are left out. (Import circles between files
are scripts/rust_cycles.py's.) Exit 1 on any finding.
"""
import os
import re
import sys

STAGES = ["base", "schema", "check", "read", "analyse", "show"]
WINGS = ["record", "wire", "plan", "server", "load"]
TEST = re.compile(r"^\s*#\[cfg\(test\)\]\s*\n\s*(?:pub\s+)?mod\s+\w+\s*\{", re.M)


def clean(src):
    """Drops comments, string literals and inline test modules."""
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r'r(#*)".*?"\1', '""', src, flags=re.S)
    src = re.sub(r'"(?:\\.|[^"\\])*"', '""', src, flags=re.S)
    parts, pos = [], 0
    for m in TEST.finditer(src):
        if m.start() < pos:
            continue
        parts.append(src[pos:m.start()])
        depth, j = 1, m.end()
        while j < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[j], 0)
            j += 1
        pos = j
    parts.append(src[pos:])
    return "".join(parts)


def files_of(src, stage):
    """The files of one stage: its folder, and its `<stage>.rs` where there is one."""
    top = os.path.join(src, stage + ".rs")
    if os.path.exists(top):
        yield top
    for dirpath, _, names in os.walk(os.path.join(src, stage)):
        for name in sorted(n for n in names if n.endswith(".rs")):
            yield os.path.join(dirpath, name)


def order(root, src, stages, what):
    """Findings of files under `src` that name a stage later than their own."""
    found = 0
    for stage in stages:
        files = list(files_of(src, stage))
        if not files:
            print(f"{os.path.relpath(src, root)} has no {what} {stage}")
            found += 1
        for f in files:
            with open(f, encoding="utf-8") as fh:
                text = clean(fh.read())
            for later in stages[stages.index(stage) + 1:]:
                if re.search(r"\bcrate::" + later + r"\b", text):
                    found += 1
                    print(f"{os.path.relpath(f, root)} ({stage}) names the later {what} {later}")
    return found


def main(root):
    found = order(root, os.path.join(root, "crates", "core", "src"), STAGES, "stage")
    found += order(root, os.path.join(root, "crates", "collector", "src"), WINGS, "wing")
    print(f"stage-order findings: {found}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
