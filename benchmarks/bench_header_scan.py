"""The JSON scan before a header is parsed: its time against the parse, and what each costs in memory.

``dpgraph._safejson.loads`` scans a header (or ledger) for its depth and for
what parsing would build before it parses it (see :func:`dpgraph._safejson.shape`).
Each row times, interleaved in one process, the scan alone and ``json.loads``
(the parse dpgraph then runs) on headers of node labels such as dpgraph
writes (ints, strings, pairs) and on a crafted one (empty objects, refused
unparsed), and gives the peak traced memory of each relative to the text:

* ``scan / parse``: the time the scan adds to a load, as a fraction of the
  parse it guards (target <= 1.5: the check costs no more than about the
  parse itself);
* ``scan peak`` stays a fixed allocation (a few 64 KiB blocks), and a
  crafted header is refused at about its own size instead of 25-48 times.

Run:  python -m benchmarks --only header_scan
"""

from __future__ import annotations

import json
import tracemalloc

from _common import load_average, machine, quick, report, table, timeit_interleaved

from dpgraph import _safejson


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    except ValueError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def main() -> None:
    n = 100_000 if quick() else 1_000_000
    texts = {
        "int labels": json.dumps({"nodes": list(range(10**9, 10**9 + n))}).encode(),
        "str labels": json.dumps({"nodes": [f"user-{i}" for i in range(n)]}).encode(),
        "pair labels": json.dumps({"nodes": [[i, i * 7 % 1000] for i in range(n)]}).encode(),
        # 6 MiB: beyond the free allowance in both modes, so refused unparsed
        "empty objects (crafted)": b'{"nodes":[' + b",".join([b"{}"] * (2 << 20)) + b"]}",
    }
    print(machine())
    print(f"load average before: {load_average()}")
    rows, ratios = [], []
    for name, raw in texts.items():
        best = timeit_interleaved({"scan": lambda r=raw: _safejson.shape(r),
                                   "parse": lambda r=raw: json.loads(r)}, repeat=3)
        crafted = "crafted" in name
        try:
            _safejson.loads(raw, "header")
            refused = "no"
        except ValueError:
            refused = "yes"
        rows.append({
            "header": name, "MiB": f"{len(raw) / 2**20:.1f}",
            "scan s": f"{best['scan']:.3f}", "parse s": f"{best['parse']:.3f}",
            "scan / parse": f"{best['scan'] / best['parse']:.2f}",
            "scan peak / size": f"{_peak(lambda r=raw: _safejson.shape(r)) / len(raw):.2f}",
            "loads peak / size": f"{_peak(lambda r=raw: _safejson.loads(r, 'h')) / len(raw):.1f}",
            "json.loads peak / size": f"{_peak(lambda r=raw: json.loads(r)) / len(raw):.1f}",
            "refused unparsed": refused,
        })
        if not crafted:
            ratios.append(best["scan"] / best["parse"])
    print(table(rows, list(rows[0])))
    print(f"load average after: {load_average()}")
    report("header scan time / json.loads time (worst of the written shapes)", max(ratios),
           target=1.5, higher_is_better=False, baseline="json.loads of the same text")


if __name__ == "__main__":
    main()
