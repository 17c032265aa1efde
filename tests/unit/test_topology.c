/* test_topology.c: topology accounting (docs/design.md section 9).
 *
 * Data-driven: every file listed in tests/data/ttgir/expected.tsv (real
 * TTGIR captured on a GPU) and tests/golden/ttgir/expected.tsv (synthetic
 * edge cases), header "file<TAB>count", is counted from memory and from the
 * file and must give the count listed. Then: a 1 GiB line read in bounded
 * memory, text across the edges of the chunks files are read in, the index
 * parser's refusals with their exact messages, and joins of cells built in
 * a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "tlib.h"
#include "ir/topology.h"

#define OP CB_DEFAULT_TOPOLOGY_OP
#define OPS_LINE "%0 = ttg.convert_layout %x : t\n"

/* ---- golden TTGIR -------------------------------------------------------- */

struct golden {
	char *dir;        /* absolute folder of expected.tsv */
	char *file;
	long long count;
	char *name;       /* test name: "<folder>/<file>" */
};

/* Rows of <rel>/expected.tsv appended to *v; a missing expected.tsv adds
 * nothing and returns 0, else 1. A malformed one stops the run. */
static int load_expected(const char *rel, struct golden **v, size_t *n)
{
	char path[4200], *text, *line, *save = NULL;
	const char *dir = tl_path(rel);
	char *dircopy = strdup(dir);
	int first = 1;

	snprintf(path, sizeof(path), "%s/expected.tsv", dircopy);
	if (!cb_exists(path)) {
		free(dircopy);
		return 0;
	}
	text = tl_slurp(path, NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t'), *end;
		struct golden *g;

		if (first) {
			first = 0;
			if (strcmp(line, "file\tcount") != 0) {
				fprintf(stderr, "%s: header is not 'file<TAB>count'\n", path);
				abort();
			}
			continue;
		}
		if (!tab) {
			fprintf(stderr, "%s: no tab in '%s'\n", path, line);
			abort();
		}
		*tab = '\0';
		*v = realloc(*v, (*n + 1) * sizeof(**v));
		g = &(*v)[(*n)++];
		g->dir = strdup(dircopy);
		g->file = strdup(line);
		g->count = strtoll(tab + 1, &end, 10);
		g->name = cb_strdupf("%s/%s", rel, line);
		if (*end || end == tab + 1) {
			fprintf(stderr, "%s: count '%s' of %s is not an integer\n", path, tab + 1, line);
			abort();
		}
	}
	free(text);
	free(dircopy);
	return 1;
}

/* Piece sizes the streaming counter is fed in: single bytes, sizes that
 * split the op name (shorter than it, and 19 = its length + 1), blocks of
 * the size verify reads, and sizes around the chunk. 0: a cycle of sizes
 * 1..37. */
static const size_t piece_sizes[] = { 1, 5, 17, 19, 0, 4096, 1 << 16, CB_TTGIR_CHUNK - 1,
				      CB_TTGIR_CHUNK + 19 };

/* data fed to a streaming counter in pieces of `piece` bytes (0: cycling). */
static long long stream_count(const char *data, size_t len, size_t piece)
{
	struct cb_ttgir_counter *c;
	struct cb_err err;
	size_t at = 0, k = 0;
	long long n;

	if (cb_ttgir_counter_new(OP, &c, &err) < 0)
		fail_msg("%s", err.msg);
	while (at < len) {
		size_t want = piece ? piece : 1 + k++ % 37;
		size_t take = len - at < want ? len - at : want;
		cb_ttgir_counter_feed(c, data + at, take);
		at += take;
	}
	n = cb_ttgir_counter_result(c);
	assert_int_equal(cb_ttgir_counter_result(c), n);
	cb_ttgir_counter_free(c);
	return n;
}

/* The streaming counter counts data as cb_ttgir_count does, in every
 * piece size. */
static void assert_stream_counts(const char *data, size_t len, long long want)
{
	size_t i;

	for (i = 0; i < sizeof(piece_sizes) / sizeof(piece_sizes[0]); i++)
		if (stream_count(data, len, piece_sizes[i]) != want)
			fail_msg("streaming in pieces of %zu bytes: count differs from %lld", piece_sizes[i],
				 want);
}

