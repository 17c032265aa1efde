#!/bin/sh
# scripts/check_includes.sh [ROOT]: hold every #include of ROOT/src (default:
# this checkout) against the rules of its folders. Each folder of src/ has a
# README whose second line says "May include: A, B." (the folders its files
# may include, or "nothing of src/ ...") and whose third line says "Included
# by: C, D." (every folder, or main.c, that includes it). A file includes
# another folder's header as "folder/name.h" and its own folder's as
# "name.h"; caliber.h (src/) and version.h (the build's) are everyone's.
# Prints each breach as FILE:LINE: why, and a summary; exits 1 on any.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root/src" || { echo "check_includes: no src/ in $root" >&2; exit 2; }
rules=$(mktemp) || exit 2
trap 'rm -f "$rules"' EXIT
for r in */README; do
	[ -f "$r" ] || continue
	printf '%s\t%s\t%s\n' "${r%/README}" "$(sed -n 2p "$r")" "$(sed -n 3p "$r")"
done >"$rules" || exit 2
for f in */*.c */*.h main.c caliber.h; do
	[ -f "$f" ] || continue
	grep -n '^#include "' "$f" | sed "s|^|$f:|"
done | awk -F'\t' -v rules="$rules" '
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t.]+$/, "", s); return s }
function list(s, arr,   n, i, parts) {
	sub(/^[^:]*:/, "", s)
	n = split(s, parts, ",")
	for (i = 1; i <= n; i++) arr[trim(parts[i])] = 1
}
function exists(p,   line, r) { r = (getline line < p) >= 0; close(p); return r }
BEGIN {
	FS = "\t"
	while ((getline line < rules) > 0) {
		split(line, r, "\t")
		folders[r[1]] = 1
		if (r[2] !~ /^May include:/ || r[3] !~ /^Included by:/) {
			print "src/" r[1] "/README: lines 2 and 3 must say \"May include: ...\" and \"Included by: ...\""
			bad++
		}
		if (r[2] !~ /nothing of src/) { split("", tmp); list(r[2], tmp); for (k in tmp) may[r[1], k] = 1 }
		split("", tmp); list(r[3], tmp); for (k in tmp) by[r[1], k] = 1
	}
	FS = ":"
}
{
	file = $1; lineno = $2
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
	n++
	if (index(file, "/")) { from = substr(file, 1, index(file, "/") - 1) } else { from = file }
	if (!(from in folders) && from != "main.c" && from != "caliber.h") {
		print "src/" file ": in a folder without a README (src/" from "/README)"; bad++; next
	}
	if (inc == "caliber.h" || inc == "version.h") next
	if (index(inc, "/")) {
		to = substr(inc, 1, index(inc, "/") - 1)
		if (!exists(inc)) { print "src/" file ":" lineno ": includes " inc ", which does not exist"; bad++; next }
		if (to == from) { print "src/" file ":" lineno ": includes its own folder as " inc " (write \"" substr(inc, length(to) + 2) "\")"; bad++; next }
		if (from == "caliber.h") { print "src/caliber.h:" lineno ": includes " inc " (caliber.h includes nothing of src/)"; bad++; next }
		if (from != "main.c" && !((from, to) in may)) {
			print "src/" file ":" lineno ": includes " inc ", but src/" from "/README does not allow " to; bad++
		}
		if (!((to, from) in by)) {
			print "src/" file ":" lineno ": includes " inc ", but src/" to "/README does not name " from " among its includers"; bad++
		}
	} else if (from == "main.c" || from == "caliber.h" || !exists(from "/" inc)) {
		print "src/" file ":" lineno ": includes \"" inc "\", which is not in its own folder (write folder/" inc ")"; bad++
	}
}
END {
	if (bad) { print "check_includes: " bad " breach(es) of the folder rules"; exit 1 }
	nf = 0; for (k in folders) nf++
	print "check_includes: " n " includes hold the rules of " nf " folders"
}'
