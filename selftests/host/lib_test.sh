#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libordma as installed, on the host (nothing here touches /dev/ordma or
# loads a module): `make install` into a scratch DESTDIR, ordma.pc builds a
# program against it, the .so exports only ordma_* at ORDMA_1.0, every
# exported function has a man page whose EXAMPLE compiles, modules_install
# and dkms.conf are sane, ordmacp's usage errors. TAP output.

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
n=0
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
lib=$dest/usr/lib
# A make started from `make check` must not inherit its jobserver.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fails=$((fails + 1))
	fi
}

# check NAME CMD...: CMD succeeds; its output is shown if not.
check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "# status $rc:"
		tail -n 20 <<<"$out" | sed 's/^/#   /'
	fi
	ok "$rc" "$name"
}

echo "TAP version 13"
echo "1..14"

check "make install DESTDIR PREFIX=/usr" mk install DESTDIR="$dest" PREFIX=/usr

installed() {
	local f
	for f in usr/lib/libordma.so.1.0.0 usr/lib/libordma.a \
		 usr/include/libordma.h usr/include/linux/ordma.h \
		 usr/lib/pkgconfig/ordma.pc usr/bin/ordmacp usr/bin/ordmactl \
		 usr/share/man/man7/libordma.7 usr/share/man/man1/ordmacp.1 \
		 usr/share/man/man8/ordmactl.8; do
		[ -f "$dest/$f" ] || { echo "missing $f"; return 1; }
	done
	[ "$(readlink "$lib/libordma.so.1")" = libordma.so.1.0.0 ] ||
		{ echo "libordma.so.1 -> $(readlink "$lib/libordma.so.1")"; return 1; }
	[ "$(readlink "$lib/libordma.so")" = libordma.so.1 ] ||
		{ echo "libordma.so -> $(readlink "$lib/libordma.so")"; return 1; }
	readelf -d "$lib/libordma.so.1.0.0" | grep -q 'SONAME.*\[libordma\.so\.1\]' ||
		{ echo "no SONAME libordma.so.1"; return 1; }
}
check "installed: library, symlinks, soname, headers, pc, tools, man" installed

# A tiny program, built with nothing but pkg-config pointing into DESTDIR.
cat >"$tmp/tiny.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <libordma.h>

int main(void)
{
	struct ordma_sqe sqe;
	struct ordma *o;
	int ret;

	ordma_prep_write(&sqe, 7, (void *)0x1000, 4096, 0xabc, 64, 42);
	if (sqe.op != ORDMA_OP_WRITE || sqe.chan_id != 7 || sqe.len != 4096 ||
	    sqe.token != 0xabc || sqe.offset != 64 || sqe.cookie != 42)
		return 2;
	/* The host never has /dev/ordma: the call must say so, not crash. */
	ret = ordma_open(&o, 0);
	if (!ret)
		ordma_close(o);
	printf("ordma_open: %d\n", ret);
	return ret == -ENOENT || ret == 0 ? 0 : 3;
}
C
pc() {
	PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$lib/pkgconfig \
		PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@"
}
tiny() {
	local flags
	flags=$(pc --cflags --libs ordma) || return 1
	echo "pkg-config: $flags"
	# shellcheck disable=SC2086
	cc -Wall -Wextra -Werror -o "$tmp/tiny" "$tmp/tiny.c" $flags || return 1
	readelf -d "$tmp/tiny" | grep -q 'NEEDED.*\[libordma\.so\.1\]' ||
		{ echo "tiny does not need libordma.so.1"; return 1; }
	LD_LIBRARY_PATH=$lib "$tmp/tiny"
}
check "cc \$(pkg-config --cflags --libs ordma) builds and runs a program" tiny

tiny_static() {
	# shellcheck disable=SC2086
	cc -Wall -Werror -o "$tmp/tiny-static" "$tmp/tiny.c" \
		$(pc --cflags ordma) "$lib/libordma.a" &&
		! readelf -d "$tmp/tiny-static" | grep -q libordma &&
		"$tmp/tiny-static"
}
check "libordma.a links a program statically" tiny_static

pc_version() {
	[ "$(pc --modversion ordma)" = "$(sed -n 's/^ORDMA_VERSION[[:space:]]*:= *//p' Makefile)" ]
}
check "ordma.pc carries the library's version" pc_version

# Only ordma_* symbols, every one at ORDMA_1.0, and the version node itself.
syms=$(nm -D --defined-only "$lib/libordma.so.1.0.0" | awk '{ print $3 }')
exports() {
	local bad
	bad=$(grep -Ev '^(ordma_[a-z0-9_]+@@ORDMA_1\.0|ORDMA_1\.0)$' <<<"$syms")
	[ -z "$bad" ] || { echo "unexpected symbols:"; echo "$bad"; return 1; }
	grep -qx 'ORDMA_1.0' <<<"$syms" || { echo "no ORDMA_1.0 node"; return 1; }
}
check "nm -D --defined-only: only ordma_* at ORDMA_1.0" exports

