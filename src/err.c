/* err.c: the error idiom of caliber.h, and the build's identity. */
#include "caliber.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "version.h"

int cb_fail(struct cb_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int cb_prefix(struct cb_err *err, const char *fmt, ...)
{
	char prefix[CB_ERR_MAX];
	char old[CB_ERR_MAX];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
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
