"""Test worker for A/A campaigns whose worker processes carry an offset.

    offsets.py DATA SEED PROC_PPM REP_PPM

On the H200 a worker process fixes, for its whole life, where its tensors land
in device memory, and with it an offset of a few tenths of a percent on every
row it times (docs/formats.md, "Statistics"): the sessions of one process
share it, a fresh process draws another. This worker stands in for such a
device on a CPU. Every cell is identical code (an A/A campaign): all three
roles write the baseline's variants of DATA/cells.json (ir/, ir/index.tsv, as
ir_meta does) and the baseline's timings, and pass correctness. Each row's
samples are

    ns * (1 + row) * (1 + offset) * (1 + e_k),  k = 1 .. repeats

where offset ~ N(0, PROC_PPM) is drawn once per process and task (a process
lands each task's tensors once and keeps them there) and e_k ~ N(0, REP_PPM)
per sample. Nothing comes from the machine's speed or clock: the offset is
seeded by SEED, the id of the first request this process served (which names
the process: the runner's request ids are deterministic) and the task, the
samples by SEED and the request's own id. So under the default worker mode,
where every session is a process of its own, each session samples a new
offset, while under --workers persistent a cell's sessions share one.

Requests are served as cellplay.serve serves them (from the cell's private
working directory, CALIBER_WORK_DIR, as the real session does), outputs go to
the request's cell folder (CALIBER_CELL_DIR) where the real plugins write
them, and the autotune record is written and replayed as autotune_record
does. worker.log gets one line per request naming the process's offset."""

import json
import random
import sys

from cellplay import autotune, begin, serve, write_cell


def main():
    data_dir, seed, proc_ppm, rep_ppm = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    with open(f"{data_dir}/cells.json") as f:
        data = json.load(f)
    first = []       # the id of the first request this process served: its name
    offsets = {}     # task -> this process's offset on it

    def answer(request):
        env, task, role, phase, cell_dir, spec = begin(request, data)
        if not first:
            first.append(request.get("id", ""))
        if task not in offsets:
            offsets[task] = random.Random(f"{seed}/{first[0]}/{task}").gauss(0.0, proc_ppm * 1e-6)
        offset = offsets[task]
        noise = random.Random(f"{seed}/{request.get('id', '')}/samples")
        print(f"offsets: {task} {role} {phase} session {env.get('CALIBER_SESSION', '1')}: process of "
              f"{first[0]}, offset {offset * 1e6:+.0f} ppm", flush=True)
        if not autotune(env, task):
            return 4
        if phase == "correctness":
            return 0
        same = {"baseline": spec["baseline"], "candidate": spec["baseline"],
                "ns": {r: spec["ns"]["baseline"] for r in ("baseline", "control", "candidate")}}

        def sampler(ns, n, row, session):
            base = ns * (1 + row) * (1 + offset)
            return [max(1, int(round(base * (1 + noise.gauss(0.0, rep_ppm * 1e-6))))) for _ in range(n)]

        timer = json.loads(env["CALIBER_TIMER"])
        write_cell(cell_dir, same, role, phase, timer["repeats"], data["rows"], int(env.get("CALIBER_SESSION", "1")),
                   sampler)
        return 0

    serve(answer)
    return 0


sys.exit(main())
