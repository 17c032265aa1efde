"""Clocks while a row is timed, and pacing before it (docs/design.md section 6).

The H200 lowers its SM clock within a fraction of a second of dense work
(power cap) and comes back within about a second of rest. So the timing
plugin rests the device before each row until no power or thermal reason
slows it and its power draw is back under half the limit (bounded, the wait
recorded), samples the SM clock from a thread while the row runs, and calls
a row throttled when a busy sample fell below throttle_floor of the maximum.
Without NVML every figure is None and no row is throttled."""

import threading
import time

from . import _nvml

PACE_POLL_S = 0.01        # between two looks at the device while resting
PACE_MAX_S = 3.0          # the longest rest before one row
RETRY_REST_S = 0.5        # the least rest before a throttled row is measured again
SAMPLE_EVERY_S = 0.005    # between two clock samples while a row runs
COOL_POWER_SHARE = 0.5    # power draw, as a share of the limit, that counts as rested


def pace(h, least_s=0.0):
    """Rest until the device is cool (no throttle reason, power under
    COOL_POWER_SHARE of the limit), at least least_s and at most
    PACE_MAX_S. Returns {"ms": waited, "cool": reached}."""
    t0 = time.monotonic()
    cool = False
    while True:
        waited = time.monotonic() - t0
        r, share = _nvml.reasons(h), _nvml.power_share(h)
        cool = (r is None or not r & _nvml.THROTTLE_MASK) and (share is None or share <= COOL_POWER_SHARE)
        if (cool and waited >= least_s) or waited >= PACE_MAX_S:
            break
        time.sleep(PACE_POLL_S)
    return {"cool": cool, "ms": int(round((time.monotonic() - t0) * 1000))}


class Sampler:
    """Samples the SM clock and the clock-event reasons from a thread
    between start() and stop(); stop() returns what was seen."""

    def __init__(self, h):
        self.h = h
        self.samples = []
        self.done = threading.Event()
        self.thread = None

    def _loop(self):
        while True:
            self.samples.append(_nvml.sample(self.h))
            if self.done.wait(SAMPLE_EVERY_S):
                break

    def start(self):
        if self.h is not None:
            self.thread = threading.Thread(target=self._loop, name="caliber-clocks", daemon=True)
            self.thread.start()
        return self

    def stop(self):
        """{"samples", "sm_min_mhz", "sm_max_mhz", "reasons"} over the samples
        taken while the device was busy (GpuIdle not set), or None without
        NVML."""
        if self.thread is None:
            return None
        self.done.set()
        self.thread.join()
        self.samples.append(_nvml.sample(self.h))
        busy = [mhz for mhz, r in self.samples if mhz is not None and not (r or 0) & _nvml.GPU_IDLE]
        seen = 0
        for _, r in self.samples:
            seen |= r or 0
        return {"reasons": seen, "samples": len(busy), "sm_max_mhz": max(busy) if busy else None,
                "sm_min_mhz": min(busy) if busy else None}


def throttled(during, floor_mhz):
    """Whether a row whose clocks were `during` ran throttled: a busy sample
    below floor_mhz. Unknown clocks are not throttled."""
    return bool(during and floor_mhz and during["sm_min_mhz"] is not None and during["sm_min_mhz"] < floor_mhz)
