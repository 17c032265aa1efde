/* sign.c: Ed25519 signatures of SHA256SUMS through OpenSSL EVP (sign.h). */
#include "sign.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "base/buf.h"
#include "base/fsutil.h"

/* A key is read from a file caliber opened itself (cb_read_file: a FIFO
 * cannot hang it); an encrypted key is refused rather than prompted for. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* What OpenSSL last said, or "" (for messages). */
static void openssl_reason(char *out, size_t cap)
{
	unsigned long e = ERR_get_error();

	out[0] = '\0';
	if (e)
		ERR_error_string_n(e, out, cap);
	ERR_clear_error();
}

/* A private key that group or others may read or write is no longer only
 * its owner's: refused, as ssh refuses one, rather than used. */
static int private_key_shared(const char *path, struct cb_err *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return cb_fail(err, "%s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode) && (st.st_mode & 077))
		return cb_fail(err, "%s: mode %04o: a private key must be its owner's alone (chmod 600 %s)", path,
			       (unsigned)(st.st_mode & 07777), path);
	return 0;
}

/* The key in path: private (want_private) or public, Ed25519 either way. */
static int load_key(const char *path, int want_private, EVP_PKEY **out, struct cb_err *err)
{
	char *pem = NULL;
	size_t len;
	BIO *bio;
	EVP_PKEY *k;

	*out = NULL;
	if (cb_read_file(path, &pem, &len, err) < 0)
		return -1;
	if (len > 65536) {
		free(pem);
		return cb_fail(err, "%s: %zu bytes, too large for a PEM key", path, len);
	}
	bio = BIO_new_mem_buf(pem, (int)len);
	if (!bio) {
		free(pem);
		return cb_fail(err, "%s: out of memory", path);
	}
	k = want_private ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL)
			 : PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
	ERR_clear_error();
	if (!k && !want_private && strstr(pem, "PRIVATE KEY-----")) {
		BIO_free(bio);
		free(pem);
		return cb_fail(err, "%s: a private key; verify takes the public one (openssl pkey -in KEY -pubout)", path);
	}
	BIO_free(bio);
	free(pem);
	if (!k)
		return cb_fail(err, "%s: not a PEM %s key", path, want_private ? "private (unencrypted)" : "public");
	if (EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(k);
		return cb_fail(err, "%s: not an Ed25519 key (openssl genpkey -algorithm ed25519 makes one)", path);
	}
	if (want_private && private_key_shared(path, err) < 0) {
		EVP_PKEY_free(k);
		return -1;
	}
	*out = k;
	return 0;
}

/* SHA-256 of the key's public half in DER (SubjectPublicKeyInfo), which
 * `openssl pkey -pubin -outform DER | sha256sum` prints too. */
static int fingerprint(EVP_PKEY *k, const char *path, char hex[CB_SHA256_HEX], struct cb_err *err)
{
	unsigned char *der = NULL;
	int n = i2d_PUBKEY(k, &der), rc;

	if (n <= 0)
		return cb_fail(err, "%s: the public key cannot be encoded", path);
	rc = cb_sha256_hex(der, (size_t)n, hex, err);
	OPENSSL_free(der);
	return rc;
}

/* What signing and checking both start from: the key in path (private or
 * public), its fingerprint, and the digest of the SHA256SUMS at hand. *k is
 * the caller's to free on success. */
static int key_and_digests(const char *path, int want_private, const char *sums, size_t len, EVP_PKEY **k,
			   char fp[CB_SHA256_HEX], char digest[CB_SHA256_HEX], struct cb_err *err)
{
	if (load_key(path, want_private, k, err) < 0)
		return -1;
	if (fingerprint(*k, path, fp, err) == 0 && cb_sha256_hex(sums, len, digest, err) == 0)
		return 0;
	EVP_PKEY_free(*k);
	*k = NULL;
	return -1;
}

int cb_sign_key_check(const char *path, struct cb_err *err)
{
	EVP_PKEY *k;

	if (load_key(path, 1, &k, err) < 0)
		return -1;
	EVP_PKEY_free(k);
	return 0;
}

int cb_key_fingerprint(const char *pub_path, char hex[CB_SHA256_HEX], struct cb_err *err)
{
	EVP_PKEY *k;
	int rc;

	if (load_key(pub_path, 0, &k, err) < 0)
		return -1;
	rc = fingerprint(k, pub_path, hex, err);
	EVP_PKEY_free(k);
	return rc;
}

int cb_sign(const char *key_path, const char *sums, size_t len, char **out, size_t *out_len,
	    struct cb_err *err)
{
	struct cb_buf b = CB_BUF_INIT;
	char fp[CB_SHA256_HEX], digest[CB_SHA256_HEX];
	unsigned char sig[64];
	size_t siglen = sizeof(sig), i;
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY *k;
	int rc = -1;

