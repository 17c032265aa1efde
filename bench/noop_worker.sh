#!/bin/sh
# A worker that does nothing: it answers every request at once (exit 0) on
# fd 3, so that what bench/overhead.sh times is caliber's own orchestration.
while read -r line; do
	echo '{"exit": 0}' >&3
done