/* One listed file: every entry point gives the listed count. */
static void golden_case(void **state)
{
	const struct golden *g = *state;
	char path[4200], *text;
	struct cb_err err;
	long long c = -1;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", g->dir, g->file);
	if (!cb_exists(path))
		fail_msg("%s is listed in expected.tsv but missing", path);
	assert_int_equal(cb_ttgir_count_file(path, OP, &c, &err), 0);
	assert_int_equal(c, g->count);
	text = tl_slurp(path, &len);
	assert_int_equal(cb_ttgir_count(text, len, OP), g->count);
	assert_stream_counts(text, len, g->count);
	free(text);
}

/* Every .ttgir of a golden folder is listed, so no case is silently left out. */
static void all_listed(void **state)
{
	const char *rel = *state;
	struct golden *v = NULL;
	size_t n = 0, nf, i, j;
	char **files;

	if (!cb_is_dir(tl_path(rel)))
		skip();
	files = tl_glob(tl_path(rel), ".ttgir", &nf);
	load_expected(rel, &v, &n);
	for (i = 0; i < nf; i++) {
		for (j = 0; j < n && strcmp(v[j].file, files[i]) != 0; j++)
			;
		if (j == n)
			fail_msg("%s/%s is not listed in its expected.tsv", rel, files[i]);
		free(files[i]);
	}
	for (j = 0; j < n; j++) {
		free(v[j].dir);
		free(v[j].file);
		free(v[j].name);
	}
	free(v);
	free(files);
}

static void no_fixtures_yet(void **state)
{
	(void)state;
	skip();
}

/* ---- long lines and chunk edges ----------------------------------------- */

static char *tmp_file(const char *name)
{
	return cb_path_join(tl_tmpdir(), name);
}

static void write_file(const char *path, const char *data, size_t len)
{
	struct cb_err err;

	if (cb_write_atomic(path, data, len, 0644, &err) < 0)
		fail_msg("%s", err.msg);
}

/* data counts want from memory, streamed in pieces and, written to a
 * file, from the file. */
static void assert_counts(const char *data, size_t len, long long want)
{
	char *path = tmp_file("case.ttgir");
	struct cb_err err;
	long long c = -1;

	assert_int_equal(cb_ttgir_count(data, len, OP), want);
	assert_stream_counts(data, len, want);
	write_file(path, data, len);
	assert_int_equal(cb_ttgir_count_file(path, OP, &c, &err), 0);
	assert_int_equal(c, want);
	unlink(path);
	free(path);
}

static long max_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A sparse file: one line of 1 GiB (a loc mention near its end), then an
 * operation line. The count is right and memory does not follow the line. */
static void gib_line_in_bounded_memory(void **state)
{
	static const char head[] = "    %0 = arith.constant dense<";
	static const char tail[] = "> : tensor<4xf32> loc(\"ttg.convert_layout\")\n"
				   "    %1 = ttg.convert_layout %0 : tensor<4xf32>\n";
	const off_t gib = (off_t)1 << 30;
	char *path = tmp_file("gib.ttgir");
	struct cb_err err;
	long long c = -1;
	long before;
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, head, sizeof(head) - 1, 0), (ssize_t)(sizeof(head) - 1));
	assert_int_equal(ftruncate(fd, gib), 0);
	assert_int_equal(pwrite(fd, tail, sizeof(tail) - 1, gib), (ssize_t)(sizeof(tail) - 1));
	assert_int_equal(close(fd), 0);
	before = max_rss_kib();
	assert_int_equal(cb_ttgir_count_file(path, OP, &c, &err), 0);
	assert_int_equal(c, 1);
	assert_true(max_rss_kib() - before < 16 * 1024);
	unlink(path);
	free(path);
}

/* Each line is placed at every offset across a chunk edge, one edge each,
 * among lines of blanks; the file, read chunk by chunk, counts as the
 * whole buffer does, and as the lines say. */
static void lines_across_chunk_edges(void **state)
{
	static const struct {
		const char *text;
		int counts;
	} lines[] = {
		{ "%v = ttg.convert_layout %x : t", 1 },
		{ " %a, %b:2 = \"ttg.convert_layout\"(%x) : t", 1 },
		{ "%v = ttg.convert_layout_foo %x", 0 },
		{ "%ttg.convert_layout = arith.addf %x loc(\"ttg.convert_layout\")", 0 },
	};
	size_t nl = sizeof(lines) / sizeof(lines[0]), i, k, edges = 0, len, at;
	long long want = 0;
	char *buf;

	(void)state;
	for (i = 0; i < nl; i++)
		edges += strlen(lines[i].text) + 2;
	len = (edges + 1) * CB_TTGIR_CHUNK;
	buf = malloc(len);
	assert_non_null(buf);
	for (at = 0; at < len; at++)
		buf[at] = at % 64 == 63 ? '\n' : ' ';
	edges = 0;
	for (i = 0; i < nl; i++) {
		size_t tl = strlen(lines[i].text);
		for (k = 0; k <= tl + 1; k++) {
			size_t start = ++edges * CB_TTGIR_CHUNK - k;
			buf[start - 1] = '\n';
			memcpy(buf + start, lines[i].text, tl);
			buf[start + tl] = '\n';
			want += lines[i].counts;
		}
	}
	assert_counts(buf, len, want);
	free(buf);
}

