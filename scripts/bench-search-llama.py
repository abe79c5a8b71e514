#!/usr/bin/env python3
"""The configuration search against its full grid on the real CPU llama-server, once.

Runs examples/llama-cpu/search.toml's search (`sloscope run`), then measures every
configuration of its space as a plain candidate (the knobs written into the server command,
the profile's full workload: 3 repeats x 24 requests), and prints both: the search's launches,
requests and wall time against the grid's, the grid's best configuration by throughput among
those meeting the SLO by their point estimates, and whether the search's pick is that one or
cannot be told from it (95 % intervals overlap).

Usage (after `eval "$(bash scripts/setup-llama.sh)"` and `cargo build --release -p sloscope`):
    python3 scripts/bench-search-llama.py DIR
    python3 scripts/bench-search-llama.py DIR --report   # the figures again from DIR, nothing run
Takes about 20 minutes on 2 cores. Machines are noisy: run it on an otherwise idle machine.
"""

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "sloscope")
PLAN = os.path.join(ROOT, "examples", "llama-cpu", "search.toml")


def configs(space):
    """Every configuration of the space, as the plan's constraints of the form
    `a OP n * b` (or `a OP b`) allow it."""
    knobs = space["knobs"]
    names = sorted(knobs)
    values = []
    for n in names:
        k = knobs[n]
        if "values" in k:
            values.append(k["values"])
        else:
            v, out = k["min"], []
            while v <= k["max"]:
                out.append(v)
                v = v * 2 if k.get("powers_of_two") else v + k.get("step", 1)
            values.append(out)
    ops = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
           "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
    pat = re.compile(r"^\s*(\w+)\s*(>=|<=|==|!=|>|<)\s*(?:(\d+(?:\.\d+)?)\s*\*\s*)?(\w+)\s*$")
    for combo in itertools.product(*values):
        c = dict(zip(names, combo))
        ok = True
        for text in space.get("constraints", []):
            m = pat.match(text)
            a, op, n, b = m.group(1), m.group(2), float(m.group(3) or 1), m.group(4)
            right = n * (c[b] if b in c else float(b))
            ok = ok and ops[op](c[a], right)
        if ok:
            yield c


def meets(metric, value, limit):
    """Met by the point estimate: a floor for throughput and goodput, else a ceiling."""
    higher = metric.startswith(("throughput", "goodput"))
    return value >= limit if higher else value <= limit


def name(c):
    return ".".join(f"{k}-{v}" for k, v in sorted(c.items()))


REPORT_ONLY = "--report" in sys.argv


def run(args, **kw):
    if REPORT_ONLY:
        return 0.0
    started = time.monotonic()
    subprocess.run([BIN] + args, check=False, stdout=subprocess.DEVNULL, **kw)
    return time.monotonic() - started


def analysis(out):
    p = subprocess.run([BIN, "analyze", out, "--format", "json"], capture_output=True)
    return json.loads(p.stdout)


def search(d):
    s = os.path.join(d, "search")
    if not REPORT_ONLY:
        shutil.rmtree(s, ignore_errors=True)
        os.makedirs(s)
        shutil.copy(PLAN, os.path.join(s, "plan.toml"))
        shutil.copytree(os.path.join(d, "lineage"), os.path.join(s, "lineage"))
    wall = run(["run", "--plan", os.path.join(s, "plan.toml"), "--out", os.path.join(s, "out"), "-q"])
    r = analysis(os.path.join(s, "out"))["profiles"][0]["search"]
    return r, wall


def grid_plan(text, c):
    cmd = re.search(r'^server_command = "(.*)"$', text, re.M).group(1)
    for k, v in c.items():
        cmd = cmd.replace("{" + k + "}", str(v))
    text = text.replace(re.search(r'^server_command = ".*"$', text, re.M).group(0),
                        f'server_command = "{cmd}"')
    text = text.replace('knob = "parallel"', 'knob = "config"')
    text = text.replace('name = "np4"\nvalue = 4', f'name = "{name(c)}"\nvalue = "{name(c)}"')
    return text.split("\n[space]")[0]


def grid(d, plan_text, space):
    rows = []
    wall = 0.0
    for c in configs(space):
        g = os.path.join(d, "grid", name(c))
        if not REPORT_ONLY:
            shutil.rmtree(g, ignore_errors=True)
            os.makedirs(g)
            with open(os.path.join(g, "plan.toml"), "w") as f:
                f.write(grid_plan(plan_text, c))
            shutil.copytree(os.path.join(d, "lineage"), os.path.join(g, "lineage"))
        wall += run(["run", "--plan", os.path.join(g, "plan.toml"), "--out", os.path.join(g, "out"), "-q"])
        p = analysis(os.path.join(g, "out"))["profiles"][0]
        cand = (p.get("candidates") or [{}])[0]
        rows.append({
            "name": name(c),
            "throughput_tps": cand.get("primary_value"),
            "interval": cand.get("primary_interval"),
            "meets_by_value": bool(cand.get("slo_checks")) and all(
                k["value"] is not None and meets(k["metric"], k["value"], k["limit"])
                for k in cand["slo_checks"]),
        })
        print(f"  grid {name(c)}: {rows[-1]['throughput_tps']}", file=sys.stderr)
    return rows, wall


def main():
    args = [a for a in sys.argv[1:] if a != "--report"]
    d = os.path.abspath(args[0] if args else "bench-search-llama")
    earlier = {}
    if REPORT_ONLY:
        with open(os.path.join(d, "bench-search-llama.json")) as f:
            earlier = json.load(f)
    os.makedirs(d, exist_ok=True)
    if not os.path.isdir(os.path.join(d, "lineage")):
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "make-lineage.sh"),
                        os.path.join(d, "lineage"), "Q8_0"], check=True)
    text = open(PLAN).read()
    space = tomllib.loads(text)["space"]
    s, s_wall = search(d)
    rows, g_wall = grid(d, text, space)
    if REPORT_ONLY:
        s_wall, g_wall = earlier["search"]["wall_s"], earlier["grid"]["wall_s"]
    ok = [r for r in rows if r["meets_by_value"] and r["throughput_tps"] is not None]
    best = max(ok, key=lambda r: r["throughput_tps"]) if ok else None
    pick = s["result"]["chosen_name"]
    pick_row = next((r for r in rows if r["name"] == pick), None)

    def overlap(a, b):
        ia, ib = a["interval"] or {}, b["interval"] or {}
        lo_a, hi_a, lo_b, hi_b = ia.get("low"), ia.get("high"), ib.get("low"), ib.get("high")
        return None not in (lo_a, hi_a, lo_b, hi_b) and lo_a <= hi_b and lo_b <= hi_a

    result = {
        "configurations": len(rows),
        "search": {"launches": s["result"]["launches"], "requests": s["result"]["requests"],
                   "wall_s": round(s_wall, 1), "pick": pick, "confirmed": s["result"]["confirmed"],
                   "pick_grid_throughput_tps": pick_row and pick_row["throughput_tps"]},
        "grid": {"launches": len(rows), "requests": 72 * len(rows), "wall_s": round(g_wall, 1),
                 "best": best and best["name"], "best_throughput_tps": best and best["throughput_tps"]},
        "pick_is_best": best is not None and pick == best["name"],
        "pick_tied_with_best": best is not None and pick_row is not None and overlap(pick_row, best),
        "rows": sorted(rows, key=lambda r: -(r["throughput_tps"] or 0)),
    }
    with open(os.path.join(d, "bench-search-llama.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=1))


if __name__ == "__main__":
    main()
