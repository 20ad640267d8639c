#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages (make deb), used without installing them: each is
# unpacked into a throwaway root under out/deb-test/, DKMS builds ordma.ko
# from ordma-dkms's source for every installed Debian kernel in a tree of
# its own (--dkmstree, --sourcetree), the examples build against the
# unpacked libordma-dev through pkg-config, and a guest loads the module
# DKMS built and carries messages through it. Nothing is installed on this
# machine, and no module is loaded into its kernel. TAP output.

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
t=$repo/out/deb-test
root=$t/root
dtree=$t/dkms
n=0
last=$(date +%s)

# ok STATUS NAME: a TAP line, then how long the test took (since the last).
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
	fi
	echo "#   took $(( $(date +%s) - last ))s"
	last=$(date +%s)
}

# The log's tail, as TAP comments.
tail_of() {
	tail -n "${2:-15}" "$1" | sed 's/^/#   /'
}

kvers=
for d in /lib/modules/*-amd64/build; do
	[ -e "$d" ] || continue
	v=${d%/build}
	kvers="$kvers ${v##*/}"
done

echo "TAP version 13"
echo "1..$((6 + $(wc -w <<<"$kvers")))"

rm -rf "$t"
mkdir -p "$root" "$dtree"
make --no-print-directory deb >"$t/make.log" 2>&1
rc=$?
[ $rc = 0 ] || tail_of "$t/make.log" 30
ok $rc "make deb builds ordma-dkms, libordma1, libordma-dev and ordma-tools, lintian clean"

rc=0
for p in ordma-dkms libordma1 libordma-dev ordma-tools; do
	f=$(ls out/deb/${p}_*.deb 2>/dev/null | head -n 1)
	if [ -z "$f" ] || ! dpkg-deb -x "$f" "$root"; then
		echo "# no package $p"
		rc=1
	fi
done
for f in usr/src/ordma-1.0.0/dkms.conf usr/include/libordma.h \
	 usr/include/linux/ordma.h usr/bin/ordmactl usr/bin/ordmacp \
	 usr/bin/ordma-bench usr/share/man/man3/ordma_send.3.gz; do
	[ -e "$root/$f" ] || { echo "# missing: /$f"; rc=1; }
done
ok $rc "the packages unpack, with what each should hold"

# DKMS, in trees of its own: nothing under /var/lib/dkms or /lib/modules.
dkms add -m ordma -v 1.0.0 --dkmstree "$dtree" --sourcetree "$root/usr/src" \
	>"$t/dkms-add.log" 2>&1
rc=$?
[ $rc = 0 ] || tail_of "$t/dkms-add.log"
ok $rc "dkms add, in a tree of its own"

ko61=
for k in $kvers; do
	dkms build -m ordma -v 1.0.0 -k "$k" --dkmstree "$dtree" \
		--sourcetree "$root/usr/src" >"$t/dkms-$k.log" 2>&1
	rc=$?
	ko=$(find "$dtree/ordma/1.0.0/$k" -name 'ordma.ko*' 2>/dev/null | head -n 1)
	if [ $rc = 0 ] && [ -n "$ko" ] &&
	   [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$k" ]; then
		case $k in 6.1.*) ko61=$ko ;; esac
	else
		tail_of "$t/dkms-$k.log"
		[ -d "$dtree/ordma/1.0.0/build" ] &&
			tail_of "$dtree/ordma/1.0.0/build/make.log"
		rc=1
	fi
	ok $rc "dkms builds ordma.ko for $k"
done

rc=0
for f in /var/lib/dkms/ordma /usr/src/ordma-1.0.0; do
	[ -e "$f" ] && { echo "# $f exists"; rc=1; }
done
ls /lib/modules/*/updates/dkms/ordma.ko* >/dev/null 2>&1 &&
	{ echo "# an ordma.ko was installed under /lib/modules"; rc=1; }
ok $rc "nothing of it reached this machine's system"

# The examples against the unpacked libordma-dev, found by pkg-config.
pc=$(ls -d "$root"/usr/lib/*/pkgconfig)
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$pc \
	pkg-config --cflags --libs ordma 2>&1)
rc=$?
for e in sender receiver; do
	[ $rc = 0 ] || break
	# shellcheck disable=SC2086
	cc -Wall -Werror -o "$t/$e" "examples/$e.c" $flags >"$t/cc-$e.log" 2>&1 ||
		{ tail_of "$t/cc-$e.log"; rc=1; }
done
if [ $rc = 0 ]; then
	LD_LIBRARY_PATH=$(dirname "$pc") ldd "$t/sender" | grep -q "libordma.so.1 => $root/" ||
		{ echo "# sender does not link the unpacked libordma.so.1"; rc=1; }
else
	echo "# pkg-config: $flags"
fi
ok $rc "the examples build against libordma-dev through pkg-config"

# A guest loads what DKMS built (for the default kernel, 6.1) and moves
# messages over it.
if [ -n "$ko61" ]; then
	k=${ko61#"$dtree"/ordma/1.0.0/}
	k=${k%%/*}
	tools/vmtest --kver "$k" --no-module --smp 1 --timeout 600 -- sh -c "
		insmod '$ko61' || exit 1
		[ \"\$(cat /sys/module/ordma/srcversion)\" = '$(modinfo -F srcversion "$ko61")' ] || exit 2
		env ORDMA_TEST_ONLY=three_messages,echo selftests/guest/chan_test" \
		>"$t/guest.log" 2>&1
	rc=$?
	grep -E '^(not )?ok |^# (PASSED|FAILED|Totals)' "$t/guest.log" | grep -v SKIP |
		sed 's/^/#   /'
	[ $rc = 0 ] || tail_of "$t/guest.log"
else
	rc=1
fi
ok $rc "a guest loads the DKMS-built ordma.ko and carries messages over it"
