/* sha.c: SHA-256 through OpenSSL EVP. */
#include "sha.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* OpenSSL 3 looks EVP_sha256() up in its provider tables, under a lock, at
 * every init that names it; verifying a run inits once a file, from
 * several threads, so the implementation is fetched once and kept. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

int cb_sha_init(struct cb_sha *s, struct cb_err *err)
{
	EVP_MD_CTX *ctx;

	pthread_once(&sha256_once, fetch_sha256);
	ctx = sha256_md ? EVP_MD_CTX_new() : NULL;
	if (!ctx || EVP_DigestInit_ex(ctx, sha256_md, NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		s->ctx = NULL;
		return cb_fail(err, "sha256: cannot initialise OpenSSL digest");
	}
	s->ctx = ctx;
	return 0;
}

void cb_sha_update(struct cb_sha *s, const void *data, size_t len)
{
	EVP_DigestUpdate(s->ctx, data, len);
}

void cb_sha_final_hex(struct cb_sha *s, char hex[CB_SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	EVP_DigestFinal_ex(s->ctx, md, &n);
	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * n] = '\0';
	cb_sha_release(s);
}

void cb_sha_release(struct cb_sha *s)
{
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
}

int cb_sha256_hex(const void *data, size_t len, char hex[CB_SHA256_HEX], struct cb_err *err)
{
	struct cb_sha s;

	if (cb_sha_init(&s, err) < 0)
		return -1;
	cb_sha_update(&s, data, len);
	cb_sha_final_hex(&s, hex);
	return 0;
}

int cb_sha256_file(const char *path, char hex[CB_SHA256_HEX], struct cb_err *err)
{
	return cb_sha256_file_fed(path, hex, NULL, NULL, err);
}

/* 128 KiB a read: a run's TTGIR files are mostly smaller, so most files
 * take one read and the read that sees the end (two system calls, not
 * three; they are much of a verify's time on a virtual machine).
 * O_NONBLOCK: a file swapped for a FIFO after the walk listed it reads as
 * empty (and so changed) instead of hanging the open. */
int cb_sha256_file_fed(const char *path, char hex[CB_SHA256_HEX],
		       void (*feed)(void *arg, const char *p, size_t n), void *arg, struct cb_err *err)
{
	char buf[1 << 17];
	struct cb_sha s;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return cb_fail(err, "%s: %s", path, strerror(errno));
	if (cb_sha_init(&s, err) < 0) {
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			cb_sha_release(&s);
			return cb_fail(err, "%s: read: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		cb_sha_update(&s, buf, (size_t)r);
		if (feed)
			feed(arg, buf, (size_t)r);
	}
	close(fd);
	cb_sha_final_hex(&s, hex);
	return 0;
}

int cb_is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
	}
	return s[n] == '\0';
}

int cb_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