/* A line whose start (blanks, a result name, a name full of the op) is
 * longer than a chunk still counts by its shape. */
static void line_starts_longer_than_a_chunk(void **state)
{
	static const char *const ends[] = { " = ttg.convert_layout %x\n", " = arith.addf %x\n" };
	const size_t n = CB_TTGIR_CHUNK + 4096;
	struct cb_buf b = CB_BUF_INIT;
	size_t i, e, len;
	char *text;

	(void)state;
	for (e = 0; e < 2; e++) {
		for (i = 0; i < n; i++)
			cb_buf_adds(&b, " ");
		cb_buf_adds(&b, "ttg.convert_layout %x\n%");
		for (i = 0; i < n; i++)
			cb_buf_adds(&b, "a");
		cb_buf_adds(&b, ends[e]);
		cb_buf_adds(&b, "%");
		for (i = 0; i < n / strlen(OP); i++)
			cb_buf_adds(&b, OP);
		cb_buf_adds(&b, ends[e]);
		text = cb_buf_detach(&b, &len);
		assert_counts(text, len, e == 0 ? 3 : 1);
		free(text);
	}
}

static void other_ops_and_bad_names(void **state)
{
	static const char text[] = "%0 = tt.load %p : t\n%1 = ttg.convert_layout %0 : t\n";
	struct cb_err err;
	long long c = -1;

	(void)state;
	assert_int_equal(cb_ttgir_count(text, sizeof(text) - 1, "tt.load"), 1);
	assert_int_equal(cb_ttgir_count(text, sizeof(text) - 1, "tt"), 0);
	assert_int_equal(cb_ttgir_count(text, sizeof(text) - 1, ""), 0);
	assert_int_equal(cb_ttgir_count("", 0, OP), 0);
	assert_int_equal(cb_ttgir_count_file("/nonexistent.ttgir", "ttg convert", &c, &err), -1);
	assert_string_equal(err.msg,
			    "op 'ttg convert' is not an operation name (letters, digits, '_', '.', '$')");
	assert_int_equal(cb_topology_check_op("", &err), -1);
	assert_string_equal(err.msg, "the op name is empty");

	assert_int_equal(cb_ttgir_count_file("/nonexistent.ttgir", OP, &c, &err), -1);
	assert_string_equal(err.msg, "/nonexistent.ttgir: No such file or directory");
	assert_int_equal(cb_ttgir_count_file("/", OP, &c, &err), -1);
	assert_string_equal(err.msg, "/: not a regular file");
}

/* The streaming counter: empty data, a bad op refused with the message the
 * file counter gives, another op, pieces that end inside a line. */
static void streaming_counter(void **state)
{
	static const char text[] = "%0 = tt.load %p : t\n%1 = ttg.convert_layout %0 : t\n";
	struct cb_ttgir_counter *c = NULL;
	struct cb_err err;

	(void)state;
	assert_int_equal(stream_count("", 0, 1), 0);
	assert_int_equal(cb_ttgir_counter_new("ttg convert", &c, &err), -1);
	assert_null(c);
	assert_string_equal(err.msg,
			    "op 'ttg convert' is not an operation name (letters, digits, '_', '.', '$')");
	assert_int_equal(cb_ttgir_counter_new("tt.load", &c, &err), 0);
	cb_ttgir_counter_feed(c, text, 8);
	cb_ttgir_counter_feed(c, text + 8, sizeof(text) - 9);
	assert_int_equal(cb_ttgir_counter_result(c), 1);
	cb_ttgir_counter_free(c);
	cb_ttgir_counter_free(NULL);
}