funcs=$(sed -n 's/@@ORDMA_1\.0$//p' <<<"$syms" | sort)
header_funcs=$(grep -oE '\bordma_[a-z0-9_]+\(' lib/libordma.h | tr -d '(' | sort -u)
header_match() {
	[ "$funcs" = "$header_funcs" ] && return 0
	echo "exported vs declared in libordma.h:"
	diff <(echo "$funcs") <(echo "$header_funcs")
	return 1
}
check "the exported functions are exactly those of <libordma.h>" header_match

man=$dest/usr/share/man
man_pages() {
	local f bad=0 pages
	for f in $funcs; do
		[ -f "$man/man3/$f.3" ] || { echo "no man page for $f"; bad=1; continue; }
		grep -q '^\.SH EXAMPLE' "$man/man3/$f.3" || { echo "$f.3: no EXAMPLE"; bad=1; }
		grep -q "^\.TH $f 3 " "$man/man3/$f.3" || { echo "$f.3: bad .TH"; bad=1; }
	done
	pages=$(cd "$man/man3" && ls ./*.3 | sed 's|^\./||; s/\.3$//' | sort)
	[ "$pages" = "$funcs" ] || { echo "man3 pages without a function:"; comm -23 <(echo "$pages") <(echo "$funcs"); bad=1; }
	return $bad
}
check "every exported function has its man3 page with an EXAMPLE" man_pages

man_lint() {
	local f out bad=0
	for f in "$man"/man*/*; do
		out=$(groff -man -t -ww -z "$f" 2>&1)
		[ -z "$out" ] || { echo "$f: $out"; bad=1; }
	done
	return $bad
}
check "man pages format without groff warnings" man_lint

# Each EXAMPLE is a whole program: it must build against the installed
# library with -Wall -Wextra -Werror.
examples_build() {
	local f c bad=0 flags
	flags=$(pc --cflags --libs ordma) || return 1
	for f in "$man"/man3/*.3 "$man"/man7/libordma.7; do
		c=$tmp/ex-$(basename "$f").c
		sed -n '/^\.EX$/,/^\.EE$/p' "$f" | sed '1d;$d' |
			sed 's/\\e/\\/g; s/^\\&//' >"$c"
		# shellcheck disable=SC2086
		cc -Wall -Wextra -Werror -o "$c.bin" "$c" $flags 2>&1 ||
			{ echo "$(basename "$f"): the example does not build"; bad=1; }
	done
	return $bad
}
check "every man page EXAMPLE builds against the installed library" examples_build

check "make examples: sender and receiver build" mk examples

modinst() {
	local m=$tmp/modroot kver
	kver=$(tools/kver)
	mk modules_install INSTALL_MOD_PATH="$m" >"$tmp/modinst.log" 2>&1 ||
		{ tail -n 20 "$tmp/modinst.log"; return 1; }
	# ordma.ko alone: the test and sample modules stay in the tree.
	[ -f "$m/lib/modules/$kver/extra/ordma.ko" ] &&
	[ "$(find "$m" -name '*.ko*' | wc -l)" = 1 ] ||
		{ find "$m" -name '*.ko*'; return 1; }
}
check "make modules_install INSTALL_MOD_PATH installs ordma.ko alone" modinst

dkms_conf() {
	(
		kernelver=6.1.0-99-amd64
		# shellcheck disable=SC1091
		. ./dkms.conf
		[ "$PACKAGE_NAME" = ordma ] &&
		[ "$PACKAGE_VERSION" = "$(sed -n 's/^ORDMA_VERSION[[:space:]]*:= *//p' Makefile)" ] &&
		[ "${BUILT_MODULE_NAME[0]}" = ordma ] &&
		[ "${BUILT_MODULE_LOCATION[0]}" = kernel/ ] &&
		[ "${DEST_MODULE_LOCATION[0]}" = /updates/dkms ] &&
		[ "${MAKE[0]}" = "make KVER=6.1.0-99-amd64 modules" ] &&
		[ "$AUTOINSTALL" = yes ]
	) || { echo "dkms.conf:"; cat dkms.conf; return 1; }
	# The module dkms builds is the one kbuild makes.
	grep -q 'obj-m.*ordma' kernel/Kbuild
}
check "dkms.conf: name, version, module location, make command" dkms_conf

cp_usage() {
	local out rc
	out=$(tools/ordmacp 2>&1); rc=$?
	[ $rc = 2 ] && grep -q usage: <<<"$out" || { echo "no args: $rc $out"; return 1; }
	out=$(tools/ordmacp "$tmp/nonexistent" 192.0.2.1:1:/tmp/x 2>&1); rc=$?
	[ $rc = 1 ] && grep -q 'No such file' <<<"$out" || { echo "missing SRC: $rc $out"; return 1; }
	out=$(tools/ordmacp "$tmp/tiny.c" 192.0.2.1 2>&1); rc=$?
	[ $rc = 2 ] && grep -q 'HOST:PORT:DST' <<<"$out" || { echo "bad target: $rc $out"; return 1; }
}
check "ordmacp: usage errors exit 2, a missing SRC 1" cp_usage

[ "$fails" -eq 0 ]
