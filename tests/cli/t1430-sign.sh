#!/bin/sh
# Signed seals (issue 14, item 18): `run --sign-key` signs SHA256SUMS with an
# Ed25519 key into SHA256SUMS.sig and prints the seal's digest; `verify
# --key` checks the signature, which OpenSSL itself accepts too; a receipt
# edited and hashed again, a flipped byte of SHA256SUMS, another key and a
# missing signature are each refused with exact messages. Keys are made by
# `openssl genpkey`; the campaign is the CPU test campaign of t0900.
. "$(dirname "$0")/lib.sh"

D="$CALIBER_ROOT/tests/data/campaign-cpu"
W="$CALIBER_ROOT/tests/workers"
export D W

setup='
keys() {
	openssl genpkey -algorithm ed25519 -out key.pem 2>/dev/null && openssl pkey -in key.pem -pubout -out pub.pem &&
	openssl genpkey -algorithm ed25519 -out other.pem 2>/dev/null && openssl pkey -in other.pem -pubout -out otherpub.pem
}
fp() { openssl pkey -pubin -in "$1" -outform DER | sha256sum | cut -c1-64; }
signed_run() {
	$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	{ [ -d frozen ] || $CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null; } &&
	TMPDIR=$T $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root out --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" "$@"
}
'
export setup

if ! command -v openssl >/dev/null 2>&1; then
	test_skip 'signed seals' 'no openssl command here (make deps installs it)'
	exit 0
fi

test_expect_success 'run --sign-key signs the seal; verify --key checks it; OpenSSL agrees' '
	eval "$setup" && keys && signed_run --sign-key key.pem >stdout &&
	d=$(sha256sum <out/SHA256SUMS | cut -c1-64) &&
	grep -qx "run: seal: SHA256SUMS sha256 $d, signed in SHA256SUMS.sig (record it elsewhere to anchor the run)" stdout &&
	printf "caliber-signature 1\nalgorithm ed25519\nkey sha256:%s\nsums sha256:%s\n" "$(fp pub.pem)" "$d" >want &&
	head -4 out/SHA256SUMS.sig | cmp want - &&
	$CALIBER verify out --key pub.pem >got &&
	printf "%s\n" "seal: format 2, SHA256SUMS sha256 $d" "signature: holds, key sha256:$(fp pub.pem) ($PWD/pub.pem)" \
		"verify: $PWD/out: seal holds ($(($(wc -l <out/SHA256SUMS) - 1)) files)" >want &&
	cmp want got &&
	sed -n "s/^signature //p" out/SHA256SUMS.sig | python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read().strip()))" >sig.bin &&
	openssl pkeyutl -verify -pubin -inkey pub.pem -rawin -in out/SHA256SUMS -sigfile sig.bin &&
	$CALIBER verify out | grep -qx "signature: SHA256SUMS.sig by key sha256:$(fp pub.pem), not checked (--key PUB.pem checks it)"
'

test_expect_success 'a receipt edited and its line hashed again: the files hold, the signature does not' '
	eval "$setup" && keys && signed_run --sign-key key.pem --quiet >/dev/null && chmod -R u+w out &&
	signed=$(sha256sum <out/SHA256SUMS | cut -c1-64) &&
	sed -i "s/\"verdict\": \"G\"/\"verdict\": \"B\"/" out/tasks/gain/task.json &&
	h=$(sha256sum <out/tasks/gain/task.json | cut -c1-64) &&
	sed -i "s|^[0-9a-f]*  tasks/gain/task.json\$|$h  tasks/gain/task.json|" out/SHA256SUMS &&
	now=$(sha256sum <out/SHA256SUMS | cut -c1-64) &&
	$CALIBER verify out >got && grep -qx "seal: format 2, SHA256SUMS sha256 $now" got &&
	printf "%s\n" "caliber: verify: $PWD/out/SHA256SUMS.sig: SHA256SUMS changed since it was signed (signed sha256:$signed, now sha256:$now)" >want &&
	expect_refusal 6 want $CALIBER verify out --key pub.pem &&
	! grep -q "seal holds" "$T/.out"
'

