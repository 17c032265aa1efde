/* devices.c: run --devices: one `caliber run --shard K/N --device D` child
 * per device, started with posix_spawn, their output pumped through one
 * poll() loop and shown line by line under the shard's name, then merged.
 * The children do the work (and keep every rule of a run: preflights,
 * receipts, resume); this file only deals them out, watches them and
 * joins what they sealed. */
#include "devices.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "account/classify.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "merge.h"
#include "campaign/plan.h"
#include "base/proc.h"
#include "account/receipt.h"
#include "seal/seal.h"
#include "campaign/shard.h"
#include "worker.h"

extern char **environ;

/* The signal (SIGINT, SIGTERM, SIGHUP) that asked this caliber to stop,
 * 0 while none has: each shard runs in a process group of its own, so a
 * Ctrl-C at the terminal reaches only this process, which passes it on. */
static volatile sig_atomic_t stop_signal;

/* The handler: note the signal; pump() passes it to the shards. */
static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* One shard's child and what it printed so far. */
struct shard_proc {
	struct cb_shard s;
	char name[32];               /* "K/N" */
	const char *device;          /* points into the parsed list */
	char *root;                  /* <output>.shards/<K> */
	int resume;                  /* the root exists: the child resumes it */
	struct cb_child child;
	struct cb_buf pending[2];    /* stdout, stderr: the line not finished yet */
	int status;                  /* the child's exit status once done, -1 before */
};

/* Split list at commas into devs (pointers into *copy, which the caller
 * frees): each a visibility value of letters, digits and ._:-, given once. */