/* Links are refused, not followed; a FIFO is refused without blocking. */
static void only_regular_files(void **state)
{
	char *file = tmp_file("real.ttgir"), *link = tmp_file("link.ttgir"), *fifo = tmp_file("fifo.ttgir");
	char want[4400];
	struct cb_err err;
	long long c = -1;

	(void)state;
	write_file(file, OPS_LINE, strlen(OPS_LINE));
	assert_int_equal(cb_ttgir_count_file(file, OP, &c, &err), 0);
	assert_int_equal(c, 1);
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(cb_ttgir_count_file(link, OP, &c, &err), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", link);
	assert_string_equal(err.msg, want);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(cb_ttgir_count_file(fifo, OP, &c, &err), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", fifo);
	assert_string_equal(err.msg, want);
	free(file);
	free(link);
	free(fifo);
}

/* ---- ir/index.tsv ------------------------------------------------------- */

#define HDR "variant\tkernel\tlaunches\ttuning_launches\n"

static const struct {
	const char *what, *input, *msg;
} bad_indexes[] = {
	{ "empty file", "",
	  "idx.tsv: empty file, expected the header variant, kernel, launches, tuning_launches (tab-separated)" },
	{ "header missing a column", "variant\tkernel\tlaunches\n", "idx.tsv:1: missing column 'tuning_launches'" },
	{ "header with an extra column", "variant\tkernel\tlaunches\ttuning_launches\tnote\n",
	  "idx.tsv:1: extra column after 'tuning_launches'" },
	{ "header with another name", "variant\tkernel\tlaunch\ttuning_launches\n",
	  "idx.tsv:1: column 3 is 'launch', expected 'launches'" },
	{ "header only a word", "variant\n", "idx.tsv:1: missing column 'kernel'" },
	{ "row missing a column", HDR "A\tk\t1\t0\nB\tk\t1\n", "idx.tsv:3: missing column 'tuning_launches'" },
	{ "row with an extra column", HDR "A\tk\t1\t0\t7\n", "idx.tsv:2: extra column after 'tuning_launches'" },
	{ "negative count", HDR "A\tk\t1\t0\nB\tk\t-1\t0\n", "idx.tsv:3: launches: '-1' is not a count >= 0" },
	{ "negative tuning count", HDR "A\tk\t1\t-2\n", "idx.tsv:2: tuning_launches: '-2' is not a count >= 0" },
	{ "non-integer count", HDR "A\tk\t1.5\t0\n", "idx.tsv:2: launches: '1.5' is not a count >= 0" },
	{ "word as count", HDR "A\tk\tmany\t0\n", "idx.tsv:2: launches: 'many' is not a count >= 0" },
	{ "signed count", HDR "A\tk\t+3\t0\n", "idx.tsv:2: launches: '+3' is not a count >= 0" },
	{ "blank in count", HDR "A\tk\t 3\t0\n", "idx.tsv:2: launches: ' 3' is not a count >= 0" },
	{ "empty count", HDR "A\tk\t\t0\n", "idx.tsv:2: launches: '' is not a count >= 0" },
	{ "count too large", HDR "A\tk\t9223372036854775808\t0\n",
	  "idx.tsv:2: launches: '9223372036854775808' is too large" },
	{ "duplicate variant", HDR "A\tk\t1\t0\nB\tk\t1\t0\nA\tk2\t3\t0\n",
	  "idx.tsv:4: variant 'A' is already listed at line 2" },
	{ "two duplicates: the first repeat in the file", HDR "B\tk\t1\t0\nA\tk\t1\t0\nC\tk\t1\t0\nA\tk\t1\t0\nB\tk\t1\t0\n",
	  "idx.tsv:5: variant 'A' is already listed at line 3" },
	{ "empty variant", HDR "\tk\t1\t0\n", "idx.tsv:2: variant is empty" },
	{ "empty kernel", HDR "A\t\t1\t0\n", "idx.tsv:2: kernel is empty" },
	{ "variant with a slash", HDR "a/b\tk\t1\t0\n", "idx.tsv:2: variant 'a/b' is not a directory name" },
	{ "variant dot-dot", HDR "..\tk\t1\t0\n", "idx.tsv:2: variant '..' is not a directory name" },
	{ "empty line", HDR "A\tk\t1\t0\n\nB\tk\t1\t0\n", "idx.tsv:3: empty line" },
	{ "carriage return inside", HDR "A\tk\r\t1\t0\n", "idx.tsv:2: carriage return inside a line" },
};

static void index_refusal(void **state)
{
	size_t i = (size_t)(uintptr_t)*state;
	const char *in = bad_indexes[i].input;
	struct cb_index ix;
	struct cb_err err;

	assert_int_equal(cb_index_parse(in, strlen(in), "idx.tsv", &ix, &err), -1);
	assert_string_equal(err.msg, bad_indexes[i].msg);
	assert_null(ix.rows);
	cb_index_release(&ix);
}

static void index_nul_byte(void **state)
{
	static const char in[] = HDR "A\tk\0x\t1\t0\n";
	struct cb_index ix;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_index_parse(in, sizeof(in) - 1, "idx.tsv", &ix, &err), -1);
	assert_string_equal(err.msg, "idx.tsv:2: NUL byte inside a line");
}

/* CRLF, no final newline, the largest count, leading zeros; rows keep the
 * file's order and their lines. */
static void index_accepts(void **state)
{
	static const char crlf[] = "variant\tkernel\tlaunches\ttuning_launches\r\n"
				   "ZZ\t_k2\t7\t0\r\nAA\t_k1\t0\t9223372036854775807\r\nMM\tk\t007\t1";
	struct cb_index ix;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_index_parse(crlf, sizeof(crlf) - 1, "idx.tsv", &ix, &err), 0);
	assert_int_equal(ix.n, 3);
	assert_string_equal(ix.rows[0].variant, "ZZ");
	assert_string_equal(ix.rows[0].kernel, "_k2");
	assert_int_equal(ix.rows[0].launches, 7);
	assert_int_equal(ix.rows[0].line, 2);
	assert_string_equal(ix.rows[1].variant, "AA");
	assert_int_equal(ix.rows[1].tuning_launches, 9223372036854775807LL);
	assert_int_equal(ix.rows[2].launches, 7);
	assert_int_equal(ix.rows[2].tuning_launches, 1);
	assert_int_equal(ix.rows[2].line, 4);
	cb_index_release(&ix);
	assert_int_equal(cb_index_parse(HDR, strlen(HDR), "idx.tsv", &ix, &err), 0);
	assert_int_equal(ix.n, 0);
	cb_index_release(&ix);
	cb_index_release(NULL);
	assert_int_equal(cb_index_load("/nonexistent/index.tsv", &ix, &err), -1);
	assert_string_equal(err.msg, "/nonexistent/index.tsv: No such file or directory");
}

