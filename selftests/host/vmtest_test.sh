#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the rig (tools/vmtest) and of the guard that keeps guest
# tests off the host kernel. TAP output.

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
vmtest=tools/vmtest
n=0
fails=0
last=$(date +%s)

# ok STATUS NAME: a TAP line, then how long the test took (since the last).
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fails=$((fails + 1))
	fi
	echo "#   took $(( $(date +%s) - last ))s"
	last=$(date +%s)
}

# expect NAME WANT_STATUS WANT_TEXT CMD...: CMD exits WANT_STATUS and prints
# WANT_TEXT (an extended regex) on stdout or stderr.
expect() {
	local name=$1 want=$2 text=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$text" <<<"$out"; then
		ok 0 "$name"
	else
		echo "# wanted status $want and /$text/, got status $rc:"
		tail -n 15 <<<"$out" | sed 's/^/#   /'
		ok 1 "$name"
	fi
}

echo "TAP version 13"
echo "1..16"

expect "vmtest: no command is a usage error" 125 "usage:" $vmtest
expect "vmtest: unknown option is a usage error" 125 "unknown argument" $vmtest --frobnicate -- true
expect "vmtest: bad --smp is refused" 125 "--smp wants" $vmtest --smp two -- true
expect "vmtest: bad --timeout is refused" 125 "--timeout wants" $vmtest --timeout -1 -- true
expect "guest test refuses to run on the host" 4 "refusing to run" selftests/guest/dev_test

expect "vmtest: the command's exit status comes back" 3 "status 3" \
	$vmtest --no-module --timeout 300 -- sh -c 'exit 3'

# A tiny module whose init WARNs: the command succeeds, the rig must fail.
wdir=$repo/.cache/warnmod
rm -rf "$wdir"
mkdir -p "$wdir"
cat >"$wdir/warnmod.c" <<'MOD'
#include <linux/module.h>
static int __init warnmod_init(void)
{
	WARN_ON(1);
	return 0;
}
module_init(warnmod_init);
MODULE_LICENSE("GPL");
MOD
echo 'obj-m := warnmod.o' >"$wdir/Kbuild"
kver=$(tools/kver)
if make -C "/lib/modules/$kver/build" M="$wdir" modules >"$wdir/build.log" 2>&1; then
	expect "vmtest: a kernel WARNING in the guest fails the run" 126 "kernel report" \
		$vmtest --no-module --timeout 300 -- insmod "$wdir/warnmod.ko"
else
	sed 's/^/# /' "$wdir/build.log" | tail -n 10
	ok 1 "vmtest: a kernel WARNING in the guest fails the run (module did not build)"
fi

expect "vmtest: timeout kills the guest" 124 "timeout after" \
	$vmtest --no-module --timeout 30 -- sleep 1000

# No guest starts a command in 3 s: killed, booted again, then given up.
expect "vmtest: a boot that does not start the command is tried twice" 125 \
	"after [0-9]+s \(boots: 2\)" env VMTEST_BOOT_S=3 $vmtest --no-module -- true
expect "vmtest: bad VMTEST_BOOT_S is refused" 125 "VMTEST_BOOT_S wants" \
	env VMTEST_BOOT_S=soon $vmtest --no-module -- true

expect "vmtest: bad --hosts is refused" 125 "--hosts wants" $vmtest --hosts 3 -- true
expect "vmtest: --kver2 without two hosts is refused" 125 "it needs --hosts 2" \
	$vmtest --kver2 "$(tools/kver)" -- true

# Two guests: each meets the other over the link with tools/vmtest-barrier
# (and gets the other's address as its value), sees nothing but the link,
# and ordmacp copies a file from host 2 to host 1 over rxe0, checked by
# its sum. Host 1 exits 0, host 2 with 7: the status is host 2's.
two=$(cat <<'GUEST'
set -u
peer=$(tools/vmtest-barrier hello "$VMTEST_ADDR") || exit 1
[ "$peer" = "$VMTEST_PEER" ] && echo "host $VMTEST_HOST met $peer"
ip -o -4 addr show | awk '$2 != "lo" { print "addr", $2, $4 }'
ip -4 route show | grep -q default && echo "a default route"
rdma link show | grep -q '^link rxe0/1 .*netdev ordma0' && echo "rxe0 on ordma0"
if [ "$VMTEST_HOST" = 1 ]; then
	tools/ordmacp --listen "$VMTEST_ADDR:7000" 2>/tmp/two-l &
	l=$!
	for _ in $(seq 300); do
		grep -q listening /tmp/two-l && break
		sleep 0.1
	done
	tools/vmtest-barrier listening >/dev/null || exit 1
	sum=$(tools/vmtest-barrier copied) || exit 1
	wait $l
	[ "$(md5sum </tmp/two-dst | cut -d' ' -f1)" = "$sum" ] &&
		echo "copy arrived whole"
	exit 0
fi
head -c 3000000 /dev/urandom >/tmp/two-src
tools/vmtest-barrier listening >/dev/null || exit 1
tools/ordmacp -q /tmp/two-src "$VMTEST_PEER:7000:/tmp/two-dst" || exit 1
tools/vmtest-barrier copied "$(md5sum </tmp/two-src | cut -d' ' -f1)" >/dev/null
exit 7
GUEST
)
out=$($vmtest --hosts 2 --smp 1 --timeout 600 -- bash -c "$two" 2>&1)
rc=$?
bad=
[ "$rc" = 7 ] || bad="status $rc"
for want in "# ===== host 1" "# ===== host 2" "host 1 met 192.0.2.2" \
	    "host 2 met 192.0.2.1" "addr ordma0 192.0.2.1/24" \
	    "addr ordma0 192.0.2.2/24" "rxe0 on ordma0" "copy arrived whole"; do
	grep -qF -- "$want" <<<"$out" || bad="$bad; no '$want'"
