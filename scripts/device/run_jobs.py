"""Run the device check's jobs in parallel and summarise them.

    python3 scripts/device/run_jobs.py LOG_DIR PARALLEL < jobs.tsv

Each input line is `name<TAB>shell command`, run from the repository root with
its output in LOG_DIR/<name>.log, stopped after DEVICE_CHECK_TIMEOUT seconds
(default 420). Prints one line per finished job, the tail
of each failed job's log, and last "N passed, N failed" over the jobs."""

import concurrent.futures
import os
import subprocess
import sys
import time

TIMEOUT_S = int(os.environ.get("DEVICE_CHECK_TIMEOUT", "420"))  # seconds per job
TAIL_LINES = 40


def run(job, log_dir):
    """(name, exit status, seconds) of one job."""
    name, command = job
    started = time.monotonic()
    with open(os.path.join(log_dir, f"{name}.log"), "w") as log:
        try:
            code = subprocess.run(command, shell=True, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            log.write(f"\nrun_jobs: timed out after {TIMEOUT_S}s\n")
            code = 124
    return name, code, time.monotonic() - started


def main(log_dir, parallel):
    jobs = [tuple(line.rstrip("\n").split("\t", 1)) for line in sys.stdin if line.strip()]
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=int(parallel)) as pool:
        futures = [pool.submit(run, job, log_dir) for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            name, code, seconds = future.result()
            print(f"{'ok' if code == 0 else 'FAIL'} {name} ({seconds:.0f}s)", flush=True)
            if code != 0:
                failed.append(name)
    for name in failed:
        with open(os.path.join(log_dir, f"{name}.log")) as log:
            lines = log.readlines()
        print(f"---- {name}: last {TAIL_LINES} lines ----")
        print("".join(lines[-TAIL_LINES:]), end="")
    print(f"{len(jobs) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
