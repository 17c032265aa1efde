/* sha.h: SHA-256 through OpenSSL's EVP interface. */
#ifndef CB_SHA_H
#define CB_SHA_H

#include <stddef.h>

#include "caliber.h"

#define CB_SHA256_HEX 65   /* 64 hex digits and a NUL */

struct cb_sha {
	void *ctx;   /* EVP_MD_CTX */
};

int cb_sha_init(struct cb_sha *s, struct cb_err *err);
void cb_sha_update(struct cb_sha *s, const void *data, size_t len);
/* Write the digest as lowercase hex and release the context. */
void cb_sha_final_hex(struct cb_sha *s, char hex[CB_SHA256_HEX]);
void cb_sha_release(struct cb_sha *s);

int cb_sha256_hex(const void *data, size_t len, char hex[CB_SHA256_HEX], struct cb_err *err);
/* Digest of a file's bytes, read in blocks (memory does not grow with size). */
int cb_sha256_file(const char *path, char hex[CB_SHA256_HEX], struct cb_err *err);
/* cb_sha256_file that also hands each block it hashes to feed(arg, p, n),
 * in order, so a caller can process a file's bytes in the same read
 * (feed NULL: none). */
int cb_sha256_file_fed(const char *path, char hex[CB_SHA256_HEX],
		       void (*feed)(void *arg, const char *p, size_t n), void *arg, struct cb_err *err);

/* Whether s is exactly n lowercase hex digits (the canonical form of git
 * commits and SHA-256 digests, so comparisons are plain strcmp). */
int cb_is_hex(const char *s, size_t n);
/* The value of the hex digit c (either case), -1 for any other character. */
int cb_hex_value(char c);

#endif
