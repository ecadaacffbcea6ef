#!/usr/bin/env python3
"""Merge tuning databases written by `fatcl tune` into matmul/tuning/shipped.json.

Usage: tools/ship-tuning.py OUT.json [--keep N] DB.json[:DEVICES.json] ...

Each DB's entries are copied (outcomes are not: they belong to one machine).
An entry must say what its device reported ("measured_on", which fatcl tune
writes): the loader carries it to devices never measured by their
similarity to it. For a DB written before fatcl kept that, DEVICES.json (what
`fatcl devices --json` printed on the machine measured) supplies it: the
device of the entry's platform whose name matches the entry's device (a
name, or a pattern an older DB used) gives its name and profile. An entry
that is the only one for its family, form, platform, device, driver and
size class is copied as measured.

Entries that meet under one key (the same runtime measured again on one
machine, or with several vector ISAs that it reports alike) become one entry whose ranking holds
on all of them: each (variant, tier) is scored in each database by its
GFLOP/s over that database's fastest for the class (0 where it was not
measured), and variants are ranked by their worst score. A variant's tiers
keep the loader's order (spirv, ptx, source) unless a later tier's worst
score is more than 10 % higher: precompiled code is what a product ships
for (it runs where the source is left out and does not depend on the
driver's OpenCL C compiler), so the order changes only for a clear loss,
not for the few per cent two tunes of one machine differ by. The merged
entry records each
variant's lowest GFLOP/s and the latest measurement date.

Entries are sorted by platform, device, driver and problem, so the output is
deterministic.

--keep N (before the databases it applies to) keeps the N fastest (variant,
tier) pairs of each of their entries: a grid of small sizes measured with
every family (`fatcl tune --families all`) holds hundreds of entries, and
the variants far behind at a size do not lead where its model carries it
nearby. Keep enough for the model to choose among tile shapes: with 4, the
Zen 4's blocked entries held only the 32 x 64 tile's points and carried to
narrower products at 0.85 of the fastest (geomean, Intel's runtime, 24
held-out shapes), with 12 at 0.94 (2026-12-05; the Zen 3's grid was
shipped with 4).
"""
import fnmatch
import json
import math
import sys

TIER_ORDER = ["spirv", "ptx", "source"]
TIER_MARGIN = 1.10


def size_class(problem):
    return tuple(round(math.log2(s)) for s in problem)


def merge(entries):
    """One entry ranked by the worst score over the measurements in `entries`."""
    scores = {}   # (variant, tier) -> worst score
    lowest = {}   # (variant, tier) -> lowest GFLOP/s
    sha = {}
    keys = set()
    for e in entries:
        keys.update((t["variant"], t["tier"]) for t in e["ranking"])
    for e in entries:
        fastest = max(t["gflops"] for t in e["ranking"])
        if fastest <= 0:
            sys.exit(f"an entry for {e['device']} {e['problem']} has no positive GFLOP/s")
        measured = {(t["variant"], t["tier"]): t for t in e["ranking"]}
        for k in keys:
            t = measured.get(k)
            score = t["gflops"] / fastest if t else 0.0
            scores[k] = min(scores.get(k, score), score)
            if t:
                lowest[k] = min(lowest.get(k, t["gflops"]), t["gflops"])
                sha.setdefault(k, t["sha256"])
                if sha[k] != t["sha256"]:
                    sys.exit(f"{k[0]} ({k[1]}): measured with two different builds; tune again")
    variants = {}
    for (v, tier), s in scores.items():
        variants.setdefault(v, {})[tier] = s

    def tier_order(tiers):
        # The loader's order, but a tier clearly faster than the one before goes first.
        order = sorted(tiers, key=TIER_ORDER.index)
        out = []
        while order:
            best = order[0]
            for t in order[1:]:
                if tiers[t] > tiers[best] * TIER_MARGIN:
                    best = t
            out.append(best)
            order.remove(best)
        return out

    ranked = sorted(variants, key=lambda v: (-max(variants[v].values()), v))
    ranking = []
    for v in ranked:
        for tier in tier_order(variants[v]):
            ranking.append({"variant": v, "sha256": sha[(v, tier)], "tier": tier,
                            "gflops": lowest.get((v, tier), 0.0)})
    merged = dict(entries[0])
    merged["ranking"] = ranking
    merged["measured"] = max(e["measured"] for e in entries)
    return merged