static int parse_list(const char *list, char **copy, const char ***devs, size_t *n, struct cb_err *err)
{
	char *p, *save = NULL;
	size_t i;

	*n = 0;
	*devs = NULL;
	*copy = strdup(list);
	*devs = calloc(strlen(list) / 2 + 2, sizeof(**devs));
	if (!*copy || !*devs)
		return cb_fail(err, "out of memory");
	if (!*list || list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		return cb_fail(err, "--devices: '%s' is not a comma-separated list of devices", list);
	for (p = strtok_r(*copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") != strlen(p))
			return cb_fail(err, "--devices: '%s' is not a device (letters, digits and ._:- only)", p);
		/* "-1" makes no device visible to CUDA, and a leading '-' reads
		 * as an option on the shard's command line. */
		if (strspn(p, "._:-"))
			return cb_fail(err, "--devices: '%s' is not a device (it starts with a letter or digit)", p);
		for (i = 0; i < *n; i++)
			if (strcmp((*devs)[i], p) == 0)
				return cb_fail(err, "--devices: device '%s' is listed twice", p);
		(*devs)[(*n)++] = p;
	}
	if (*n > CB_SHARD_MAX)
		return cb_fail(err, "--devices: more than %d devices", CB_SHARD_MAX);
	return 0;
}

/* Room for the longest command line child_argv makes, and its NULL. */
#define CHILD_ARGS 44

/* The command line of shard sp's child: the run as given, less --devices
 * and --fail-on (this process applies it to the merged run), plus --shard,
 * --device, its own output root, and --preflight-only for the first pass. */
static void child_argv(const struct cb_run_opts *o, const char *self, const struct shard_proc *sp,
		       int preflight_only, char *stop_after, size_t cap, const char *av[CHILD_ARGS])
{
	size_t n = 0;

	av[n++] = self;
	av[n++] = "run";
	av[n++] = "--manifest"; av[n++] = o->manifest;
	av[n++] = "--task-matrix"; av[n++] = o->matrix;
	av[n++] = "--build-root"; av[n++] = o->build_root;
	av[n++] = "--corpus"; av[n++] = o->corpus;
	av[n++] = "--output-root"; av[n++] = sp->root;
	av[n++] = "--shard"; av[n++] = sp->name;
	av[n++] = "--device"; av[n++] = sp->device;
	av[n++] = "--python"; av[n++] = o->python;
	if (o->worker) { av[n++] = "--worker"; av[n++] = o->worker; }
	if (o->backends) { av[n++] = "--backends"; av[n++] = o->backends; }
	if (o->deadline) { av[n++] = "--deadline"; av[n++] = o->deadline; }
	if (o->history) { av[n++] = "--history"; av[n++] = o->history; }
	if (o->sign_key) { av[n++] = "--sign-key"; av[n++] = o->sign_key; }
	if (o->stop_after) {
		snprintf(stop_after, cap, "%lld", o->stop_after);
		av[n++] = "--stop-after"; av[n++] = stop_after;
	}
	if (o->workers != CB_WORKERS_SESSION) { av[n++] = "--workers"; av[n++] = o->workers == CB_WORKERS_TASK ? "task" : "persistent"; }
	if (o->prestart != CB_PRESTART_DEFAULT) {
		static const char *const counts[CB_PRESTART_MAX + 1] = { "0", "1", "2", "3", "4" };
		av[n++] = "--prestart"; av[n++] = counts[o->prestart];
	}
	if (o->prescreen) av[n++] = "--prescreen";
	if (o->confinement != CB_CONFINE_AUTO) { av[n++] = "--confinement"; av[n++] = cb_confine_mode_name(o->confinement); }
	if (o->require_confinement) av[n++] = "--require-confinement";
	if (o->allow_dirty) av[n++] = "--allow-dirty-harness";
	if (o->quiet) av[n++] = "--quiet";
	if (o->json_progress) av[n++] = "--json-progress";
	if (sp->resume) av[n++] = "--resume";
	if (preflight_only) av[n++] = "--preflight-only";
	av[n] = NULL;
}

/* caliber's own environment with the backend's visibility variable set to
 * the shard's device, so that whatever the child starts sees only it. */
static int child_env(const char *vis, const char *device, struct cb_env *env, struct cb_err *err)
{
	char **e;

	memset(env, 0, sizeof(*env));
	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char *key = eq ? strndup(*e, (size_t)(eq - *e)) : NULL;
		int rc = key ? cb_env_set(env, key, eq + 1) : 0;
		free(key);
		if (rc < 0 || (eq && !key))
			return cb_fail(err, "out of memory");
	}
	return cb_env_set(env, vis, device) < 0 ? cb_fail(err, "out of memory") : 0;
}

/* One line a child printed, shown under its shard: text as "shard K/N
 * (device D): LINE"; with --json-progress the child's event with "shard"
 * and "device" added (a line that is no JSON object becomes an
 * "output" event). */
static void show_line(const struct cb_run_opts *o, const struct shard_proc *sp, int fd, const char *line)
{
	FILE *f = fd ? stderr : stdout;

	if (o->quiet && !fd)
		return;   /* a shard's verdict line: the merged run's is printed instead */
	if (o->json_progress && !fd) {
		struct cb_err ignored;
		json_t *j = cb_json_load_buf(line, strlen(line), "progress", &ignored);
		if (!json_is_object(j)) {
			json_decref(j);
			j = json_pack("{s:s, s:s}", "event", "output", "line", line);
		}
		json_object_set_new(j, "shard", json_string(sp->name));
		json_object_set_new(j, "device", json_string(sp->device));
		cb_json_print_line(f, j);
		return;
	}
	fprintf(f, "shard %s (device %s): %s\n", sp->name, sp->device, line);
	fflush(f);
}

/* Show every complete line in sp's buffer for fd (all of it at EOF). */
static void flush_lines(const struct cb_run_opts *o, struct shard_proc *sp, int fd, int eof)
{
	struct cb_buf *b = &sp->pending[fd];
	size_t start = 0, i;

	for (i = 0; i < b->len; i++)
		if (b->data[i] == '\n' || b->data[i] == '\r') {
			b->data[i] = '\0';
			if (i > start)
				show_line(o, sp, fd, b->data + start);
			start = i + 1;
		}
	if (eof && start < b->len) {
		cb_buf_add(b, "", 1);
		show_line(o, sp, fd, b->data + start);
		start = b->len;
	}
	if (start) {
		memmove(b->data, b->data + start, b->len - start);
		b->len -= start;
	}
}

/* Pump every child's stdout and stderr until all of them have exited;
 * sp[k].status receives each one's exit status (128 + signal when one is
 * killed). A stop signal to this process is passed on to every shard
 * (SIGTERM to its process group), whose output is still shown. */
static void pump(const struct cb_run_opts *o, struct shard_proc *sp, size_t n)
{
	struct pollfd *pf = calloc(2 * n, sizeof(*pf));
	size_t left = n, k;
	int passed_on = 0;
	char buf[65536];

	while (pf && left) {
		nfds_t m = 0;
		for (k = 0; k < n; k++) {
			int *fds[2] = { &sp[k].child.out_fd, &sp[k].child.err_fd };
			int f;
			for (f = 0; f < 2; f++)
				if (sp[k].child.pid && *fds[f] >= 0) {
					pf[m].fd = *fds[f];
					pf[m].events = POLLIN;
					pf[m].revents = 0;
					m++;
				}
		}
		if (poll(pf, m, -1) < 0 && errno != EINTR)
			break;
		if (stop_signal && !passed_on) {
			for (k = 0; k < n; k++)
				if (sp[k].child.pid && sp[k].status < 0)
					kill(-sp[k].child.pid, SIGTERM);
			passed_on = 1;
		}
		for (k = 0; k < n; k++) {
			int *fds[2] = { &sp[k].child.out_fd, &sp[k].child.err_fd };
			int f;
			if (!sp[k].child.pid || sp[k].status >= 0)
				continue;
			for (f = 0; f < 2; f++) {
				nfds_t i;
				for (i = 0; i < m && *fds[f] >= 0; i++) {
					ssize_t r;
					if (pf[i].fd != *fds[f] || !pf[i].revents)
						continue;
					r = read(*fds[f], buf, sizeof(buf));
					if (r < 0 && errno == EINTR)
						break;
					if (r > 0) {
						cb_buf_add(&sp[k].pending[f], buf, (size_t)r);
						flush_lines(o, &sp[k], f, 0);
					} else {
						flush_lines(o, &sp[k], f, 1);
						close(*fds[f]);
						*fds[f] = -1;
					}
					break;
				}
			}
			if (sp[k].child.out_fd < 0 && sp[k].child.err_fd < 0) {
				cb_child_release(&sp[k].child);
				sp[k].status = WIFEXITED(sp[k].child.status) ? WEXITSTATUS(sp[k].child.status)
									     : 128 + WTERMSIG(sp[k].child.status);
				left--;
			}
		}
	}
	free(pf);
}

/* Start every shard's child (the preflights alone with preflight_only) and
 * wait for all of them. */
static int run_pass(const struct cb_run_opts *o, const char *self, const char *vis, struct shard_proc *sp, size_t n,
		    int preflight_only, struct cb_err *err)
{
	char stop_after[32];
	size_t k;

	for (k = 0; k < n; k++) {
		const char *av[CHILD_ARGS];
		struct cb_env env;
		int rc;

		sp[k].status = -1;
		child_argv(o, self, &sp[k], preflight_only, stop_after, sizeof(stop_after), av);
		if (child_env(vis, sp[k].device, &env, err) < 0) {
			cb_env_release(&env);
			break;
		}
		rc = cb_child_spawn(&sp[k].child, av, env.v, 0, err);
		cb_env_release(&env);
		if (rc < 0)
			break;
		cb_child_close_stdin(&sp[k].child);
	}
	if (k < n) {
		size_t j;
		for (j = 0; j < k; j++)
			cb_child_kill(&sp[j].child, 1000);
		return -1;
	}
	pump(o, sp, n);
	return 0;
}

/* Which exit statuses shards_with looks for. */
enum ended { ENDED_NOT_OK, ENDED_FAILED, ENDED_USAGE, ENDED_STOPPED };

/* Whether status is one of what. */
static int ended(int status, enum ended what)
{
	switch (what) {
	case ENDED_NOT_OK: return status != CB_EXIT_OK;
	case ENDED_FAILED: return status != CB_EXIT_OK && status != CB_EXIT_STOPPED;
	case ENDED_USAGE: return status == CB_EXIT_USAGE;
	case ENDED_STOPPED: return status == CB_EXIT_STOPPED;
	}
	return 0;
}

/* The shards whose child ended as what, as "1/4 (device 0, exit 3), 3/4
 * (device 2, exit 3)" into b; how many into *hits. */
static void shards_with(const struct shard_proc *sp, size_t n, enum ended what, struct cb_buf *b, size_t *hits)
{
	size_t k;

	*hits = 0;
	for (k = 0; k < n; k++)
		if (ended(sp[k].status, what)) {
			cb_buf_addf(b, "%s%s (device %s, exit %d)", *hits ? ", " : "", sp[k].name, sp[k].device,
				    sp[k].status);
			(*hits)++;
		}
}

/* --fail-on over the merged run's verdicts. */
static int gate(const struct cb_run_opts *o, const char *fail_set, struct cb_err *err)
{
	struct cb_campaign_summary cs;
	struct cb_gate g;
	size_t i;
	int rc = CB_EXIT_OK;

	if (cb_campaign_summary_of_run(o->output, &cs, err) < 0)
		return CB_EXIT_FAIL;
	cb_gate_init(&g, o->fail_on, fail_set);
	for (i = 0; i < cs.ntasks && rc == CB_EXIT_OK; i++)
		if (cb_gate_add(&g, cs.tasks[i].id, cs.tasks[i].verdict[0], err) < 0)
			rc = CB_EXIT_FAIL;
	if (rc == CB_EXIT_OK && cb_gate_judge(&g, err) < 0)
		rc = CB_EXIT_GATE;
	cb_gate_release(&g);
	cb_campaign_summary_release(&cs);
	return rc;
}

/* The signals that stop a run --devices, passed on to its shards. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* After a pass: whether a stop signal came, saying so in err. */
static int interrupted(struct cb_err *err)
{
	if (!stop_signal)
		return 0;
	cb_fail(err, "--devices: stopped by signal %d, passed on to every shard; continue with --resume", (int)stop_signal);
	return 1;
}

/* How a pass of shards can end short of the merge, worst first. */
static const struct {
	enum ended what;
	int rc;
	const char *why;
} unfinished[] = {
	{ ENDED_FAILED, CB_EXIT_FAIL, "failed; the others ran on" },
	{ ENDED_STOPPED, CB_EXIT_STOPPED, "stopped at the deadline" },
};

int cb_run_devices(const struct cb_run_opts *o, const char *list, struct cb_err *err)
{
	struct cb_manifest m;
	struct cb_backend be;
	struct shard_proc *sp = NULL;
	struct cb_buf which = CB_BUF_INIT;
	const char **devs = NULL, **roots = NULL;
	char *copy = NULL, *self = NULL, fail_set[8] = "";
	struct sigaction sa, saved[sizeof(stop_signals) / sizeof(stop_signals[0])];
	size_t n = 0, k, hits;
	int rc = CB_EXIT_USAGE, handlers = 0;

	memset(&m, 0, sizeof(m));
	memset(&be, 0, sizeof(be));
	if (parse_list(list, &copy, &devs, &n, err) < 0 || cb_fail_on_parse(o->fail_on, fail_set, err) < 0)
		goto out;
	rc = CB_EXIT_FAIL;
	if (cb_manifest_load(o->manifest, &m, err) < 0 || cb_backend_load(o->backends, m.backend, &be, err) < 0 ||
	    !(self = cb_self_exe(err)))
		goto out;
	if (cb_is_sealed(o->output) && o->resume) {
		printf("run: %s is already complete and sealed; nothing to resume\n", o->output);
		rc = CB_EXIT_OK;
		goto out;
	}
	if (cb_exists(o->output)) {
		cb_fail(err, "--output-root %s exists; with --devices it is written once, by the merge at the end", o->output);
		rc = CB_EXIT_PREFLIGHT;
		goto out;
	}
	sp = calloc(n, sizeof(*sp));
	roots = calloc(n, sizeof(*roots));
	if (!sp || !roots) {
		cb_fail(err, "out of memory");
		goto out;
	}
	for (k = 0; k < n; k++) {
		sp[k].s = (struct cb_shard){ k + 1, n };
		cb_shard_name(&sp[k].s, sp[k].name);
		sp[k].device = devs[k];
		sp[k].root = cb_strdupf("%s.shards/%zu", o->output, k + 1);
		if (!sp[k].root) {
			cb_fail(err, "out of memory");
			goto out;
		}
		sp[k].resume = o->resume && cb_exists(sp[k].root);
		roots[k] = sp[k].root;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (k = 0; k < sizeof(stop_signals) / sizeof(stop_signals[0]); k++)
		sigaction(stop_signals[k], &sa, &saved[k]);
	handlers = 1;
	/* Every device preflighted before any shard starts. */
	if (run_pass(o, self, be.visibility_env, sp, n, 1, err) < 0 || interrupted(err))
		goto out;
	shards_with(sp, n, ENDED_NOT_OK, &which, &hits);
	if (hits) {
		size_t usage;
		struct cb_buf u = CB_BUF_INIT;
		shards_with(sp, n, ENDED_USAGE, &u, &usage);
		cb_buf_release(&u);
		rc = usage ? CB_EXIT_USAGE : CB_EXIT_PREFLIGHT;
		cb_fail(err, "--devices: the preflights of shard %s refused the batch; nothing was written", which.data);
		goto out;
	}
	if (run_pass(o, self, be.visibility_env, sp, n, 0, err) < 0 || interrupted(err))
		goto out;
	for (k = 0; k < sizeof(unfinished) / sizeof(unfinished[0]); k++) {
		cb_buf_release(&which);
		shards_with(sp, n, unfinished[k].what, &which, &hits);
		if (hits) {
			cb_fail(err, "--devices: shard %s %s; continue with --resume", which.data, unfinished[k].why);
			rc = unfinished[k].rc;
			goto out;
		}
	}
	if (cb_merge(&(struct cb_merge_opts){ .shards = roots, .nshards = n, .output = o->output,
					      .sign_key = o->sign_key, .quiet = o->quiet || o->json_progress,
					      .argc = o->argc, .argv = o->argv }, err) < 0)
		goto out;
	if (o->json_progress)
		cb_json_print_line(stdout, json_pack("{s:s, s:I, s:s}", "event", "merged", "shards", (json_int_t)n,
						     "root", o->output));
	rc = cb_run_verdicts(o->output, o->json_progress, 1, err);
	if (rc == CB_EXIT_OK && fail_set[0])
		rc = gate(o, fail_set, err);
out:
	for (k = 0; handlers && k < sizeof(stop_signals) / sizeof(stop_signals[0]); k++)
		sigaction(stop_signals[k], &saved[k], NULL);
	for (k = 0; sp && k < n; k++) {
		cb_child_release(&sp[k].child);
		cb_buf_release(&sp[k].pending[0]);
		cb_buf_release(&sp[k].pending[1]);
		free(sp[k].root);
	}
	cb_buf_release(&which);
	free(sp);
	free(roots);
	free(devs);
	free(copy);
	free(self);
	cb_backend_release(&be);
	cb_manifest_release(&m);
	return rc;
}
