/* libFuzzer target: the TTGIR op counter on arbitrary bytes, against an
 * independent line-by-line reading of the rule in docs/formats.md
 * ("Topology"), for a long op name and for short ones whose occurrences
 * overlap. The count never exceeds the number of lines. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

static int value_char(char c)
{
	return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
	       c == '$' || c == '-';
}

/* Whether the line p[0..e) is an operation line of op, parsed front to
 * back: blanks, results and '=', then the op by name or in generic form. */
static int ref_line(const char *p, const char *e, const char *op, size_t oplen)
{
	while (p < e && blank(*p))
		p++;
	if (p < e && *p == '%') {
		for (;;) {
			const char *s = ++p;
			while (p < e && value_char(*p))
				p++;
			if (p == s)
				return 0;
			if (p < e && *p == ':') {
				s = ++p;
				while (p < e && digit(*p))
					p++;
				if (p == s)
					return 0;
			}
			while (p < e && blank(*p))
				p++;
			if (p < e && *p == ',') {
				p++;
				while (p < e && blank(*p))
					p++;
				if (p < e && *p == '%')
					continue;
				return 0;
			}
			if (p < e && *p == '=') {
				p++;
				while (p < e && blank(*p))
					p++;
				break;
			}
			return 0;
		}
	}
	if (p < e && *p == '"')
		return (size_t)(e - p) >= oplen + 3 && memcmp(p + 1, op, oplen) == 0 && p[oplen + 1] == '"' &&
		       p[oplen + 2] == '(';
	if ((size_t)(e - p) < oplen || memcmp(p, op, oplen) != 0)
		return 0;
	p += oplen;
	return p == e || (*p && strchr(" \t(<{:\r", *p) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ops[] = { CB_DEFAULT_TOPOLOGY_OP, "a.a", "a" };
	const char *text = (const char *)data, *end = text + size;
	long long lines = 0;
	size_t i;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	lines += size && data[size - 1] != '\n';
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		long long got = cb_ttgir_count(text, size, ops[i]), want = 0;
		const char *p = text;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *e = nl ? nl : end;
			want += ref_line(p, e, ops[i], strlen(ops[i]));
			p = nl ? nl + 1 : end;
		}
		if (got != want || got > lines)
			abort();
	}
	return 0;
}
