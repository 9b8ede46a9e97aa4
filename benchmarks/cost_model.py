"""Cost model of the three release paths from n = 10^3 to 10^8 nodes.

For each n and eps: vertex pairs N, expected edges of the full release (p' N),
bytes of the dense in-memory release (n^2 / 8), of the blockwise Zarr store
(about n^2 / 16: upper-triangle tiles only), of the full release written as an
edge list (4 bytes an edge), of a sparse release of a given output, and times
at the throughputs measured by bench_sparse.py and bench_blockwise.py (per
core).  Writes a CSV, the markdown table of docs/scaling.md and one PNG.

Usage::

    PYTHONPATH=$PWD python benchmarks/cost_model.py --sparse-csv bench_out/sparse/bench_sparse.csv \\
        --blockwise-csv bench_out/blockwise/bench_blockwise.csv --png docs/img/cost_model.png
"""

from __future__ import annotations

import argparse
import csv
import math
import os

import numpy as np

GiB = 2**30


def _read(path: str | None) -> dict | list | None:
    if not path or not os.path.exists(path):
        return None
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    return rows


def _fmt_bytes(b: float) -> str:
    for unit, k in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{b:.0f} B"


def _fmt_time(s: float) -> str:
    for unit, k in (("y", 365 * 86400), ("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if s >= k:
            return f"{s / k:.3g} {unit}"
    return f"{s * 1e3:.2g} ms"


def _store_bytes(n: int, tile_rows: int, tile_cols: int) -> float:
    """Bytes of the tiles a blockwise undirected release writes (upper-triangle tiles only).

    Zarr stores every chunk at full tile size, edge chunks included, and the
    diagonal tiles are written whole (their lower part is zeros).
    """
    nw = -(-n // 64)
    tw = tile_cols // 64
    bands = np.arange(0, n, tile_rows, dtype=np.float64)
    rows = np.minimum(n - bands, tile_rows)
    first = np.floor(bands / 64 / tw) * tw  # first word of the first written tile column
    words = np.ceil((nw - first) / tw) * tw  # Zarr stores edge chunks at full size
    return float(np.sum(np.where(rows == tile_rows, rows, tile_rows) * words * 8))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sparse-csv")
    ap.add_argument("--blockwise-csv")
    ap.add_argument("--ram-gib", type=float, default=24.0)
    ap.add_argument("--disk-gb", type=float, default=80.0)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--avg-degree", type=float, default=20.0,
                    help="true edges m = avg_degree * n / 2 (the O(m) part of a sparse release)")
    ap.add_argument("--sparse-output-per-node", type=float, default=50.0,
                    help="output edges of the sparse release per node (5e7 at n = 1e6)")
    ap.add_argument("--tile-rows", type=int, default=4096)
    ap.add_argument("--tile-cols", type=int, default=32768)
    ap.add_argument("--csv", default="bench_out/cost_model.csv")
    ap.add_argument("--png", default="docs/img/cost_model.png")
    args = ap.parse_args(argv)

    # measured throughputs (per core); defaults are this machine's numbers
    dense_rate, block_rate = 4.0e8, 2.0e8  # pairs / s / core
    sp_out_rate, sp_m_rate = 2.0e6, 3.0e6  # output edges / s, input edges / s
    sp_bytes_out, sp_bytes_m = 4.5, 35.0  # peak bytes per output edge and per input edge
    b = _read(args.blockwise_csv)
    if b:  # per CPU second: robust to other load on a shared machine
        block_rate = float(b[0].get("release_pairs_per_cpu_s") or b[0]["release_pairs_per_s_per_core"])
        dense_rate = float(b[0].get("baseline_pairs_per_cpu_s") or b[0]["baseline_pairs_per_s"])
    s = _read(args.sparse_csv)
    if s and len(s) >= 2:
        out = np.array([float(r["output_edges"]) for r in s])
        sec = np.array([float(r["seconds"]) for r in s])
        peak = np.array([float(r["peak_bytes"]) for r in s])
        m_in = float(s[0].get("true_edges", 1e7))
        slope_t, icpt_t = np.polyfit(out, sec, 1)
        slope_b, icpt_b = np.polyfit(out, peak, 1)
        sp_out_rate = 1.0 / slope_t
        sp_m_rate = m_in / max(icpt_t, 1e-3)
        sp_bytes_out, sp_bytes_m = slope_b, max(icpt_b, 0.0) / m_in
    print(f"throughputs per core: dense {dense_rate / 1e6:.0f} M pairs/s, blockwise "
          f"{block_rate / 1e6:.0f} M pairs/s, sparse {sp_out_rate / 1e6:.2f} M output edges/s "
          f"+ {sp_m_rate / 1e6:.2f} M input edges/s; sparse memory {sp_bytes_out:.1f} B/output edge "
          f"+ {sp_bytes_m:.0f} B/input edge")

    ram, disk = args.ram_gib * GiB, args.disk_gb * 1e9
    ns = [10**k for k in range(3, 9)]
    epss = [0.5, 1, 2, 4, 8]
    rows = []
    for n in ns:
        N = n * (n - 1) / 2
        m = args.avg_degree * n / 2
        dense_bytes = n * math.ceil(n / 64) * 8
        block_bytes = _store_bytes(n, args.tile_rows, args.tile_cols)
        t_dense = N / dense_rate
        t_block = N / (block_rate * args.cores)
        for eps in epss:
            p = math.exp(-eps) / (1 + math.exp(-eps))
            full_out = p * N + m * (1 - 2 * p)
            edge_list_bytes = 4 * full_out + 8 * (n + 1)
            target = min(args.sparse_output_per_node * n, p * N)
            keep = target / (p * N)
            sparse_bytes = sp_bytes_out * target + sp_bytes_m * m + 8 * (n + 1)
            t_sparse = target / sp_out_rate + m / sp_m_rate
            # std of a cut estimate relative to the full release: sqrt((1 - s p')/(s (1 - p')))
            std_factor = math.sqrt((1 - keep * p) / (keep * (1 - p)))
            rows.append({
                "n": n, "epsilon": eps, "pairs": N, "flip_probability": p,
                "full_release_edges": full_out, "dense_bytes": dense_bytes,
                "blockwise_store_bytes": block_bytes, "full_edge_list_bytes": edge_list_bytes,
                "sparse_output_edges": target, "sparse_keep": keep, "sparse_bytes": sparse_bytes,
                "sparse_cut_std_factor": std_factor,
                "dense_seconds_per_core": t_dense, "blockwise_seconds": t_block,
                "sparse_seconds": t_sparse,
                "dense_fits": dense_bytes <= ram, "blockwise_fits_disk": block_bytes <= disk,
                "sparse_fits": sparse_bytes <= ram,
            })
    os.makedirs(os.path.dirname(args.csv) or ".", exist_ok=True)
    with open(args.csv, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    print("\n| n | pairs N | eps | p' | full release edges | dense (RAM) | blockwise store | "
          "full release as edge list | dense time (1 core) | blockwise time "
          f"({args.cores} cores) | sparse output | keep | sparse memory | sparse time | "
          "cut std vs full |")
    print("|" + "---|" * 15)
    for r in rows:
        print(f"| {r['n']:.0e} | {r['pairs']:.2e} | {r['epsilon']:g} | {r['flip_probability']:.3f} "
              f"| {r['full_release_edges']:.2e} | {_fmt_bytes(r['dense_bytes'])}"
              f"{'' if r['dense_fits'] else ' ✗'} | {_fmt_bytes(r['blockwise_store_bytes'])}"
              f"{'' if r['blockwise_fits_disk'] else ' ✗'} | {_fmt_bytes(r['full_edge_list_bytes'])} "
              f"| {_fmt_time(r['dense_seconds_per_core'])} | {_fmt_time(r['blockwise_seconds'])} "
              f"| {r['sparse_output_edges']:.2e} | {r['sparse_keep']:.2e} "
              f"| {_fmt_bytes(r['sparse_bytes'])}{'' if r['sparse_fits'] else ' ✗'} "
              f"| {_fmt_time(r['sparse_seconds'])} | {r['sparse_cut_std_factor']:.3g}x |")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nn = np.logspace(3, 8, 60)
    NN = nn * (nn - 1) / 2
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
    ax1.loglog(nn, nn * np.ceil(nn / 64) * 8, label="dense in memory (n²/8)", lw=2)
    ax1.loglog(nn, [_store_bytes(int(x), args.tile_rows, args.tile_cols) for x in nn],
               label="blockwise Zarr store (≈n²/16 + diagonal tiles)", lw=2)
    for eps, ls in ((1, "--"), (8, ":")):
        p = math.exp(-eps) / (1 + math.exp(-eps))
        ax1.loglog(nn, 4 * p * NN, ls, label=f"full release as edge list, eps={eps}")
    m = args.avg_degree * nn / 2
    ax1.loglog(nn, sp_bytes_out * args.sparse_output_per_node * nn + sp_bytes_m * m,
               label=f"sparse release, {args.sparse_output_per_node:g} output edges/node", lw=2)
    ax1.axhline(ram, color="k", lw=0.8)
    ax1.text(1.2e3, ram * 1.4, f"RAM {args.ram_gib:g} GiB", fontsize=8)
    ax1.axhline(disk, color="gray", lw=0.8)
    ax1.text(1.2e3, disk * 1.4, f"disk {args.disk_gb:g} GB", fontsize=8, color="gray")
    ax1.set_xlabel("nodes n")
    ax1.set_ylabel("bytes")
    ax1.set_title("Memory / storage (independent of eps except edge lists)")
    ax1.legend(fontsize=7, loc="upper left")
    ax2.loglog(nn, NN / dense_rate, label=f"dense, 1 core ({dense_rate / 1e6:.0f} M pairs/s)", lw=2)
    ax2.loglog(nn, NN / (block_rate * args.cores),
               label=f"blockwise, {args.cores} cores ({block_rate / 1e6:.0f} M pairs/s/core)", lw=2)
    ax2.loglog(nn, NN / (block_rate * 100), "--", label="blockwise, 100 cores (extrapolated)")
    ax2.loglog(nn, args.sparse_output_per_node * nn / sp_out_rate + m / sp_m_rate,
               label="sparse, 1 core", lw=2)
    for sec, lab in ((3600, "1 h"), (86400, "1 day")):
        ax2.axhline(sec, color="gray", lw=0.6)
        ax2.text(3e7, sec * 1.3, lab, fontsize=8, color="gray")
    ax2.set_xlabel("nodes n")
    ax2.set_ylabel("seconds")
    ax2.set_title("Release time at the measured throughput")
    ax2.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    os.makedirs(os.path.dirname(args.png) or ".", exist_ok=True)
    fig.savefig(args.png, dpi=120)
    print(f"\nwrote {args.csv} and {args.png}")


if __name__ == "__main__":
    main()