test_expect_success 'a flipped byte of SHA256SUMS: the seal and the signature fail together' '
	eval "$setup" && keys && signed_run --sign-key key.pem --quiet >/dev/null && chmod -R u+w out &&
	signed=$(sha256sum <out/SHA256SUMS | cut -c1-64) &&
	c=$(head -c1 out/SHA256SUMS) && if [ "$c" = 0 ]; then r=1; else r=0; fi &&
	printf "%s" $r | dd of=out/SHA256SUMS bs=1 seek=0 conv=notrunc 2>/dev/null &&
	now=$(sha256sum <out/SHA256SUMS | cut -c1-64) && first=$(head -1 out/SHA256SUMS | cut -c67-) &&
	printf "%s\n" "caliber: verify: $PWD/out: seal does not hold: 1 changed, 0 missing, 0 extra, 0 symlinks, 0 special files" >want &&
	expect_refusal 6 want $CALIBER verify out --key pub.pem &&
	grep -qx "changed: $first" "$T/.out" &&
	grep -qx "signature: $PWD/out/SHA256SUMS.sig: SHA256SUMS changed since it was signed (signed sha256:$signed, now sha256:$now)" "$T/.out"
'

test_expect_success 'another key, and no signature at all, are refused' '
	eval "$setup" && keys && signed_run --sign-key key.pem --quiet >/dev/null &&
	printf "%s\n" "caliber: verify: $PWD/out/SHA256SUMS.sig: signed by key sha256:$(fp pub.pem), not by $PWD/otherpub.pem (key sha256:$(fp otherpub.pem))" >want &&
	expect_refusal 6 want $CALIBER verify out --key otherpub.pem &&
	chmod u+w out && rm out/SHA256SUMS.sig &&
	$CALIBER verify out >/dev/null &&
	printf "%s\n" "caliber: verify: $PWD/out: not signed (no SHA256SUMS.sig), and --key $PWD/pub.pem asks for a signature" >want &&
	expect_refusal 6 want $CALIBER verify out --key pub.pem
'

test_expect_success 'a bad signature file is refused with its line' '
	eval "$setup" && keys && signed_run --sign-key key.pem --quiet >/dev/null && chmod -R u+w out &&
	sed -i "s/^algorithm ed25519$/algorithm rsa/" out/SHA256SUMS.sig &&
	printf "%s\n" "caliber: verify: $PWD/out/SHA256SUMS.sig:2: expected '"'"'algorithm ed25519'"'"'" >want &&
	expect_refusal 6 want $CALIBER verify out --key pub.pem
'

test_expect_success 'keys that cannot do the job are refused before any work' '
	eval "$setup" && keys && echo "not a key" >junk.pem &&
	openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 -out rsa.pem 2>/dev/null &&
	printf "%s\n" "caliber: run: --sign-key: $PWD/pub.pem: not a PEM private (unencrypted) key" >want &&
	expect_refusal 2 want signed_run --sign-key pub.pem && test ! -e out &&
	printf "%s\n" "caliber: run: --sign-key: $PWD/rsa.pem: not an Ed25519 key (openssl genpkey -algorithm ed25519 makes one)" >want &&
	expect_refusal 2 want signed_run --sign-key rsa.pem && test ! -e out &&
	signed_run --quiet >/dev/null &&
	printf "%s\n" "caliber: verify: --key: $PWD/key.pem: a private key; verify takes the public one (openssl pkey -in KEY -pubout)" >want &&
	expect_refusal 1 want $CALIBER verify out --key key.pem &&
	printf "%s\n" "caliber: verify: --key: $PWD/junk.pem: not a PEM public key" >want &&
	expect_refusal 1 want $CALIBER verify out --key junk.pem
'

