/* libFuzzer target: verification of a seal, over an arbitrary SHA256SUMS.
 * A small sealed tree is made once (three listed files, SEAL among them,
 * and a folder SEAL names as empty); each input is written as its
 * SHA256SUMS and cb_verify checks the tree against it. fuzz_sums covers the
 * parsers alone; this one the merge of the list with the tree: verify
 * fails exactly when the text does not parse, the seal's digest is that of
 * the text, every listed path is changed or missing as the tree says, every
 * file left out is extra, and the seal holds exactly when the text lists
 * the three files with their true digests. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seal/seal.h"
#include "base/sha.h"
#include "seal/sums.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The tree: each file's path and bytes (sorted by path, as SHA256SUMS is). */
static const struct {
	const char *rel, *text;
} files[] = {
	{ "SEAL", "caliber-seal 2\nfiles 3\ndir tasks/t/empty\n" },
	{ "campaign.json", "{}\n" },
	{ "tasks/t/task.json", "{\"id\": \"t\"}\n" },
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char root[64], sums_path[96], hex[NFILES][CB_SHA256_HEX];

/* Write text to root/rel, or give up: the target cannot run without it. */
static void put(const char *rel, const char *text, size_t len)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (len && write(fd, text, len) != (ssize_t)len) || close(fd) < 0) {
		perror(path);
		abort();
	}
}

/* Remove the tree when the fuzzer exits. */
static void remove_tree(void)
{
	char path[160];
	size_t i;

	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i].rel);
		unlink(path);
	}
	unlink(sums_path);
	snprintf(path, sizeof(path), "%s/tasks/t/empty", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/tasks/t", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/tasks", root);
	rmdir(path);
	rmdir(root);
}

/* Make the tree in a fresh folder of /tmp, and the digest of each file. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[160];
	struct cb_err err;
	size_t i;

	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "/tmp/caliber-fuzz-verify.XXXXXX");
	if (!mkdtemp(root))
		abort();
	snprintf(sums_path, sizeof(sums_path), "%s/%s", root, CB_SUMS_FILE);
	snprintf(path, sizeof(path), "%s/tasks", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tasks/t", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tasks/t/empty", root);
	mkdir(path, 0755);
	for (i = 0; i < NFILES; i++) {
		put(files[i].rel, files[i].text, strlen(files[i].text));
		if (cb_sha256_hex(files[i].text, strlen(files[i].text), hex[i], &err) < 0)
			abort();
	}
	atexit(remove_tree);
	return 0;
}

/* Index of rel among the tree's files, or NFILES. */
static size_t file_index(const char *rel)
{
	size_t i;

	for (i = 0; i < NFILES && strcmp(files[i].rel, rel) != 0; i++)
		;
	return i;
}

/* One input: written as SHA256SUMS, verified, and the report checked
 * against what the tree and the parsed text say it must be. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_verify_report rep;
	struct cb_sums s;
	struct cb_err err, perr;
	char digest[CB_SHA256_HEX];
	size_t i, changed = 0, missing = 0, extra = 0, listed = 0, got_extra = 0;
	int rc, parsed;

	put(CB_SUMS_FILE, (const char *)data, size);
	parsed = cb_sums_parse((const char *)data, size, sums_path, &s, &perr) == 0;
	rc = cb_verify(root, &rep, &err);
	if (rc != (parsed ? 0 : -1))
		abort();
	if (!parsed) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	for (i = 0; i < s.n; i++) {
		size_t k = file_index(s.v[i].rel);
		if (k == NFILES) {
			missing++;
			continue;
		}
		listed++;
		changed += strcmp(s.v[i].hex, hex[k]) != 0;
	}
	extra = NFILES - listed;
	for (i = 0; i < rep.nextra; i++)
		got_extra += rep.extra[i][strlen(rep.extra[i]) - 1] != '/';
	if (cb_sha256_hex((const char *)data, size, digest, &err) < 0 || strcmp(digest, rep.digest) != 0 ||
	    rep.nchanged != changed || rep.nmissing != missing || got_extra != extra ||
	    rep.format != (cb_sums_find(&s, CB_SEAL_FILE) < s.n ? 2 : 1) ||
	    rep.nfiles != s.n - (rep.format == 2) || rep.nlinks || rep.nspecials ||
	    cb_verify_holds(&rep) != (changed == 0 && missing == 0 && extra == 0))
		abort();
	cb_sums_release(&s);
	cb_verify_report_release(&rep);
	return 0;
}
