#!/usr/bin/env python3
"""Write a recorded-figures file from per-profile figures files and an `about` text.

    compose.py --about ABOUT.txt --out tests/data/reference/X.json figures/P1.json figures/P2.json ...

Each input is what ``cortexm_oracle.py figures`` writes ({"models": {model: {profile:
entry}}}); entries of ``*_lut_metadata*`` models are marked as cortexm_oracle.merge does.
With ``--profile OLD=NEW`` a profile's entries are recorded under another build name.
The output's ``about`` is the text of ABOUT.txt followed by the builds and model counts.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cortexm_oracle  # noqa: E402


def compose(inputs, about: str, renames=None) -> dict:
    renames = renames or {}
    models: dict = {}
    counts: dict = {}
    for path in inputs:
        for name, per in json.load(open(path)).get("models", {}).items():
            for profile, entry in per.items():
                build = renames.get(profile, profile)
                models.setdefault(name, {})[build] = cortexm_oracle._mark_compression(name, entry)
                counts[build] = counts.get(build, 0) + 1
    builds = ", ".join(f"{b} ({n} models)" for b, n in sorted(counts.items()))
    return {"about": about.strip() + f" Builds in this file: {builds}.", "models": models}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--about", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--profile", action="append", default=[], help="OLD=NEW build name")
    a = ap.parse_args(argv)
    renames = dict(r.split("=", 1) for r in a.profile)
    cortexm_oracle._write_json(a.out, compose(a.inputs, open(a.about).read(), renames))
    return 0


if __name__ == "__main__":
    sys.exit(main())
