/* libFuzzer target: the seal's text, over arbitrary bytes: SHA256SUMS
 * (sums.h), SEAL and SHA256SUMS.sig (sign.h). What SHA256SUMS accepts keeps
 * the promises verify relies on: no more lines than newlines, 64 lowercase
 * hex digits each, paths not empty and sorted with none listed twice (so
 * that a merge with the tree cannot misname a file), every path found by
 * cb_sums_find; what SEAL accepts has a line count and folders sorted once. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seal/sign.h"
#include "seal/sums.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct cb_sums s;
	struct cb_seal_record r;
	struct cb_signature sig;
	struct cb_err err;
	size_t i, lines = 0;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (cb_sums_parse(buf, size, "SHA256SUMS", &s, &err) == 0) {
		if (s.n > lines)
			abort();
		for (i = 0; i < s.n; i++) {
			if (!cb_is_hex(s.v[i].hex, 64) || !*s.v[i].rel || s.v[i].line < 1 || s.v[i].line > lines ||
			    (i && strcmp(s.v[i - 1].rel, s.v[i].rel) >= 0) || cb_sums_find(&s, s.v[i].rel) != i)
				abort();
		}
		cb_sums_release(&s);
	} else if (s.v || s.n || strncmp(err.msg, "SHA256SUMS", 10) != 0) {
		abort();
	}
	if (cb_seal_record_parse(buf, size, "SEAL", &r, &err) == 0) {
		if (r.format != CB_SEAL_FORMAT || r.files == 0 || r.ndirs + 2 > lines + 1)
			abort();
		for (i = 1; i < r.ndirs; i++)
			if (strcmp(r.dirs[i - 1], r.dirs[i]) >= 0 || !cb_sums_listable(r.dirs[i]))
				abort();
		cb_seal_record_release(&r);
	}
	if (cb_signature_parse(buf, size, "SHA256SUMS.sig", &sig, &err) == 0 &&
	    (!cb_is_hex(sig.key, 64) || !cb_is_hex(sig.sums, 64)))
		abort();
	return 0;
}
