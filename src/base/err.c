/* err.c: the error idiom of caliber.h, and the build's identity. */
#include "caliber.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "version.h"

/* The formatted message into err->msg, ending in "..." when it is too long. */
static void put(struct cb_err *err, const char *fmt, va_list ap) CB_PRINTF(2, 0);
static void put(struct cb_err *err, const char *fmt, va_list ap)
{
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);

	if (n >= (int)sizeof(err->msg))
		memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
}

int cb_fail(struct cb_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	put(err, fmt, ap);
	va_end(ap);
	err->code = CB_ERR_FAIL;
	return -1;
}

int cb_fail_code(struct cb_err *err, enum cb_err_code code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	put(err, fmt, ap);
	va_end(ap);
	err->code = code;
	return -1;
}

int cb_prefix(struct cb_err *err, const char *fmt, ...)
{
	char prefix[CB_ERR_MAX], old[CB_ERR_MAX];
	va_list ap;
	int n;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	n = snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
	if (n >= (int)sizeof(err->msg))
		memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
	if (err->code == CB_ERR_NONE)
		err->code = CB_ERR_FAIL;
	return -1;
}

const char *cb_version(void)
{
	return CALIBER_VERSION;
}

const char *cb_commit(void)
{
	return CALIBER_COMMIT;
}
