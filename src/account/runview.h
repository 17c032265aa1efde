/* runview.h: a run as its readers see it, opened and verified once.
 *
 * A run is read as a sealed run root, or as a derived run (a folder that
 * reaccount wrote, holding derived.json) together with the run root it was
 * derived from. cb_run_view_open finds which, reads the campaign receipt
 * and the manifest, and checks the seal in one pass over the sealed bytes
 * that also counts the manifest's topology op in every cell's TTGIR, so
 * that report, diff, compare and reaccount read every sealed byte once
 * between them and no reader opens a run root by hand. */
#ifndef CB_RUNVIEW_H
#define CB_RUNVIEW_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"
#include "campaign/manifest.h"
#include "ir/ttgir.h"
#include "receipt.h"
#include "seal/seal.h"

/* What the one check of the seal found. */
enum cb_seal_status {
	CB_SEAL_HOLDS,       /* every sealed file is as sealed */
	CB_SEAL_BROKEN,      /* verified, and something differs (rep says what) */
	CB_SEAL_UNCHECKED    /* cannot be checked: not sealed, malformed, unreadable (seal_err says why) */
};

/* What cb_run_view_open accepts and does. */
enum {
	CB_RUN_VIEW_ROOT_ONLY = 1,   /* a run root only: a derived run is refused as not one */
	CB_RUN_VIEW_COUNT = 2        /* count the manifest's topology op while verifying */
};

/* A run opened; zeroed is closed. Every pointer is owned by the view and
 * lives until cb_run_view_release; dir and run are the caller's strings and
 * must outlive it. */
struct cb_run_view {
	const char *root;                /* the run root the files are read from */
	const char *derived_dir;         /* dir for a derived run, NULL for a sealed one */
	json_t *derived;                 /* derived.json, checked for the fields its readers use */
	long long floor, sealed_floor;   /* the floor shown and the sealed one (equal for a sealed run) */
	int by_time;                     /* a derived run scoped by time, at share_ppm */
	long long share_ppm;
	struct cb_campaign_summary cs;   /* valid when have_cs */
	struct cb_manifest m;            /* valid when have_m */
	int have_cs, have_m;
	int op_refused;                  /* the manifest's op is not one caliber counts (load_err says so) */
	struct cb_err load_err;          /* why the receipt or manifest could not be read, or the op refused */
	enum cb_seal_status seal;
	struct cb_verify_report rep;     /* the verify (HOLDS, BROKEN) */
	struct cb_err seal_err;          /* the seal as an error ("seal does not hold: ..."), unless HOLDS */
	int counted;                     /* counts is valid: the seal holds and the op was counted */
	struct cb_ttgir_counts counts;   /* the op in every cell's .ttgir, read while verifying */
};

/* Open the run at dir: a run root, or (unless CB_RUN_VIEW_ROOT_ONLY) a
 * derived run whose run root is run when given, else its run.root as seen
 * from the current directory. Reads the campaign receipt and manifest (an
 * error there is kept in load_err, to be reported after the seal, as the
 * seal says first whether those bytes can be trusted), then verifies the
 * seal once, counting the op with CB_RUN_VIEW_COUNT. -1 with err filled
 * only when dir is not a run at all or memory runs out; the seal's status
 * is in v->seal either way. v is the caller's to release. */
int cb_run_view_open(struct cb_run_view *v, const char *dir, const char *run, int flags, struct cb_err *err);

/* What a reader that trusts only a sealed run requires: the seal holds
 * (else seal_err), the receipt and manifest were read (else load_err, or
 * with need_m 0 the receipt alone), and the manifest is the one sealed. */
int cb_run_view_require(const struct cb_run_view *v, int need_m, struct cb_err *err);

/* Whether a derived run comes from the campaign of its run root, task by
 * task (0 for a sealed run). */
int cb_run_view_check_derived(const struct cb_run_view *v, struct cb_err *err);

void cb_run_view_release(struct cb_run_view *v);

#endif
