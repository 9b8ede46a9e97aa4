"""The peers benchmark: metric helpers and the --quick run end to end."""

from __future__ import annotations

import argparse
import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from dpgraph.experiments import peers

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def test_nmi_ari_known_values():
    a = [0, 0, 0, 1, 1, 1]
    assert peers.nmi(a, [5, 5, 5, 7, 7, 7]) == pytest.approx(1.0)
    assert peers.ari(a, [5, 5, 5, 7, 7, 7]) == pytest.approx(1.0)
    # by hand: I = (2/3) ln 2, H(a) = ln 2, H(b) = ln 3; ARI = (2 - 6*3/15) / (4.5 - 6*3/15)
    b = [0, 0, 1, 1, 2, 2]
    assert peers.nmi(a, b) == pytest.approx((2 / 3) * np.log(2) / ((np.log(2) + np.log(3)) / 2))
    assert peers.ari(a, b) == pytest.approx((2 - 1.2) / (4.5 - 1.2))


def test_degree_kl_and_sequence():
    deg = np.array([1, 1, 2, 3])
    h = np.bincount(deg, minlength=4) / 4
    assert peers.degree_kl(deg, h) < 5e-3
    assert peers.degree_kl(deg, np.array([1.0, 0, 0, 0])) > 2.0
    seq = peers._sequence_from_hist(h, 4)
    assert sorted(seq.tolist()) == [1, 1, 2, 3]


def test_published_figures_parse():
    pub = peers.published_figures()
    if not pub:
        pytest.skip("shared/reference/sok-facebook not present")
    assert pub["transitivity_err"][1.0]["PrivGraph"] == pytest.approx(0.23542728832718754)
    assert set(pub) == set(peers.SOK_FILES)


@pytest.mark.slow
def test_quick_end_to_end(tmp_path, monkeypatch):
    if not os.environ.get("DPGRAPH_DATA_DIR") and DATA.is_dir():
        monkeypatch.setenv("DPGRAPH_DATA_DIR", str(DATA))
    from dpgraph import datasets

    if not os.environ.get("DPGRAPH_DATA_DIR") and not datasets.available("facebook"):
        pytest.skip("ego-Facebook not available offline (and DPGRAPH_DATA_DIR unset)")
    p = argparse.ArgumentParser(prog="dpgraph experiment")
    peers.register(p.add_subparsers(dest="experiment"))
    args = p.parse_args(["peers", "--out", str(tmp_path), "--quick", "--no-progress"])
    assert args.func(args) == 0
    name = "facebook-quick"
    for suffix in ("_runs.csv", ".csv", ".png", "_degrees.png", ".json"):
        assert (tmp_path / f"peers_{name}{suffix}").stat().st_size > 0
    with open(tmp_path / f"peers_{name}.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["method"] for r in rows} == set(peers.METHODS)
    meta = json.loads((tmp_path / f"peers_{name}.json").read_text())
    assert meta["quick"] and meta["nodes"] == 1000
    est = next(r for r in rows if r["method"] == "dpgraph" and float(r["epsilon"]) == 4.0)
    naive = next(r for r in rows if r["method"] == "naive" and float(r["epsilon"]) == 4.0)
    # the estimators beat the raw release on transitivity and density
    assert float(est["transitivity_err"]) < float(naive["transitivity_err"])
    assert float(est["density_err"]) < float(naive["density_err"])
