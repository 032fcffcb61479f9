#!/usr/bin/env python3
"""The references for `toolgate eval retrieval`: what a user would otherwise pick.

- rank-bm25 (BM25Okapi) with the usual tokenisation, `text.lower().split()`;
- vector-only top-k over the same MiniLM embeddings with numpy (the langgraph-bigtool
  approach: cosine of the query against every tool, best k).

Reads the directory written by the eval (docs.jsonl, queries.jsonl, subsets.json,
doc_vectors.f32, query_vectors.f32) and prints one JSON list of rows with the same fields as
the Rust report: catalog, tools, queries, retriever, recall_at_1/5/10, mrr, ndcg_at_10.
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi


def metrics(ranked, relevant):
    rel = set(relevant)
    hit = [r in rel for r in ranked]
    recall = lambda k: sum(hit[:k]) / len(rel)
    mrr = next((1.0 / (i + 1) for i, h in enumerate(hit) if h), 0.0)
    dcg = sum(1.0 / math.log2(i + 2) for i, h in enumerate(hit[:10]) if h)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    return [recall(1), recall(5), recall(10), mrr, dcg / ideal if ideal else 0.0]


def base(i):
    return i.split("#", 1)[0]


def by_name(scores, ids, relevant):
    """Docs sharing a name count as one; the first ranked stands for the name."""
    seen, names = set(), []
    for i in np.argsort(-scores, kind="stable"):
        n = base(ids[i])
        if n not in seen:
            seen.add(n)
            names.append(n)
            if len(names) == 10:
                break
    return metrics(names, {base(r) for r in relevant})


def main(d):
    d = Path(d)
    docs = [json.loads(l) for l in open(d / "docs.jsonl")]
    queries = [json.loads(l) for l in open(d / "queries.jsonl")]
    subsets = json.load(open(d / "subsets.json"))
    dv = qv = None
    if (d / "doc_vectors.f32").exists():
        dv = np.fromfile(d / "doc_vectors.f32", dtype="<f4").reshape(len(docs), -1)
        qv = np.fromfile(d / "query_vectors.f32", dtype="<f4").reshape(len(queries), -1)
    rows = []
    for s in subsets:
        ids = [docs[i]["id"] for i in s["docs"]]
        bm25 = BM25Okapi([docs[i]["text"].lower().split() for i in s["docs"]])
        mat = dv[s["docs"]] if dv is not None else None
        sums = {k: np.zeros(5) for k in ["rank-bm25", "numpy top-k", "rank-bm25 (by name)", "numpy top-k (by name)"]}
        for qi in s["queries"]:
            q = queries[qi]
            scores = bm25.get_scores(q["text"].lower().split())
            top = np.argsort(-scores, kind="stable")[:10]
            sums["rank-bm25"] += metrics([ids[i] for i in top], q["relevant"])
            sums["rank-bm25 (by name)"] += by_name(scores, ids, q["relevant"])
            if mat is not None:
                sims = mat @ qv[qi]
                top = np.argsort(-sims, kind="stable")[:10]
                sums["numpy top-k"] += metrics([ids[i] for i in top], q["relevant"])
                sums["numpy top-k (by name)"] += by_name(sims, ids, q["relevant"])
        n = max(len(s["queries"]), 1)
        for name, tot in sums.items():
            if name.startswith("numpy") and mat is None:
                continue
            m = tot / n
            rows.append({"catalog": s["label"], "tools": len(s["docs"]), "queries": len(s["queries"]),
                         "retriever": name, "recall_at_1": m[0], "recall_at_5": m[1],
                         "recall_at_10": m[2], "mrr": m[3], "ndcg_at_10": m[4]})
    json.dump(rows, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
