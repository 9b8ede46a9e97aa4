"""Run every benchmark script and print one table of ratios.

Usage (from the repository root)::

    DPGRAPH_DATA_DIR=/path/to/data python -m benchmarks            # every bench_*.py
    python -m benchmarks --only cuts,release --repeat 3            # a subset
    python -m benchmarks --quick                                   # smaller inputs where supported

Every ``benchmarks/bench_*.py`` is discovered and run in its own process (so
one script's memory or numba state cannot affect another's timings), with the
repository on ``PYTHONPATH``, in a temporary directory (``--workdir`` keeps
the files scripts write, such as CSVs).  Scripts record their ratios with
``benchmarks._common.report``; each ratio compares dpgraph with a baseline
timed in the same process, on the same machine, minutes apart at most.  The
table gives the machine and the load average before and after, because the
absolute timings depend on both; the ratios much less so.  A script that
fails or reports no ratio is listed as such, never dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import QUICK_ENV, RESULTS_ENV, cpu_model, load_average, table

HERE = Path(__file__).resolve().parent


def discover(only: list[str] | None = None, skip: list[str] | None = None) -> list[Path]:
    """The bench_*.py scripts, sorted, filtered by name fragments."""
    scripts = sorted(HERE.glob("bench_*.py"))
    if only:
        scripts = [p for p in scripts if any(o in p.stem for o in only)]
    if skip:
        scripts = [p for p in scripts if not any(s in p.stem for s in skip)]
    return scripts


def _verdict(row: dict) -> str:
    target = row.get("target")
    if target is None:
        return "-"
    ratio = row["ratio"]
    ok = ratio >= target if row.get("higher_is_better", True) else ratio <= target
    if ok:
        return "met"
    # by how much: the factor still missing
    short = target / ratio if row.get("higher_is_better", True) else ratio / target
    return f"missed by {short:.2f}x"


def run_script(path: Path, results: Path, timeout: float, extra_env: dict, show: bool,
               workdir: Path) -> tuple[str, float]:
    """Run one script in ``workdir`` (its own files land there, not in the repository)."""
    env = dict(os.environ, **extra_env)
    env[RESULTS_ENV] = str(results)
    root = str(HERE.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(path)], cwd=workdir, env=env, timeout=timeout,
                              capture_output=not show, text=True, check=False)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:.0f} s", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-1:] if not show else []
        return f"failed (exit {proc.returncode}{': ' + tail[0] if tail else ''})", seconds
    return "ok", seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated name fragments, e.g. cuts,release")
    ap.add_argument("--skip", default="", help="comma-separated name fragments to leave out")
    ap.add_argument("--quick", action="store_true", help=f"set {QUICK_ENV}=1: smaller inputs where supported")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per script (default 1800)")
    ap.add_argument("--show-output", action="store_true", help="stream each script's own output")
    ap.add_argument("--list", action="store_true", help="list the scripts that would run and exit")
    ap.add_argument("--workdir", default="", help="directory the scripts run in, to keep the files they "
                    "write (default: a temporary directory, removed afterwards)")
    args = ap.parse_args(argv)
    split = lambda s: [x.strip() for x in s.split(",") if x.strip()]
    scripts = discover(split(args.only), split(args.skip))
    if args.list:
        print("\n".join(p.name for p in scripts))
        return 0
    if not scripts:
        print("no benchmark script matches", file=sys.stderr)
        return 2
    extra = {QUICK_ENV: "1"} if args.quick else {}
    load_start = load_average()
    rows, statuses = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for path in scripts:
            results = Path(tmp) / (path.stem + ".jsonl")
            print(f"running {path.name} ...", file=sys.stderr, flush=True)
            workdir = Path(args.workdir) if args.workdir else Path(tmp)
            workdir.mkdir(parents=True, exist_ok=True)
            status, seconds = run_script(path, results, args.timeout, extra, args.show_output, workdir)
            statuses.append(dict(script=path.name, status=status, seconds=f"{seconds:.0f}"))
            got = []
            if results.exists():
                got = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
            if not got:
                rows.append(dict(script=path.name, measure="(no ratio reported)", ratio="-", target="-",
                                 verdict=status if status != "ok" else "-", note=""))
            for r in got:
                goal = "-" if r["target"] is None else (">= " if r["higher_is_better"] else "<= ") + f"{r['target']:g}"
                rows.append(dict(script=path.name, measure=r["measure"], ratio=f"{r['ratio']:.3g}", target=goal,
                                 verdict=_verdict(r) if status == "ok" else f"{_verdict(r)}; {status}",
                                 note=r.get("note", "")))
    print()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    print(f"load average (1, 5, 15 min): {load_start} at start, {load_average()} at end")
    print("ratios: dpgraph against a baseline timed in the same process and run (best of k repeats)")
    print()
    print(table(rows, ["script", "measure", "ratio", "target", "verdict", "note"]))
    print()
    print(table(statuses, ["script", "status", "seconds"]))
    return 0 if all(s["status"] == "ok" for s in statuses) else 1


if __name__ == "__main__":
    sys.exit(main())
