#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/layers, the layer check of `make lint`: it passes on kernel/ as it
# is, and fails, naming the file, on a copy where a lower layer calls a
# higher one, includes a header of a higher layer, or two files call each
# other; a file in no layer fails it too. TAP output.

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
n=0
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fails=$((fails + 1))
	fi
}

# A fresh copy of kernel/ for one broken variant.
copy() {
	rm -rf "$tmp/kernel"
	cp -r kernel "$tmp/kernel"
	rm -f "$tmp"/kernel/*.mod.c
}

# refused NAME WANT: the check fails on the copy and its report has WANT.
refused() {
	local out rc
	out=$(tools/layers "$tmp/kernel" 2>&1); rc=$?
	if [ "$rc" = 1 ] && grep -qF -- "$2" <<<"$out"; then
		ok 0 "$1"
	else
		echo "# status $rc, wanted '$2' in:"
		tail -n 5 <<<"$out" | sed 's/^/#   /'
		ok 1 "$1"
	fi
}

echo "TAP version 13"
echo "1..6"

out=$(tools/layers 2>&1); rc=$?
[ "$rc" = 0 ] || sed 's/^/#   /' <<<"$out"
ok "$rc" "kernel/ as it is keeps its layers"

copy
printf '\nvoid ordma_pool_bad(struct ordma_chan *c)\n{\n\tordma_chan_kick(c);\n}\n' \
	>>"$tmp/kernel/pool.c"
refused "a call from pool.c up to chan.c" "pool.c -> chan.c goes up"

copy
sed -i 's|#include "ordma.h"|#include "chan.h"|' "$tmp/kernel/pool.c"
refused "pool.c including chan.h" "pool.c includes chan.h"

copy
sed -i 's|#include "xfer.h"|#include "xfer.h"\n#include "entry.h"|' "$tmp/kernel/wr.c"
refused "wr.c including entry.h, a header of the engine and above" "wr.c includes entry.h"

copy
printf '\nvoid ordma_rx_bad(struct ordma_chan *c)\n{\n\tordma_tx_bad(c);\n}\n' >>"$tmp/kernel/rx.c"
printf '\nvoid ordma_tx_bad(struct ordma_chan *c)\n{\n\tordma_rx_bad(c);\n}\n' >>"$tmp/kernel/tx.c"
refused "rx.c and tx.c calling each other" "cycle: rx.c -> tx.c -> rx.c"

copy
printf '// SPDX-License-Identifier: GPL-2.0\nvoid ordma_x(void)\n{\n}\n' >"$tmp/kernel/extra.c"
refused "a file in no layer" "extra.c: in no layer"

[ "$fails" -eq 0 ]