	*out = NULL;
	if (key_and_digests(key_path, 1, sums, len, &k, fp, digest, err) < 0)
		return -1;
	ctx = EVP_MD_CTX_new();
	/* Ed25519 hashes the message itself: no digest is named (NULL). */
	if (!ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)sums, len) != 1 || siglen != sizeof(sig)) {
		char why[256];
		openssl_reason(why, sizeof(why));
		cb_fail(err, "%s: signing failed%s%s", key_path, why[0] ? ": " : "", why);
		goto out;
	}
	cb_buf_addf(&b, "caliber-signature 1\nalgorithm ed25519\nkey sha256:%s\nsums sha256:%s\nsignature ", fp,
		    digest);
	for (i = 0; i < sizeof(sig); i++)
		cb_buf_addf(&b, "%02x", sig[i]);
	cb_buf_adds(&b, "\n");
	if (b.oom) {
		cb_fail(err, "out of memory");
		goto out;
	}
	*out = cb_buf_detach(&b, out_len);
	rc = 0;
out:
	cb_buf_release(&b);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return rc;
}

/* The value after "<key> " on a line of exactly that key and n lowercase
 * hex digits (after an optional "sha256:"), copied into out. */
static int hex_field(const char *line, size_t len, const char *key, size_t n, char *out)
{
	size_t k = strlen(key);
	char tmp[160];

	if (len != k + n || memcmp(line, key, k) != 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, line + k, n);
	tmp[n] = '\0';
	if (!cb_is_hex(tmp, n))
		return -1;
	memcpy(out, tmp, n + 1);
	return 0;
}

int cb_signature_parse(const char *buf, size_t len, const char *name, struct cb_signature *sig,
		       struct cb_err *err)
{
	static const char *const want[] = { "caliber-signature 1", "algorithm ed25519", "key sha256:",
					    "sums sha256:", "signature " };
	const char *p = buf, *end = buf + len;
	char hex[129];
	size_t i, j;

	memset(sig, 0, sizeof(*sig));
	for (i = 0; i < 5; i++) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		size_t n = nl ? (size_t)(nl - p) : 0;
		int ok;

		if (!nl)
			return cb_fail(err, "%s:%zu: expected '%s...' on a line of its own", name, i + 1, want[i]);
		switch (i) {
		case 2: ok = hex_field(p, n, want[i], 64, sig->key) == 0; break;
		case 3: ok = hex_field(p, n, want[i], 64, sig->sums) == 0; break;
		case 4: ok = hex_field(p, n, want[i], 128, hex) == 0; break;
		default: ok = n == strlen(want[i]) && memcmp(p, want[i], n) == 0; break;
		}
		if (!ok)
			return cb_fail(err, "%s:%zu: expected '%s%s'", name, i + 1, want[i],
				       i == 2 || i == 3 ? "<64 hex digits>" : i == 4 ? "<128 hex digits>" : "");
		p = nl + 1;
	}
	if (p != end)
		return cb_fail(err, "%s:6: nothing may follow the signature", name);
	for (j = 0; j < sizeof(sig->sig); j++) {
		unsigned v;
		sscanf(hex + 2 * j, "%2x", &v);
		sig->sig[j] = (unsigned char)v;
	}
	return 0;
}

int cb_signature_check(const struct cb_signature *sig, const char *sig_name, const char *pub_path,
		       const char *sums, size_t len, struct cb_err *err)
{
	char fp[CB_SHA256_HEX], digest[CB_SHA256_HEX];
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY *k;
	int rc = -1;

	if (key_and_digests(pub_path, 0, sums, len, &k, fp, digest, err) < 0)
		return -1;
	if (strcmp(fp, sig->key) != 0) {
		cb_fail(err, "%s: signed by key sha256:%s, not by %s (key sha256:%s)", sig_name, sig->key, pub_path, fp);
		goto out;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) != 1) {
		cb_fail(err, "%s: cannot check a signature: out of memory", sig_name);
		goto out;
	}
	if (EVP_DigestVerify(ctx, sig->sig, sizeof(sig->sig), (const unsigned char *)sums, len) != 1) {
		ERR_clear_error();
		if (strcmp(digest, sig->sums) != 0)
			cb_fail(err, "%s: SHA256SUMS changed since it was signed (signed sha256:%s, now sha256:%s)",
				sig_name, sig->sums, digest);
		else
			cb_fail(err, "%s: the signature does not hold for key sha256:%s", sig_name, fp);
		goto out;
	}
	if (strcmp(digest, sig->sums) != 0) {
		cb_fail(err, "%s: its sums line (sha256:%s) does not name the SHA256SUMS it signs (sha256:%s)", sig_name,
			sig->sums, digest);
		goto out;
	}
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return rc;
}
