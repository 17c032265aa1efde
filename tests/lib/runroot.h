/* runroot.h: build run roots from parts, for tests: cells with IR, launch
 * index, timings and outcomes, then finish tasks and the campaign through
 * the same library functions `caliber run` uses, and seal. Tests of
 * reaccount, verify, report and the runner use this rather than
 * hand-writing receipts.
 *
 * A run is described by a JSON spec (see docs/formats.md, "Test run specs"):
 *   {"manifest": "<path, relative to the spec>", "inventory": "<csv, default
 *    inventory_main.csv beside the spec>", "selection": "canary",
 *    "tasks": [{"id": "...", "op": "...", "wall_ms": 1000, "cells": {"<cell name>": {
 *        "correctness": {"outcome": "passed", "wall_ms": 200},
 *        "a": {"outcome": "passed",
 *              "ir": [{"variant": "V", "kernel": "k", "launches": 9, "tuning_launches": 0,
 *                      "converts": 3} | {..., "ttgir": "<file, relative to the spec>"}
 *                     | {"variant": "V", "no_ir": true} | {"variant": "V", "no_row": true, "converts": 1}],
 *              "timing": [{"row": "r", "ns": 20000, "n": 7, "timer": "graph"}
 *                         | {"row": "r", "samples": [..], "timer": "direct"}],
 *              "kernels": "<kernels.jsonl, relative to the spec>"
 *                         | [{"row": "r", "calls": 10, "error": "...",
 *                             "kernels": [{"kernel": "k", "variant": "V" | null, "ns": 900}]}],
 *              "resources": "<resources.tsv, relative to the spec>"
 *                           | [{"variant": "V", "kernel": "k", "n_regs": 96, "n_spills": 0,
 *                                "shared": 0, "num_stages": 3, "num_warps": 4}],
 *              "compile": {"listened": true, "compiles": 4, "compile_us": 12100000,
 *                          "cache_hits": 0, "cache_hit_us": 0}},
 *        "b": {...}}}}]}
 * Phase objects may be a bare outcome string ("timeout"). "wall_ms" of a
 * task or a phase is written as the wall_ns of its task.json or cell.json
 * (a time the run took, for tests of planning by a history run).
 * "compile" of a phase is written as its compile.json as given (ir_meta's
 * record of the compiles, for tests of the report's wall-time section; a
 * malformed one for its refusals). */
#ifndef RUNROOT_H
#define RUNROOT_H

#include "caliber.h"

/* Build the run described by spec_path into root (which must not exist)
 * and seal it. */
int rr_build(const char *spec_path, const char *root, struct cb_err *err);

/* Build without finishing or sealing: only cell folders and receipts, as a
 * runner interrupted before any task receipt would leave them. */
int rr_build_cells(const char *spec_path, const char *root, struct cb_err *err);

#endif
