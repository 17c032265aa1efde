#!/bin/sh
# A worker that does nothing: it answers every request at once (exit 0) on
# fd 3, echoing the request's id (docs/formats.md), so that what
# bench/overhead.sh times is caliber's own orchestration.
while read -r line; do
	id=$(printf '%s' "$line" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
	printf '{"exit": 0, "id": "%s"}\n' "$id" >&3
done
