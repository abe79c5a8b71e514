#!/usr/bin/env python3
# The workplace's import-circle checker (shared/tools/rust_cycles.py), copied here unchanged so
# the test command can run it from a clean clone. Update it from there, not here.
"""Import circles between the files of each Rust crate (library and binary code, tests left out).

usage: rust_cycles.py [ROOT]          (default: the current directory)
Reads every crate under ROOT/crates/*/src and ROOT/web/src. A file A points at file B when A names
an item of B through a path (`use crate::x::y`, `super::z`, an inline `crate::x::f()`, or a child
module named from lib.rs / mod.rs); a re-export (`pub use child::Item`) is followed to the file
that defines the item. Prints each circle (a strongly connected set of files) with the arrows that
tie it, then a last line `circles: N`. Exit status 1 when N > 0.

It reads text, not the compiler's view: macros, `#[path]` and glob re-exports are not followed.
"""
import os
import re
import sys

USE = re.compile(r'\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);', re.S)
INLINE = re.compile(r'\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)')
MOD = re.compile(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;', re.M)
TEST_BLOCK = re.compile(r'^\s*#\[cfg\(test\)\]\s*\n\s*(?:pub\s+)?mod\s+\w+\s*\{', re.M)


def strip_comments_and_strings(src):
    """Blank out comments, string and char literals (one pass; raw strings and lifetimes kept apart)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src.startswith('/*', i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif src.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c in 'rb' and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')) and \
                re.match(r'(?:br|r|b)?#*"', src[i:i + 70]):
            m = re.match(r'(b?r)(#*)"', src[i:i + 70])
            if m:  # raw string: ends at a quote followed by the same number of #
                end = src.find('"' + m.group(2), i + len(m.group(0)))
                i = n if end < 0 else end + 1 + len(m.group(2))
            else:  # b"..."
                i += 1
                continue
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == '\\' else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(?:\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", src[i:i + 12]):
            i += len(re.match(r"'(?:\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", src[i:i + 12]).group(0))
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def drop_test_modules(src):
    out, pos = [], 0
    for m in TEST_BLOCK.finditer(src):
        if m.start() < pos:
            continue
        out.append(src[pos:m.start()])
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {'{': 1, '}': -1}.get(src[i], 0)
            i += 1
        pos = i
    out.append(src[pos:])
    return ''.join(out)


def expand(tree):
    """'a::{b, c::{d, e}}' -> ['a::b', 'a::c::d', 'a::c::e'] (aliases and globs dropped)."""
    tree = re.sub(r'\s+', '', tree)
    if '{' not in tree:
        return [re.sub(r'as\w+$', '', tree.split(' as ')[0]).rstrip(':*')]
    head, rest = tree.split('{', 1)
    body = rest[:rest.rfind('}')]
    parts, depth, cur = [], 0, ''
    for ch in body:
        if ch == ',' and depth == 0:
            parts.append(cur); cur = ''
            continue
        depth += {'{': 1, '}': -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p and p != 'self':
            out += [head + q for q in expand(p)]
        elif p == 'self':
            out.append(head.rstrip(':'))
    return out


def crate_files(src_dir):
    """module path (tuple) -> file, for every .rs file reachable as a module of this src dir."""
    mods = {}
    for root, _, files in os.walk(src_dir):
        for f in files:
            if not f.endswith('.rs'):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, src_dir)[:-3].split(os.sep)
            if rel == ['lib'] or rel == ['main']:
                key = ()
            elif rel[0] == 'bin':
                continue  # each src/bin file is its own crate root; read separately
            elif rel[-1] == 'mod':
                key = tuple(rel[:-1])
            else:
                key = tuple(rel)
            if key == () and rel == ['main'] and () in mods:
                continue  # lib.rs is the root when both exist
            mods[key] = p
    return mods


def resolve(path, here, mods, reexports, depth=0):
    segs = path.split('::')
    if segs[0] == 'crate':
        base, segs = (), segs[1:]
    elif segs[0] in ('super', 'self'):
        base = here
        while segs and segs[0] in ('super', 'self'):
            if segs[0] == 'super':
                base = base[:-1]
            segs = segs[1:]
    elif here + (segs[0],) in mods:
        base = here  # a child module named from its parent
    else:
        return None  # another crate, std, or a local item
    cur = base
    for i, s in enumerate(segs):
        if cur + (s,) in mods:
            cur = cur + (s,)
            continue
        target = reexports.get(mods.get(cur), {}).get(s)
        if target and depth < 4:
            r = resolve(target, cur, mods, reexports, depth + 1)
            if r:
                return r
        break
    return mods.get(cur)


def graph_of(src_dir):
    mods = crate_files(src_dir)
    here_of = {f: k for k, f in mods.items()}
    texts = {}
    for f in mods.values():
        with open(f, encoding='utf-8', errors='replace') as h:
            texts[f] = drop_test_modules(strip_comments_and_strings(h.read()))
    reexports = {}
    for f, t in texts.items():
        r = {}
        for m in USE.finditer(t):
            if not m.group(0).lstrip().startswith('pub'):
                continue
            for p in expand(m.group(1)):
                name = p.split('::')[-1]
                if name:
                    r[name] = p
        reexports[f] = r
    edges = {}
    for f, t in texts.items():
        here = here_of[f]
        paths = [p for m in USE.finditer(t) for p in expand(m.group(1))]
        paths += INLINE.findall(t)
        for p in paths:
            if not p:
                continue
            target = resolve(p, here, mods, reexports)
            there = here_of.get(target)
            related = there is not None and (here[:len(there)] == there or there[:len(here)] == here)
            if target and target != f and not related:  # a module and its own parent or child: one unit
                edges.setdefault(f, {}).setdefault(target, set()).add(p.split('::')[-1])
    return edges


def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    nodes = set(edges) | {t for v in edges.values() for t in v}

    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    srcs = sorted(os.path.join(root, 'crates', c, 'src') for c in os.listdir(os.path.join(root, 'crates'))
                  if os.path.isdir(os.path.join(root, 'crates', c, 'src')))
    if os.path.isdir(os.path.join(root, 'web', 'src')):
        srcs.append(os.path.join(root, 'web', 'src'))
    count = 0
    for s in srcs:
        edges = graph_of(s)
        for comp in sccs(edges):
            count += 1
            rel = lambda p: os.path.relpath(p, root)
            print(f'circle {count}: {len(comp)} files: ' + ', '.join(rel(p) for p in comp))
            for a in comp:
                for b in comp:
                    names = edges.get(a, {}).get(b)
                    if names:
                        print(f'  {rel(a)} -> {rel(b)}: ' + ', '.join(sorted(names)[:6]))
    print(f'circles: {count}')
    sys.exit(1 if count else 0)


if __name__ == '__main__':
    main()