/* ---- joins --------------------------------------------------------------- */

#define OPS2 "%0 = ttg.convert_layout %x : t\n%1 = ttg.convert_layout %0 : t\n"
#define OPS3 OPS2 "\"ttg.convert_layout\"(%1) : (t) -> t\n"

/* A cell in a fresh folder: ir/index.tsv holds index (none when NULL), and
 * files lists (path under ir/, content) pairs, NULL-terminated; a content
 * starting with "->" makes a symlink to the rest. Caller frees. */
static char *make_cell(const char *index, const char *const *files)
{
	char *cell = strdup(tl_tmpdir()), *ir = cb_path_join(cell, "ir");
	struct cb_err err;
	size_t i;

	assert_int_equal(cb_mkdir_p(ir, 0755, &err), 0);
	if (index) {
		char *p = cb_path_join(ir, "index.tsv");
		write_file(p, index, strlen(index));
		free(p);
	}
	for (i = 0; files[i]; i += 2) {
		char *p = cb_path_join(ir, files[i]);
		char *slash = strrchr(p, '/');
		*slash = '\0';
		assert_int_equal(cb_mkdir_p(p, 0755, &err), 0);
		*slash = '/';
		if (strncmp(files[i + 1], "->", 2) == 0)
			assert_int_equal(symlink(files[i + 1] + 2, p), 0);
		else
			write_file(p, files[i + 1], strlen(files[i + 1]));
		free(p);
	}
	free(ir);
	return cell;
}

static char *topology_text(const struct cb_topology *t)
{
	struct cb_err err;
	json_t *j = cb_topology_json(t);
	char *s;

	assert_non_null(j);
	s = cb_json_dumps(j, &err);
	assert_non_null(s);
	json_decref(j);
	return s;
}

static const char *const joined_files[] = {
	"A/_k.ttgir", OPS2, "B/_k.ttgir", OPS3, "B/_k.json", "{\"note\": \"ttg.convert_layout\"}\n",
	"C/_k.ttgir", OPS2, "C/_k2.ttgir", OPS3, "C/_k.json", "{}\n", "notes.txt", OPS3, NULL
};
static const char joined_index[] = HDR "C\t_k\t5\t2\nA\t_k\t0\t0\nB\t_k\t1\t4\n";

/* Counts made elsewhere are taken for the files they name and the op they
 * were made for (a wrong count shows it was used, not the file); other
 * files are read, and a table for another op is not used at all. */
