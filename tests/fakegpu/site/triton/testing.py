"""triton.testing of the fake GPU: do_bench and do_bench_cudagraph over
torch.cuda's clock. FAKE_TRITON_LOG, when set, names a file where each call
is noted (tests/python/test_flaggems_compat.py checks which calls reach
Triton's own timing)."""

import json
import os
import statistics

import torch


def _note(name, **kwargs):
    path = os.environ.get("FAKE_TRITON_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(dict(kwargs, name=name)) + "\n")


def _mean_ms(fn, calls=4):
    fn()
    start = torch.cuda.now
    for _ in range(calls):
        fn()
    return (torch.cuda.now - start) / calls


def _summarize_statistics(times, quantiles, return_mode):
    ordered = sorted(times)
    if quantiles is not None:
        ret = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
        return ret[0] if len(ret) == 1 else ret
    if return_mode == "all":
        return list(times)
    return {"mean": statistics.mean, "median": statistics.median, "min": min, "max": max}[return_mode](times)


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    _note("do_bench", warmup=warmup, rep=rep)
    return _summarize_statistics([_mean_ms(fn)] * 3, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    _note("do_bench_cudagraph", rep=rep)
    return _summarize_statistics([_mean_ms(fn)] * 3, quantiles, return_mode)
