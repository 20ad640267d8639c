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

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fails=$((fails + 1))
	fi
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
echo "1..10"

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

exit $((fails > 0))
