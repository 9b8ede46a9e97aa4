"""Steps of the large-graph benchmarks, each run in a fresh process with its peak memory.

A step is a few lines of Python run after ``R = dpgraph.load(path)`` in a new
interpreter (so one step's memory, caches and numba state cannot affect the
next).  The step process reports the step's wall time (the load excluded),
its outcome -- ``ok``, ``unresolved`` (an estimate whose interval cannot
resolve it, with the reason), ``refused`` (a MemoryError raised before
allocating, or a call predicted beyond ``max_seconds`` refusing before it
starts, with its message), ``stopped`` (a call that passed ``max_seconds``
while running and stopped itself), ``error`` or ``timeout`` (the benchmark's
own per-step limit, a safety net set well above ``max_seconds``) -- the peak
resident memory of the whole process (Linux ``VmHWM``, which includes the
interpreter and the loaded release: what a user needs to run the step), and
the 1-minute load average (``/proc/loadavg``) at the step's start and end,
since on a shared machine a time means little without it.

``max_seconds`` (None: no limit) is the user's time limit: it is passed as
``max_seconds=`` to the calls that take one (triangles, transitivity,
average_clustering, communities), as ``--max-seconds`` to ``dpgraph report``,
and set around every step with ``dpgraph.graph.analytics.time_limit`` so the
calls those make inside take it too.

``--step-limit-gib`` caps each step process's address space (RLIMIT_AS, on
top of what it has mapped when it starts the step), so a step that would
need more either refuses by itself (dpgraph reads the limit) or fails inside
an allocation -- reported as it is, never hidden.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

#: the code of each step; ``R`` is the loaded release, ``truth`` the input's true values,
#: ``work`` a scratch folder; it sets ``out`` (a dict of numbers/strings) and may set ``est``
STEPS: dict[str, str] = {
    "load": "out = {'nodes': R.number_of_nodes()}",
    "one pass over the bits": """
        adj = R.adjacency
        data = adj.words if hasattr(adj, 'words') else adj.indices  # packed words or CSR columns
        total = (int(np.bitwise_count(data).sum()) if data.dtype == np.uint64
                 else int(np.count_nonzero(data >= 0)))
        out = {'bytes': int(data.nbytes)}
    """,
    "number_of_edges": "est = R.number_of_edges(); out = {'truth': truth['m']}",
    "cuts (100 half cuts)": """
        rng = np.random.default_rng(1)
        n = R.number_of_nodes()
        member = np.where(np.arange(n)[None, :] < n // 2, 1, -1).astype(np.int8)
        member = np.stack([rng.permutation(member[0]) for _ in range(100)])
        est = R.cut_batch(member)
        out = {'resolved': int(np.sum(est.resolved)), 'queries': 100}
    """,
    "degree": "est = R.degree(R.node_index.nodes[0]); out = {}",
    "degree_distribution": """
        h = R.degree_distribution()
        k = np.arange(h.size)
        out = {'mean_degree': float(h @ k), 'true_mean_degree': 2 * truth['m'] / truth['n'],
               'support': int(np.flatnonzero(h > 1e-12).max()) + 1}
    """,
    "degree_assortativity": "est = R.degree_assortativity(); out = {}",
    "communities": """
        c = R.communities(max_seconds=max_seconds)
        flag = getattr(c, 'resolvable', None)
        out = {'k': int(c.n_communities), 'detected': None if flag is None else bool(flag),
               'modularity': float(c.modularity.value)}
        if truth.get('labels_file'):
            from sklearn.metrics import normalized_mutual_info_score as nmi
            lab = np.load(truth['labels_file'])
            out['nmi_vs_planted'] = float(nmi(lab, c.labels(R.nodes)))
        if flag is False:
            status = 'unresolved'
            reason = 'no community structure clears the noise'
    """,
    "density": "est = R.density(); out = {}",
    "degree (all nodes)": "d = R.degree(); out = {'nodes': len(list(d))}",
    "volume": "est = R.volume(R.node_index.nodes[: R.number_of_nodes() // 10]); out = {}",
    "density_between": """
        n = R.number_of_nodes()
        est = R.density_between(R.node_index.nodes[: n // 10], R.node_index.nodes[n // 10 : n // 5]); out = {}
    """,
    "cut": "est = R.cut(R.node_index.nodes[: R.number_of_nodes() // 2]); out = {}",
    "cuts (10 pairs)": """
        n = R.number_of_nodes(); rng = np.random.default_rng(2)
        pairs = [(p[: n // 3], p[n // 3 :]) for p in (rng.permutation(n) for _ in range(10))]
        est = R.cuts([([R.node_index.nodes[i] for i in s], [R.node_index.nodes[i] for i in t]) for s, t in pairs])
        out = {'resolved': int(np.sum(est.resolved)), 'queries': 10}
    """,
    "edges_within": "est = R.edges_within(R.node_index.nodes[: R.number_of_nodes() // 10]); out = {}",
    "modularity (planted partition)": """
        lab = np.load(truth['labels_file'])
        est = R.modularity([set(np.flatnonzero(lab == b).tolist()) for b in np.unique(lab)])
        out = {}
    """,
    "wedges": "est = R.wedges(); out = {'truth': truth.get('wedges')}",
    "triangles": "est = R.triangles(max_seconds=max_seconds); out = {'truth': truth.get('triangles')}",
    "released_degrees": "d = R.released_degrees(); out = {'nodes': int(d.size)}",
    "released_edges": "r, c = R.released_edges(); out = {'edges': int(r.size)}",
    "save": """
        path = os.path.join(work, 'copy.dpg'); R.save(path)
        out = {'bytes': os.path.getsize(path)}; os.remove(path)
    """,
    "transitivity": "est = R.transitivity(max_seconds=max_seconds); out = {'truth': truth.get('transitivity')}",
    "average_clustering": "est = R.average_clustering(max_seconds=max_seconds); out = {}",
    "synthesize": "H = R.synthesize(seed=0); out = {'edges': H.number_of_edges()}",
    "to_scipy_sparse": "A = R.to_scipy_sparse(); out = {'nnz': int(A.nnz)}",
    "to_networkx": "H = R.to_networkx(); out = {'edges': H.number_of_edges()}",
    "to_edgelist": """
        path = os.path.join(work, 'edges.txt'); R.to_edgelist(path)
        out = {'bytes': os.path.getsize(path)}; os.remove(path)
    """,
    "report": """
        import contextlib, io
        from dpgraph.cli import main as cli
        path = os.path.join(work, os.path.basename(release_path) + '.html')
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            limit = [] if max_seconds is None else ['--max-seconds', f'{max_seconds:g}']
            code = cli(['report', release_path, '-o', path, '--quiet', '--force'] + limit)
        out = {'exit': code, 'bytes': os.path.getsize(path) if os.path.exists(path) else 0}
        if os.path.exists(path):
            os.remove(path)
        if code != 0:
            status, reason = 'error', err.getvalue().strip()[-500:]
    """,
}

_RUNNER = """
import json, os, resource, sys, time, traceback, warnings
warnings.simplefilter("ignore")
import numpy as np
import dpgraph
spec = json.loads(sys.argv[1])
release_path, work, truth = spec["release"], spec["work"], spec["truth"]
max_seconds = spec.get("max_seconds")
from dpgraph.graph.analytics import time_limit


def loadavg():
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


if spec["limit"]:
    import psutil
    vms = psutil.Process().memory_info().vms
    resource.setrlimit(resource.RLIMIT_AS, (vms + spec["limit"] + (1 << 30), resource.RLIM_INFINITY))
t0 = time.perf_counter()
R = dpgraph.load(release_path)
load_seconds = time.perf_counter() - t0
if spec["limit"]:  # the step itself gets `limit` bytes beyond what the loaded release holds
    vms = psutil.Process().memory_info().vms
    resource.setrlimit(resource.RLIMIT_AS, (vms + spec["limit"], resource.RLIM_INFINITY))
status, reason, est, out = "ok", None, None, {}
load_start = loadavg()
t0 = time.perf_counter()
try:
    with time_limit(max_seconds):
        exec(spec["code"])
except MemoryError as exc:  # a refused allocation, or CostLimitError (a time limit)
    status, reason = "refused", str(exc)
    if type(exc).__name__ == "CostLimitError" and " stopped after " in reason:
        status = "stopped"
except Exception as exc:
    status, reason = "error", f"{type(exc).__name__}: {exc}"[:2000]
seconds = time.perf_counter() - t0
load_end = loadavg()
if est is not None and status == "ok":
    value = np.asarray(est.value, dtype=float)
    if value.ndim == 0:
        out.update(value=float(value), std=float(est.std))
        if not est.resolved:
            status, reason = "unresolved", est.reason
peak = 0
with open("/proc/self/status") as fh:
    for line in fh:
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) * 1024
print("STEP-RESULT " + json.dumps({"status": status, "reason": reason, "seconds": seconds,
                                   "load_seconds": load_seconds, "peak_rss": peak, "out": out,
                                   "load": [load_start, load_end]}, default=str))
"""


def loadavg() -> float:
    """The 1-minute load average of the machine (``/proc/loadavg``)."""
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def run_step(name: str, release: str, truth: dict, work: str, timeout: float,
             limit_bytes: int = 0, max_seconds: float | None = None) -> dict:
    """Run step ``name`` on the release file in a fresh interpreter; its result dict.

    ``timeout`` is the benchmark's safety net (the step is killed and reported
    as a timeout); ``max_seconds`` is the user's limit the library itself
    enforces (None: no limit).
    """
    spec = {"release": release, "work": work, "truth": truth, "limit": int(limit_bytes),
            "max_seconds": max_seconds, "code": textwrap.dedent(STEPS[name])}
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0, load0 = time.perf_counter(), loadavg()
    try:
        proc = subprocess.run([sys.executable, "-c", _RUNNER, json.dumps(spec)], capture_output=True,
                              text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"step": name, "status": "timeout", "reason": f"over {timeout:.0f} s",
                "seconds": time.perf_counter() - t0, "peak_rss": None, "out": {},
                "load": [load0, loadavg()]}
    for line in proc.stdout.splitlines():
        if line.startswith("STEP-RESULT "):
            res = json.loads(line[len("STEP-RESULT "):])
            res["step"] = name
            if name == "load":  # the step is the load itself
                res["seconds"] = res["load_seconds"]
            return res
    tail = (proc.stderr or "").strip().splitlines()[-3:]
    return {"step": name, "status": "killed" if proc.returncode < 0 else "error",
            "reason": f"exit {proc.returncode}: " + " | ".join(tail), "seconds": None,
            "peak_rss": None, "out": {}, "load": [load0, loadavg()]}


def release_step(edges_file: str, n: int, epsilon: float, path: str, sparse_target: int | None,
                 timeout: float) -> dict:
    """Release the edge array in a fresh process and save it: time and peak of both."""
    code = textwrap.dedent(f"""
        import json, time, warnings
        warnings.simplefilter("ignore")
        import numpy as np, dpgraph
        E = np.load({edges_file!r})
        kw = {{}} if {sparse_target!r} is None else {{"target_edges": {sparse_target!r}}}
        t0 = time.perf_counter()
        R = dpgraph.release(E, {epsilon!r}, nodes=range({n}), **kw)
        t1 = time.perf_counter()
        R.save({path!r})
        t2 = time.perf_counter()
        peak = 0
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
        print("STEP-RESULT " + json.dumps({{"release": t1 - t0, "save": t2 - t1, "peak_rss": peak,
              "released_edges": R.number_of_released_edges(), "keep": R.keep}}))
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    load0 = loadavg()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": f"over {timeout:.0f} s", "load": [load0, loadavg()]}
    load = [load0, loadavg()]
    for line in proc.stdout.splitlines():
        if line.startswith("STEP-RESULT "):
            return {"status": "ok", "load": load, **json.loads(line[len("STEP-RESULT "):])}
    return {"status": "error", "reason": (proc.stderr or "")[-1500:], "load": load}


def planted_partition(n: int, avg_degree: float, blocks: int, inside: float,
                      seed: int) -> tuple[np.ndarray, np.ndarray]:
    """An (m, 2) edge array of a planted partition (SBM) and its block labels, in O(m).

    ``blocks`` equal blocks; a fraction ``inside`` of the expected degree falls
    inside a node's block.  Edges are drawn as uniform pairs per block pair
    (duplicates dropped), so the graph is exactly G(n_a, p) on each block and
    bipartite G(n_a, n_b, p) between blocks up to the duplicates.
    """
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(blocks), -(-n // blocks))[:n]
    rng.shuffle(labels)
    order = np.argsort(labels, kind="stable")  # the members of block b: order[start[b]:start[b+1]]
    sizes = np.bincount(labels, minlength=blocks)
    start = np.r_[0, np.cumsum(sizes)[:-1]]
    m_in = round(n * avg_degree * inside / 2)
    m_out = round(n * avg_degree * (1 - inside) / 2)
    parts = []
    for count, same in ((m_in, True), (m_out, False)):
        a = rng.integers(0, blocks, size=count)
        b = a if same else (a + rng.integers(1, blocks, size=count)) % blocks
        u = order[start[a] + (rng.random(count) * sizes[a]).astype(np.int64)]
        v = order[start[b] + (rng.random(count) * sizes[b]).astype(np.int64)]
        keep = u != v
        parts.append(np.c_[np.minimum(u, v)[keep], np.maximum(u, v)[keep]])
    E = np.unique(np.concatenate(parts), axis=0)
    return E, labels


def true_values(E: np.ndarray, n: int) -> dict:
    """m, triangles, wedges and transitivity of the edge array's graph (scipy, exact)."""
    import scipy.sparse as sp

    A = sp.coo_array((np.ones(len(E)), (E[:, 0], E[:, 1])), shape=(n, n)).tocsr()
    A = (A + A.T).tocsr()
    deg = np.asarray(A.sum(axis=1)).ravel()
    tri = float((A @ A).multiply(A).sum()) / 6
    wedges = float(np.sum(deg * (deg - 1) / 2))
    return {"n": n, "m": len(E), "triangles": tri, "wedges": wedges,
            "transitivity": 3 * tri / wedges if wedges else 0.0}


def short(res: dict) -> str:
    """A table cell: resolved / ok / unresolved at this eps / refused (needs ...) / timeout."""
    import re

    status, out = res["status"], res.get("out") or {}
    if status == "ok" and "queries" in out:
        return f"{out['resolved']} of {out['queries']} resolved"
    if status == "ok":
        return "resolved" if "value" in out else "ok"
    if status == "unresolved":
        return "unresolved at this eps"
    reason = res.get("reason") or ""
    if status in ("refused", "stopped") and "max_seconds" in reason:
        pred = re.search(r"(?:about |predicted )([\d.,]+ (?:s|min|h))", reason)
        limit = re.search(r"max_seconds=(\d+(?:\.\d+)?)", reason)
        lim = limit.group(1) if limit else "max_seconds"
        pred_text = pred.group(1) if pred else "?"
        if status == "stopped":
            return f"stopped at max_seconds={lim} (predicted {pred_text})"
        return f"refused: predicted {pred_text} > max_seconds={lim}"
    if status == "refused":
        need = re.search(r"needs ([\d.,]+ GiB)", reason)
        return f"refused (needs {need.group(1)})" if need else "refused"
    if status == "not run":
        return f"not measured ({reason})"
    return f"{status} ({reason[:60]})" if status == "error" else status


def load_text(res: dict) -> str:
    """The load average at the step's start and end: "load 3.1" or "load 3.1-4.2"."""
    load = res.get("load")
    if not load:
        return ""
    a, b = load
    return f"load {a:.1f}" if abs(a - b) < 0.05 else f"load {a:.1f}-{b:.1f}"


def gib(x: float | None) -> str:
    return "-" if x is None else f"{x / 2**30:.2f}"


def summary(res: dict) -> str:
    """One short cell: the outcome and its numbers or reason."""
    out = res.get("out") or {}
    status = res["status"]
    if status == "ok":
        bits = []
        if "value" in out:
            bits.append(f"{out['value']:.4g} ± {out['std']:.3g}")
        bits += [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                 for k, v in out.items() if k not in ("value", "std")]
        return "ok: " + ", ".join(bits) if bits else "ok"
    reason = (res.get("reason") or "").replace("\n", " ")
    if status == "unresolved" and "value" in out:
        truth = f" (truth {out['truth']:.3g})" if isinstance(out.get("truth"), (int, float)) else ""
        reason = f"{out['value']:.3g} ± {out['std']:.3g}{truth}; {reason}"
    return f"{status}: {reason[:300]}"
