#!/usr/bin/env python3
"""The workspace's import graph, counted (issue 31): for each crate, the arrows between its
top-level modules (`use crate::m`, `crate::m::…` paths, `super::` from a top-level module's
children), the import circles among them (strongly connected groups of more than one module),
and, inside toolgate-store, the arrows that run back up from the shared plumbing (the pool,
the connection, the errors, the change feed) to the stores built on it. Also lists where a
store is opened outside toolgate-store (the door count).

Usage: scripts/import-graph.py [--json]
"""
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CRATES = os.path.join(ROOT, "crates")
# The plumbing of the store: an arrow from one of these to a store module runs back up.
STORE_PLUMBING = {"db", "pg", "error", "changes", "clock", "schema"}
# What opens a store outside the store crate.
OPENS = re.compile(
    r"\b(PgBackend::open|PgPool::new|open_db|(ApprovalStore|IdempotencyStore|TokenStore|ChatPosts|"
    r"PinStore|CredentialStore|SqliteBuckets|ResultStore)::open\w*)\s*\("
)
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")


def top_module(src, path):
    rel = os.path.relpath(path, src)
    head = rel.split(os.sep)[0]
    return head[:-3] if head.endswith(".rs") else head


def crate_graph(src):
    edges = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            me = top_module(src, path)
            if me in ("lib", "main"):
                continue
            text = open(path, encoding="utf-8").read()
            text = re.sub(r"//[^\n]*", "", text)
            for m in PATH.findall(text):
                if m != me and os.path.exists(os.path.join(src, m + ".rs")) or os.path.isdir(os.path.join(src, m)):
                    if m != me:
                        edges.setdefault(me, set()).add(m)
    return edges


def circles(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def main():
    report = {"crates": {}, "store_back_arrows": [], "store_opened_outside": []}
    for crate in sorted(os.listdir(CRATES)):
        src = os.path.join(CRATES, crate, "src")
        if not os.path.isdir(src):
            continue
        edges = crate_graph(src)
        report["crates"][crate] = {
            "arrows": sum(len(v) for v in edges.values()),
            "circles": circles(edges),
        }
        if crate == "toolgate-store":
            for a, bs in sorted(edges.items()):
                if a in STORE_PLUMBING:
                    report["store_back_arrows"] += [f"{a} -> {b}" for b in sorted(bs) if b not in STORE_PLUMBING]
        else:
            for dirpath, _, files in os.walk(src):
                for f in files:
                    if f.endswith(".rs") and not f.endswith("tests.rs"):
                        path = os.path.join(dirpath, f)
                        for i, line in enumerate(open(path, encoding="utf-8"), 1):
                            if OPENS.search(line) and not line.lstrip().startswith("//"):
                                report["store_opened_outside"].append(f"{os.path.relpath(path, ROOT)}:{i}")
    if "--json" in sys.argv:
        print(json.dumps(report, indent=2))
        return
    total_circles = sum(len(c["circles"]) for c in report["crates"].values())
    print(f"import circles between top-level modules: {total_circles}")
    for crate, c in report["crates"].items():
        for group in c["circles"]:
            print(f"  {crate}: {' <-> '.join(group)}")
    print(f"arrows back up inside toolgate-store (plumbing -> a store): {len(report['store_back_arrows'])}")
    for a in report["store_back_arrows"]:
        print(f"  {a}")
    print(f"places outside toolgate-store that open a store: {len(report['store_opened_outside'])}")
    for p in report["store_opened_outside"]:
        print(f"  {p}")


if __name__ == "__main__":
    main()
