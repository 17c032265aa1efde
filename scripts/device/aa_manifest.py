#!/usr/bin/env python3
"""scripts/device/aa_manifest.py PINNED OUT [GAIN [MAX_SESSIONS]]: the A/A
campaign of a pinned demo manifest (scripts/device/pin.sh): the candidate
cell gets the baseline's environment, so that all three cells compile the
same code and every interval of the campaign compares identical cells;
thresholds gain = GAIN (default 0.01) and regression = -GAIN; with
MAX_SESSIONS, timer.max_sessions (rounds still undecided after
timer.sessions get more sessions, up to that many); every workload canary,
so that one `caliber run` of the canary selection covers all of them.
The campaign id gains "-aa"."""
import json
import sys


def main():
    pinned, out = sys.argv[1], sys.argv[2]
    gain = float(sys.argv[3]) if len(sys.argv) > 3 else 0.01
    m = json.load(open(pinned))
    m["campaign"] += "-aa"
    m["description"] = ("A/A: " + m.get("description", "")).strip()
    base = next(c for c in m["cells"] if c["role"] == "baseline")
    for c in m["cells"]:
        if c["role"] == "candidate":
            c["env"] = dict(base["env"])
    m["thresholds"]["gain"] = gain
    m["thresholds"]["regression"] = -gain
    if len(sys.argv) > 4:
        m["timer"]["max_sessions"] = int(sys.argv[4])
    m["workloads"] = [dict(w, canary=True) for w in m["workloads"]]
    with open(out, "w") as f:
        json.dump(m, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