PROFILE_FIELDS = ["gpu", "vendor", "isa", "compute_units", "max_clock_mhz",
                  "local_mem_bytes", "native_float_width"]


def describe(entry, devices_path):
    """Gives an entry without "measured_on" its device's name and profile."""
    if "measured_on" in entry:
        return
    if not devices_path:
        sys.exit(f"{entry['family']} on {entry['device']} {entry['problem']}: the entry does not "
                 "say what its device reported; name the machine's `fatcl devices --json` "
                 "output after the database (DB.json:DEVICES.json)")
    doc = json.load(open(devices_path))
    if doc.get("format") == "fatcl-devices":
        devices = [d for d in doc["devices"] if d["platform"] == entry["platform"]]
    else:  # what fatcl devices --json printed before its descriptions had a format
        devices = [d for p in doc["platforms"] if p["platform"] == entry["platform"]
                   for d in p["devices"]]
    found = [d for d in devices if fnmatch.fnmatchcase(d["name"], entry["device"])]
    if len(found) != 1:
        sys.exit(f"{devices_path}: {len(found)} devices of {entry['platform']} match "
                 f"{entry['device']}, not one")
    d = found[0]
    if d["driver_version"] != entry["driver"]:
        sys.exit(f"{devices_path}: {d['name']} has driver {d['driver_version']}, the entry "
                 f"{entry['driver']}")
    entry["device"] = d["name"]
    gpu = "gpu" in d["type"] if isinstance(d["type"], list) else d["type"] == "gpu"
    entry["measured_on"] = {"gpu": gpu,
                            **{k: d[k] for k in PROFILE_FIELDS if k != "gpu"}}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    groups = {}
    keep = 0
    args = iter(sys.argv[2:])
    for arg in args:
        if arg == "--keep":
            keep = int(next(args))
            continue
        path, _, devices = arg.partition(":")
        store = json.load(open(path))
        if store.get("format") != "fatcl-store" or store.get("version") != 1:
            sys.exit(f"{path}: not a fatcl store of format version 1")
        for e in store.get("tuning", []):
            describe(e, devices)
            if keep:
                e["ranking"] = sorted(e["ranking"], key=lambda t: -t["gflops"])[:keep]
            # One name can stand for two machines (Intel's runtime calls every EPYC
            # "AMD EPYC"): what the device reported keeps their entries apart.
            hardware = tuple(e["measured_on"].get(k) for k in PROFILE_FIELDS
                             if k != "max_clock_mhz")
            key = (e["family"], e.get("form", ""), e["platform"], e["device"], e["driver"],
                   hardware, size_class(e["problem"]))
            groups.setdefault(key, []).append(e)
    entries = [g[0] if len(g) == 1 else merge(g) for g in groups.values()]
    entries.sort(key=lambda e: (e["platform"], e["device"], e["driver"], e.get("form", ""),
                                e["problem"], json.dumps(e["measured_on"], sort_keys=True)))
    doc = {"format": "fatcl-store", "version": 1,
           "comment": "Generated by tools/ship-tuning.py from fatcl tune databases; do not edit.",
           "tuning": entries}
    # One entry a line, without spaces: the file is embedded in every product
    # that links fatcl::matmul, and a device reads only the lines of its
    # platform (shipped_tuning_for: parsing all 1689 entries took 100 ms);
    # a diff still shows which entries changed.
    with open(sys.argv[1], "w") as out:
        out.write('{"comment":%s,"format":"fatcl-store","version":1,"tuning":[\n'
                  % json.dumps(doc["comment"]))
        out.write(",\n".join(json.dumps(e, sort_keys=True, separators=(",", ":"))
                             for e in entries))
        out.write("\n]}\n")


main()