done
[ "$(grep -c '^addr ' <<<"$out")" = 2 ] || bad="$bad; another address than ordma0's"
grep -q "a default route" <<<"$out" && bad="$bad; a default route"
if [ -z "$bad" ]; then
	ok 0 "vmtest --hosts 2: the guests meet over the link alone, ordmacp crosses it, host 2's status comes back"
else
	echo "# $bad"
	tail -n 25 <<<"$out" | sed 's/^/#   /'
	ok 1 "vmtest --hosts 2: the guests meet over the link alone, ordmacp crosses it, host 2's status comes back"
fi

# Host 2's console is read too: its WARNING fails the run, named.
if [ -f "$wdir/warnmod.ko" ]; then
	expect "vmtest --hosts 2: a kernel WARNING in host 2 fails the run" 126 \
		"host 2: kernel report" \
		$vmtest --hosts 2 --smp 1 --no-module --timeout 300 -- \
		sh -c '[ "$VMTEST_HOST" = 1 ] || insmod "$0"' "$wdir/warnmod.ko"
else
	ok 1 "vmtest --hosts 2: a kernel WARNING in host 2 fails the run (module did not build)"
fi

# Host 2 crashes with its command running: host 1, waiting for it, is
# stopped at once, not at the deadline (300 s; status 124 then).
expect "vmtest --hosts 2: a host that crashes stops the other at once" 125 \
	"host 1: stopped, as host 2 crashed" \
	$vmtest --hosts 2 --smp 1 --no-module --timeout 300 -- \
	sh -c 'if [ "$VMTEST_HOST" = 1 ]; then sleep 1000; else echo c >/proc/sysrq-trigger; fi'

# A guest booted again: host 2 vanishes asking for it (tools/vmtest-vanish
# --restart); its second boot, told by VMTEST_BOOT=2, meets host 1, which
# ran on, over the link, and WARNs. Both boots' outputs come back, and the
# second boot's console is read: the report is named as its own.
again=$(cat <<'GUEST'
if [ "$VMTEST_HOST" = 1 ]; then
	b=$(tools/vmtest-barrier -t 240 again "$VMTEST_BOOT") || exit 1
	echo "host 1 in boot $VMTEST_BOOT met host 2 in boot $b"
	exit 0
fi
if [ "$VMTEST_BOOT" = 1 ]; then
	echo "host 2 vanishes"
	tools/vmtest-vanish --restart
	exit 1
fi
b=$(tools/vmtest-barrier -t 240 again "$VMTEST_BOOT") || exit 1
echo "host 2 in boot $VMTEST_BOOT met host 1 in boot $b"
[ "$(rdma link show | grep -c '^link rxe0/1 .*netdev ordma0')" = 1 ] &&
	ip -o -4 addr show ordma0 | grep -q 192.0.2.2/24 && echo "rxe0 again"
[ -f "$0" ] && insmod "$0"
GUEST
)
if [ -f "$wdir/warnmod.ko" ]; then
	out=$($vmtest --hosts 2 --smp 1 --no-module --timeout 600 -- \
		bash -c "$again" "$wdir/warnmod.ko" 2>&1)
	rc=$?
	bad=
	[ "$rc" = 126 ] || bad="status $rc"
	for want in "# ===== host 2" "host 2 vanishes" "# ===== host 2, boot 2" \
		    "host 1 in boot 1 met host 2 in boot 2" \
		    "host 2 in boot 2 met host 1 in boot 1" "rxe0 again" \
		    "host 2, boot 2: kernel report"; do
		grep -qF -- "$want" <<<"$out" || bad="$bad; no '$want'"
	done
	grep -qF "host 2: kernel report" <<<"$out" && bad="$bad; a report in boot 1"
	grep -qF "# ===== host 1, boot 2" <<<"$out" && bad="$bad; host 1 booted again"
else
	bad="warnmod did not build"
fi
if [ -z "$bad" ]; then
	ok 0 "vmtest --hosts 2: vmtest-vanish --restart boots host 2 again while host 1 runs on, both boots checked"
else
	echo "# $bad"
	tail -n 25 <<<"$out" | sed 's/^/#   /'
	ok 1 "vmtest --hosts 2: vmtest-vanish --restart boots host 2 again while host 1 runs on, both boots checked"
fi

exit $((fails > 0))
