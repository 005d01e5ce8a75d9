"""results.json + results.csv: one row per cell and repetition."""

import csv
import json
import os

from .listrx import BenchError

PARAM_COLUMNS = ("cell", "rep", "profile", "pipeline", "pipeline_arg", "xdp", "footprint",
                 "footprint_kb", "engine", "burst", "stats_level", "counters", "status")
TRAILING_COLUMNS = ("command", "perf_command", "cachegrind_command", "pcm_command")


def columns(rows):
    seen = []
    keys = set()
    for row in rows:
        for k in row:
            if k not in keys:
                keys.add(k)
                seen.append(k)
    head = [c for c in PARAM_COLUMNS if c in keys]
    tail = [c for c in TRAILING_COLUMNS if c in keys]
    middle = sorted(k for k in seen if k not in head and k not in tail)
    return head + middle + tail


def write(out_dir, meta, rows):
    """Writes results.json (meta + rows) and results.csv (every column of
    every row; a measure a row lacks is an empty cell, an unavailable one
    says "unavailable: <reason>")."""
    os.makedirs(out_dir, exist_ok=True)
    doc = dict(meta)
    doc["rows"] = rows
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False, default=str)
        f.write("\n")
    cols = columns(rows)
    with open(os.path.join(out_dir, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in cols})
    return os.path.join(out_dir, "results.json"), os.path.join(out_dir, "results.csv")


def load(path):
    """A results directory or results.json -> (meta, rows); BenchError
    naming the file when it is not a sweep's results."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise BenchError("%s: %s (want a sweep's output directory or its results.json)"
                         % (path, e.strerror or e))
    except ValueError as e:
        raise BenchError("%s: not JSON (%s)" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("rows", []), list):
        raise BenchError("%s: not a sweep's results (no rows)" % path)
    rows = doc.pop("rows", [])
    return doc, rows