static void join_precounted(void **state)
{
	char *cell = make_cell(joined_index, joined_files);
	char *a = cb_strdupf("%s/ir/A/_k.ttgir", cell), *c2 = cb_strdupf("%s/ir/C/_k2.ttgir", cell);
	struct cb_ttgir_counts pre, other;
	struct cb_topology t;
	struct cb_err err;
	long long n = -1;

	(void)state;
	assert_int_equal(cb_ttgir_counts_init(&pre, OP, &err), 0);
	assert_int_equal(cb_ttgir_counts_add(&pre, c2, 100, &err), 0);
	assert_int_equal(cb_ttgir_counts_add(&pre, a, 40, &err), 0);
	cb_ttgir_counts_sort(&pre);
	assert_int_equal(cb_ttgir_counts_find(&pre, OP, a, &n), 0);
	assert_int_equal(n, 40);
	assert_int_equal(cb_ttgir_counts_find(&pre, "tt.load", a, &n), -1);
	assert_int_equal(cb_ttgir_counts_find(NULL, OP, a, &n), -1);
	assert_int_equal(cb_topology_scan_counted(cell, OP, 0, &pre, &t, &err), 0);
	assert_int_equal(t.nv, 3);
	assert_int_equal(t.v[0].count, 40);     /* A: from the table */
	assert_int_equal(t.v[1].count, 3);      /* B: read */
	assert_int_equal(t.v[2].count, 102);    /* C: _k read, _k2 from the table */
	cb_topology_release(&t);
	assert_int_equal(cb_ttgir_counts_init(&other, "tt.load", &err), 0);
	assert_int_equal(cb_ttgir_counts_add(&other, a, 40, &err), 0);
	cb_ttgir_counts_sort(&other);
	assert_int_equal(cb_topology_scan_counted(cell, OP, 0, &other, &t, &err), 0);
	assert_int_equal(t.total, 10);
	cb_topology_release(&t);
	cb_ttgir_counts_release(&pre);
	cb_ttgir_counts_release(&other);
	cb_ttgir_counts_release(NULL);
	free(a);
	free(c2);
	free(cell);
}

/* Every variant joined: scoped and excluded follow the floor; total does not. */
static void join_scoped_vs_total(void **state)
{
	static const struct {
		long long floor, scoped;
		const char *excluded;
	} floors[] = { { 0, 8, "A" }, { 1, 5, "AB" }, { 5, 0, "ABC" }, { 0, 8, "A" } };
	char *cell = make_cell(joined_index, joined_files);
	struct cb_topology t;
	struct cb_err err;
	size_t f, i;

	(void)state;
	assert_int_equal(cb_topology_scan(cell, OP, 0, &t, &err), 0);
	assert_true(t.joinable);
	assert_int_equal(t.nunjoinable, 0);
	assert_int_equal(t.nv, 3);
	assert_string_equal(t.v[0].name, "A");
	assert_int_equal(t.v[1].count, 3);
	assert_int_equal(t.v[1].tuning_launches, 4);
	assert_string_equal(t.v[2].kernel, "_k");
	assert_int_equal(t.v[2].count, 5);
	for (f = 0; f < sizeof(floors) / sizeof(floors[0]); f++) {
		struct cb_topology fresh;
		char excluded[8] = "";

		cb_topology_rescope(&t, floors[f].floor);
		assert_int_equal(t.floor, floors[f].floor);
		assert_int_equal(t.scoped, floors[f].scoped);
		assert_int_equal(t.total, 10);
		for (i = 0; i < t.nv; i++)
			if (!t.v[i].scoped)
				strcat(excluded, t.v[i].name);
		assert_string_equal(excluded, floors[f].excluded);
		assert_int_equal(cb_topology_scan(cell, OP, floors[f].floor, &fresh, &err), 0);
		assert_int_equal(fresh.scoped, t.scoped);
		cb_topology_release(&fresh);
	}
	cb_topology_release(&t);
	cb_topology_release(&t);
	cb_topology_release(NULL);
	free(cell);
}

