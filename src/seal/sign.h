/* sign.h: signed seals. Whoever can edit a receipt can hash SHA256SUMS
 * again; a signature over SHA256SUMS by a key kept elsewhere is what anchors
 * a run. Ed25519 through OpenSSL's EVP interface, keys in PEM as `openssl
 * genpkey -algorithm ed25519` writes them. The signature file
 * (SHA256SUMS.sig, beside SHA256SUMS and, like it, outside the list) is
 * described in docs/formats.md, "Signed seal". */
#ifndef CB_SIGN_H
#define CB_SIGN_H

#include <stddef.h>

#include "caliber.h"
#include "base/sha.h"

#define CB_SIG_FILE "SHA256SUMS.sig"

/* SHA256SUMS.sig parsed. */
struct cb_signature {
	char key[CB_SHA256_HEX];    /* fingerprint: SHA-256 of the public key (DER SubjectPublicKeyInfo) */
	char sums[CB_SHA256_HEX];   /* SHA-256 of the SHA256SUMS signed */
	unsigned char sig[64];      /* the Ed25519 signature of SHA256SUMS's bytes */
};

/* Check that path holds an unencrypted Ed25519 private key in PEM, so that
 * a run refuses a bad --sign-key before it starts, not when it seals. */
int cb_sign_key_check(const char *path, struct cb_err *err);

/* The text of SHA256SUMS.sig: the signature of sums (len bytes) by the
 * private key in key_path. Caller frees *out. */
int cb_sign(const char *key_path, const char *sums, size_t len, char **out, size_t *out_len,
	    struct cb_err *err);

/* Parse SHA256SUMS.sig (name is used in errors, as "name:line: what"). */
int cb_signature_parse(const char *buf, size_t len, const char *name, struct cb_signature *sig,
		       struct cb_err *err);

/* The fingerprint of the public key in pub_path (PEM). */
int cb_key_fingerprint(const char *pub_path, char hex[CB_SHA256_HEX], struct cb_err *err);

/* Whether sig is a signature of sums (len bytes) by the public key in
 * pub_path: 0 when it holds; -1 with err saying why not (another key,
 * SHA256SUMS changed since it was signed, a signature that does not hold),
 * or why it could not be checked. sig_name names the signature file. */
int cb_signature_check(const struct cb_signature *sig, const char *sig_name, const char *pub_path,
		       const char *sums, size_t len, struct cb_err *err);

#endif