test_expect_success 'verify --key round trip: signed at run, holds for its key, fails for another and after an edit, holds after git clone' '
	eval "$setup" && keys && signed_run --sign-key key.pem --quiet >/dev/null &&
	d=$(sha256sum <out/SHA256SUMS | cut -c1-64) && files=$(($(wc -l <out/SHA256SUMS) - 1)) &&
	printf "%s\n" "seal: format 2, SHA256SUMS sha256 $d" "signature: holds, key sha256:$(fp pub.pem) ($PWD/pub.pem)" \
		"verify: $PWD/out: seal holds ($files files)" >want &&
	$CALIBER verify out --key pub.pem >got && cmp want got &&
	printf "%s\n" "caliber: verify: $PWD/out/SHA256SUMS.sig: signed by key sha256:$(fp pub.pem), not by $PWD/otherpub.pem (key sha256:$(fp otherpub.pem))" >want &&
	expect_refusal 6 want $CALIBER verify out --key otherpub.pem &&
	git init -q repo && cp -R out repo/run && git -C repo add run &&
	git -C repo -c user.name=t -c user.email=t@example.com commit -qm run && git clone -q repo clone &&
	printf "%s\n" "seal: format 2, SHA256SUMS sha256 $d" "signature: holds, key sha256:$(fp pub.pem) ($PWD/pub.pem)" \
		"verify: $PWD/clone/run: seal holds ($files files)" >want &&
	$CALIBER verify clone/run --key pub.pem >got && cmp want got &&
	sed -i "s/\"verdict\": \"G\"/\"verdict\": \"B\"/" clone/run/tasks/gain/task.json &&
	h=$(sha256sum <clone/run/tasks/gain/task.json | cut -c1-64) &&
	sed -i "s|^[0-9a-f]*  tasks/gain/task.json\$|$h  tasks/gain/task.json|" clone/run/SHA256SUMS &&
	now=$(sha256sum <clone/run/SHA256SUMS | cut -c1-64) &&
	$CALIBER verify clone/run >/dev/null &&
	printf "%s\n" "caliber: verify: $PWD/clone/run/SHA256SUMS.sig: SHA256SUMS changed since it was signed (signed sha256:$d, now sha256:$now)" >want &&
	expect_refusal 6 want $CALIBER verify clone/run --key pub.pem
'

test_expect_success 'reaccount --key checks the signature as verify --key does' '
	eval "$setup" && keys && signed_run --sign-key key.pem --quiet >/dev/null &&
	$CALIBER reaccount out --floor 0 --output d1 --key pub.pem >got &&
	head -1 got | grep -qx "signature: holds, key sha256:$(fp pub.pem) ($PWD/pub.pem)" &&
	grep -q "^equivalence: holds" got && test -f d1/derived.json &&
	printf "%s\n" "caliber: reaccount: $PWD/out/SHA256SUMS.sig: signed by key sha256:$(fp pub.pem), not by $PWD/otherpub.pem (key sha256:$(fp otherpub.pem))" >want &&
	expect_refusal 1 want $CALIBER reaccount out --floor 0 --output d2 --key otherpub.pem && test ! -e d2 &&
	printf "%s\n" "caliber: reaccount: --key: $PWD/key.pem: a private key; verify takes the public one (openssl pkey -in KEY -pubout)" >want &&
	expect_refusal 1 want $CALIBER reaccount out --floor 0 --output d2 --key key.pem && test ! -e d2 &&
	chmod u+w out && mv out/SHA256SUMS.sig sig &&
	printf "%s\n" "caliber: reaccount: $PWD/out: not signed (no SHA256SUMS.sig), and --key $PWD/pub.pem asks for a signature" >want &&
	expect_refusal 1 want $CALIBER reaccount out --floor 0 --output d2 --key pub.pem && test ! -e d2
'

test_expect_success 'SHA256SUMS.sig as a symlink is named and never followed' '
	eval "$setup" && keys && signed_run --sign-key key.pem --quiet >/dev/null &&
	chmod u+w out && mv out/SHA256SUMS.sig real.sig && ln -s "$PWD/real.sig" out/SHA256SUMS.sig &&
	printf "%s\n" "caliber: verify: $PWD/out: seal does not hold: 0 changed, 0 missing, 0 extra, 1 symlinks, 0 special files" >want &&
	expect_refusal 6 want $CALIBER verify out --key pub.pem &&
	grep -qx "symlink: SHA256SUMS.sig -> $PWD/real.sig" "$T/.out" &&
	grep -qx "signature: $PWD/out/SHA256SUMS.sig: a symlink, not a signature (never followed)" "$T/.out" &&
	printf "%s\n" "caliber: reaccount: $PWD/out/SHA256SUMS.sig: a symlink, not a signature (never followed)" >want &&
	expect_refusal 1 want $CALIBER reaccount out --floor 0 --output d --key pub.pem && test ! -e d
'

test_expect_success 'a private key that group or others can read is refused before any work' '
	eval "$setup" && keys && chmod 644 key.pem &&
	printf "%s\n" "caliber: run: --sign-key: $PWD/key.pem: mode 0644: a private key must be its owner'"'"'s alone (chmod 600 $PWD/key.pem)" >want &&
	expect_refusal 2 want signed_run --sign-key key.pem && test ! -e out
'