static void join_json(void **state)
{
	char *cell = make_cell(joined_index, joined_files), *text;
	struct cb_topology t;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_topology_scan(cell, OP, 1, &t, &err), 0);
	text = topology_text(&t);
	assert_string_equal(text,
		"{\n  \"excluded\": [\n    \"A\",\n    \"B\"\n  ],\n  \"floor\": 1,\n  \"joinable\": true,\n"
		"  \"scoped\": 5,\n  \"total\": 10,\n  \"unjoinable\": [],\n  \"variants\": [\n"
		"    {\n      \"count\": 2,\n      \"kernel\": \"_k\",\n      \"launches\": 0,\n"
		"      \"scoped\": false,\n      \"tuning_launches\": 0,\n      \"variant\": \"A\"\n    },\n"
		"    {\n      \"count\": 3,\n      \"kernel\": \"_k\",\n      \"launches\": 1,\n"
		"      \"scoped\": false,\n      \"tuning_launches\": 4,\n      \"variant\": \"B\"\n    },\n"
		"    {\n      \"count\": 5,\n      \"kernel\": \"_k\",\n      \"launches\": 5,\n"
		"      \"scoped\": true,\n      \"tuning_launches\": 2,\n      \"variant\": \"C\"\n    }\n"
		"  ]\n}\n");
	free(text);
	cb_topology_release(&t);
	free(cell);
}

static void join_variant_without_row(void **state)
{
	static const char *const files[] = { "A/_k.ttgir", OPS2, "Z/_k.ttgir", OPS3, NULL };
	char *cell = make_cell(HDR "A\t_k\t3\t0\n", files);
	struct cb_topology t;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_topology_scan(cell, OP, 0, &t, &err), 0);
	assert_false(t.joinable);
	assert_int_equal(t.nunjoinable, 1);
	assert_string_equal(t.unjoinable[0], "variant Z: no row in ir/index.tsv");
	assert_int_equal(t.nv, 1);
	assert_int_equal(t.v[0].count, 2);
	cb_topology_release(&t);
	free(cell);
}

/* A row with no directory, or a directory with no .ttgir, has no IR; the
 * reasons come sorted by variant whatever their kind; scoped and total are
 * null in JSON. */
static void join_row_without_ir(void **state)
{
	static const char *const files[] = {
		"B/_k.ttgir", OPS2, "C/_k.json", "{}\n", "M/_k.ttgir", OPS2, NULL
	};
	char *cell = make_cell(HDR "Z\t_k\t1\t0\nC\t_k\t1\t0\nB\t_k\t1\t0\nA\t_k\t1\t0\n", files), *text;
	struct cb_topology t;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_topology_scan(cell, OP, 0, &t, &err), 0);
	assert_false(t.joinable);
	text = topology_text(&t);
	assert_string_equal(text,
		"{\n  \"excluded\": [],\n  \"floor\": 0,\n  \"joinable\": false,\n  \"scoped\": null,\n"
		"  \"total\": null,\n  \"unjoinable\": [\n    \"row A: no IR\",\n    \"row C: no IR\",\n"
		"    \"variant M: no row in ir/index.tsv\",\n    \"row Z: no IR\"\n  ],\n  \"variants\": [\n"
		"    {\n      \"count\": 2,\n      \"kernel\": \"_k\",\n      \"launches\": 1,\n"
		"      \"scoped\": true,\n      \"tuning_launches\": 0,\n      \"variant\": \"B\"\n    }\n"
		"  ]\n}\n");
	free(text);
	cb_topology_release(&t);
	free(cell);
}

/* Only real directories are variants: a link to one and stray files are not. */
static void join_ignores_links_and_files(void **state)
{
	static const char *const files[] = { "A/_k.ttgir", OPS3, "L", "->A", "stray.ttgir", OPS2, NULL };
	char *cell = make_cell(HDR "A\t_k\t1\t0\n", files);
	struct cb_topology t;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_topology_scan(cell, OP, 0, &t, &err), 0);
	assert_true(t.joinable);
	assert_int_equal(t.nv, 1);
	assert_int_equal(t.scoped, 3);
	cb_topology_release(&t);
	free(cell);
}

static void join_empty_cell(void **state)
{
	static const char *const files[] = { NULL };
	char *cell = make_cell(HDR, files), *text;
	struct cb_topology t;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_topology_scan(cell, OP, 0, &t, &err), 0);
	assert_true(t.joinable);
	text = topology_text(&t);
	assert_string_equal(text, "{\n  \"excluded\": [],\n  \"floor\": 0,\n  \"joinable\": true,\n  \"scoped\": 0,\n"
				  "  \"total\": 0,\n  \"unjoinable\": [],\n  \"variants\": []\n}\n");
	free(text);
	cb_topology_release(&t);
	free(cell);
}

/* A missing or malformed index, a .ttgir that is a link, a bad op: errors
 * naming the file and line, and t left zeroed. */
