#!/usr/bin/env python3
"""Stages in order, checked by the test command (scripts/test.sh): a file under
crates/core/src/<stage>/ names no later stage (base → schema → check → read → analyse → show),
and a file of a collector wing, crates/collector/src/<wing>.rs or <wing>/, names no later wing
(record → wire → plan → server → load).
The core's facade: every other crate (its sources, tests and doc comments) names the core only
through its doors, `sloscope_core::<door>::<Item>` (the public modules of crates/core/src/lib.rs
that are not stages) or an item lib.rs re-exports, never a stage module or a path below a door.
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


def doors(root):
    """The core's doors and root items, as its lib.rs declares them."""
    with open(os.path.join(root, "crates", "core", "src", "lib.rs"), encoding="utf-8") as fh:
        lib = fh.read()
    mods = set(re.findall(r"^pub mod (\w+);", lib, re.M))
    # A stage is public only under `internals`, for the core's own tests.
    mods -= set(re.findall(r"internals\"\)\]\s*\npub mod (\w+);", lib))
    items = set()
    for body in re.findall(r"^pub use [\w:]+::\{([^}]*)\};", lib, re.M):
        items |= {x.strip().split(" as ")[-1] for x in body.split(",") if x.strip()}
    items |= set(re.findall(r"^pub use [\w:]+::(\w+);", lib, re.M))
    return mods, items


def expand(prefix, body):
    """`a::{b, c::{d}}` as its paths."""
    out, depth, cur = [], 0, ""
    for ch in body + ",":
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            it = cur.strip()
            cur = ""
            if not it:
                continue
            m = re.match(r"^([\w:]*?)::\{(.*)\}$", it, re.S)
            if m:
                out += expand(prefix + "::" + m.group(1), m.group(2))
            elif it.startswith("{") and it.endswith("}"):
                out += expand(prefix, it[1:-1])
            else:
                out.append(prefix + "::" + it)
        else:
            cur += ch
    return out


def facade(root):
    """Findings of paths into the core that pass by its doors."""
    mods, items = doors(root)
    found = 0
    for top in ["crates", "web"]:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            if os.sep + "target" in dirpath or dirpath.startswith(os.path.join(root, "crates", "core")):
                continue
            for name in sorted(n for n in names if n.endswith(".rs")):
                f = os.path.join(dirpath, name)
                with open(f, encoding="utf-8") as fh:
                    text = fh.read()
                paths = []
                for m in re.finditer(r"sloscope_core::\{(.*?)\};", text, re.S):
                    paths += expand("sloscope_core", m.group(1))
                for m in re.finditer(r"(sloscope_core(?:::\w+)+)(::\{(.*?)\};)?", text, re.S):
                    paths += expand(m.group(1), m.group(3)) if m.group(2) else [m.group(1)]
                for p in paths:
                    seg = [x.split(" as ")[0].strip() for x in p.split("::")[1:]]
                    ok = seg and (
                        (seg[0] in items and (len(seg) == 1 or seg[0][:1].isupper()))
                        or (seg[0] in mods and (len(seg) <= 2 or seg[1][:1].isupper()))
                    )
                    if not ok:
                        found += 1
                        print(f"{os.path.relpath(f, root)} names {p}: not a door of the core")
    return found


def main(root):
    found = order(root, os.path.join(root, "crates", "core", "src"), STAGES, "stage")
    found += order(root, os.path.join(root, "crates", "collector", "src"), WINGS, "wing")
    found += facade(root)
    print(f"stage-order findings: {found}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