static void join_errors(void **state)
{
	static const char *const ir[] = { "A/_k.ttgir", OPS2, NULL };
	static const char *const linked[] = { "A/_k.ttgir", "->../../x.ttgir", NULL };
	char *cells[3], want[4400];
	struct cb_topology t;
	struct cb_err err;

	(void)state;
	cells[0] = make_cell(NULL, ir);
	cells[1] = make_cell(HDR "A\t_k\t1\t0\nB\t_k\tx\t0\n", ir);
	cells[2] = make_cell(HDR "A\t_k\t1\t0\n", linked);
	assert_int_equal(cb_topology_scan(cells[0], OP, 0, &t, &err), -1);
	snprintf(want, sizeof(want), "%s/ir/index.tsv: No such file or directory", cells[0]);
	assert_string_equal(err.msg, want);
	assert_null(t.v);
	assert_int_equal(cb_topology_scan(cells[1], OP, 0, &t, &err), -1);
	snprintf(want, sizeof(want), "%s/ir/index.tsv:3: launches: 'x' is not a count >= 0", cells[1]);
	assert_string_equal(err.msg, want);
	assert_int_equal(cb_topology_scan(cells[2], OP, 0, &t, &err), -1);
	snprintf(want, sizeof(want), "%s/ir/A/_k.ttgir: not a regular file", cells[2]);
	assert_string_equal(err.msg, want);
	assert_int_equal(cb_topology_scan(cells[0], "ttg.convert_layout)", 0, &t, &err), -1);
	assert_string_equal(err.msg, "op 'ttg.convert_layout)' is not an operation name "
				     "(letters, digits, '_', '.', '$')");
	assert_null(t.v);
	free(cells[0]);
	free(cells[1]);
	free(cells[2]);
}

/* ---- main ---------------------------------------------------------------- */

int main(void)
{
	static const char *const golden_dirs[] = { "tests/data/ttgir", "tests/golden/ttgir" };
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(gib_line_in_bounded_memory),
		cmocka_unit_test(lines_across_chunk_edges),
		cmocka_unit_test(line_starts_longer_than_a_chunk),
		cmocka_unit_test(other_ops_and_bad_names),
		cmocka_unit_test(streaming_counter),
		cmocka_unit_test(only_regular_files),
		cmocka_unit_test(index_nul_byte),
		cmocka_unit_test(index_accepts),
		cmocka_unit_test(join_scoped_vs_total),
		cmocka_unit_test(join_precounted),
		cmocka_unit_test(join_json),
		cmocka_unit_test(join_variant_without_row),
		cmocka_unit_test(join_row_without_ir),
		cmocka_unit_test(join_ignores_links_and_files),
		cmocka_unit_test(join_empty_cell),
		cmocka_unit_test(join_errors),
	};
	size_t nbad = sizeof(bad_indexes) / sizeof(bad_indexes[0]);
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	struct golden *g = NULL;
	size_t ng = 0, i, k = 0;
	struct CMUnitTest *tests;
	int have_fixtures, rc;

	have_fixtures = load_expected(golden_dirs[0], &g, &ng);
	load_expected(golden_dirs[1], &g, &ng);
	tests = calloc(ng + 3 + nbad + nfixed, sizeof(*tests));
	for (i = 0; i < ng; i++) {
		tests[k].name = g[i].name;
		tests[k].test_func = golden_case;
		tests[k++].initial_state = &g[i];
	}
	if (!have_fixtures) {
		tests[k].name = "tests/data/ttgir: no expected.tsv yet (fixtures not captured)";
		tests[k++].test_func = no_fixtures_yet;
	}
	for (i = 0; i < 2; i++) {
		tests[k].name = i ? "tests/golden/ttgir: every .ttgir is listed" : "tests/data/ttgir: every .ttgir is listed";
		tests[k].test_func = all_listed;
		tests[k++].initial_state = (void *)(uintptr_t)golden_dirs[i];
	}
	for (i = 0; i < nbad; i++) {
		tests[k].name = bad_indexes[i].what;
		tests[k].test_func = index_refusal;
		tests[k++].initial_state = (void *)(uintptr_t)i;
	}
	for (i = 0; i < nfixed; i++)
		tests[k++] = fixed[i];
	rc = _cmocka_run_group_tests("topology", tests, k, NULL, NULL);
	for (i = 0; i < ng; i++) {
		free(g[i].dir);
		free(g[i].file);
		free(g[i].name);
	}
	free(g);
	free(tests);
	return rc;
}
