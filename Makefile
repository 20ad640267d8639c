# SPDX-License-Identifier: GPL-2.0
#
# ordma: `make` builds the module, the library, the tools and the tests;
# `make check` runs every test (kernel tests inside a QEMU guest);
# `make demo` shows ordma at work in a guest. See README.

KVER	?= $(shell tools/kver)
KDIR	?= /lib/modules/$(KVER)/build
CACHE	:= .cache
LINUX_SRC_TAR := /usr/src/linux-source-6.1.tar.xz
KSFT	:= $(CACHE)/kselftest
SCRIPTS	:= $(CACHE)/scripts

CC	?= gcc
CFLAGS	?= -O2 -g
CFLAGS	+= -Wall -Wextra -Wno-unused-parameter -Werror -D_GNU_SOURCE
TEST_CPPFLAGS := -Iinclude/uapi -I$(KSFT) -Iselftests

LINT_SRCS := $(filter-out %.mod.c,$(wildcard kernel/*.c selftests/kmod/*.c samples/*/*.c)) \
	     $(wildcard kernel/*.h include/uapi/linux/*.h include/linux/*.h samples/*/*.h)

GUEST_TESTS := $(patsubst %.c,%,$(wildcard selftests/guest/*_test.c))
HOST_TESTS  := $(patsubst %.c,%,$(wildcard selftests/host/*_test.c))
TWOHOST_TESTS := $(patsubst %.c,%,$(wildcard selftests/twohost/*_test.c))

.PHONY: all modules selftests deps lint check check-debug soak debug-kernel demo clean kbuild-all tools

TOOLS := tools/ordma-bench tools/ordma-ringbench tools/ordmactl

# libnl-genl-3 for what speaks ordma's generic netlink family. Without it
# (pkg-config cannot find it) building tools/ordmactl stops and says what to
# install; every other target builds as before.
NL_PKG	  := libnl-genl-3.0
NL_FOUND  := $(shell pkg-config --exists $(NL_PKG) && echo yes)
NL_CFLAGS := $(if $(NL_FOUND),$(shell pkg-config --cflags $(NL_PKG)))
NL_LIBS	  := $(if $(NL_FOUND),$(shell pkg-config --libs $(NL_PKG)))

all: modules selftests $(TOOLS)

# Kbuild runs its jobs in parallel on every CPU unless make was given -j.
KJOBS	= $(if $(findstring j,$(filter-out --%,$(MAKEFLAGS))),,-j$(shell nproc))

tools: $(TOOLS)

tools/%: tools/%.c include/uapi/linux/ordma.h
	$(CC) $(CFLAGS) -Iinclude/uapi -o $@ $<

tools/ordmactl: tools/ordmactl.c include/uapi/linux/ordma.h
	$(if $(NL_FOUND),,$(error pkg-config finds no $(NL_PKG), which $@ needs: install libnl-genl-3-dev (make deps does)))
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -Iinclude/uapi $(NL_CFLAGS) -o $@ $< $(NL_LIBS)

# The rings through the raw ABI, with the selftests' ring helpers.
tools/ordma-ringbench: tools/ordma-ringbench.c selftests/ordma_ring.h include/uapi/linux/ordma.h
	$(CC) $(CFLAGS) -Iinclude/uapi -Iselftests -o $@ $<

modules:
	@[ -d "$(KDIR)" ] || { echo "no kernel headers in $(KDIR): run 'make deps'"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 $(KJOBS) modules

# kselftest_harness.h and checkpatch.pl come from Debian's linux-source-6.1 at
# build time; they are never committed.
$(KSFT)/kselftest_harness.h:
	@[ -f $(LINUX_SRC_TAR) ] || { echo "no $(LINUX_SRC_TAR): run 'make deps'"; exit 1; }
	mkdir -p $(KSFT)
	tar -xJf $(LINUX_SRC_TAR) -C $(KSFT) --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h

$(SCRIPTS)/checkpatch.pl:
	mkdir -p $(SCRIPTS)
	tar -xJf $(LINUX_SRC_TAR) -C $(SCRIPTS) --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch

selftests: $(GUEST_TESTS) $(HOST_TESTS) $(TWOHOST_TESTS)

# The rings' index arithmetic, compiled for the host.
selftests/host/ring_idx_test: kernel/ring_idx.h

# The hostile peer of proto_test speaks raw verbs through librdmacm;
# fail_test binds with it to tell a broken RDMA core from a broken ordma.
selftests/guest/proto_test selftests/guest/fail_test: LDLIBS += -lrdmacm -libverbs

# nl_test runs ordmactl; it speaks netlink itself through raw sockets.
selftests/guest/nl_test: tools/ordmactl

# The planner's host test builds kernel/plan.c in, over a few kernel shims.
selftests/host/plan_test: kernel/plan.c kernel/plan.h selftests/host/plan_shim.h
selftests/host/plan_test: TEST_CPPFLAGS += -Ikernel

# The wire header's host test builds kernel/wire.c in, over a few shims.
selftests/host/wire_test: kernel/wire.c kernel/wire.h selftests/host/wire_shim.h
selftests/host/wire_test: TEST_CPPFLAGS += -Ikernel

selftests/%_test: selftests/%_test.c selftests/ordma_test.h $(wildcard selftests/ordma_chan.h selftests/ordma_ring.h) include/uapi/linux/ordma.h $(KSFT)/kselftest_harness.h
	$(CC) $(CFLAGS) $(TEST_CPPFLAGS) -o $@ $< $(LDLIBS)

deps:
	@tools/deps

# Build the module against every installed Debian *-amd64 kernel, in a copy
# of the tree so the default build is left alone.
kbuild-all:
	@tools/kbuild-all

lint: $(SCRIPTS)/checkpatch.pl
	tools/layers
	$(SCRIPTS)/checkpatch.pl --no-tree --quiet --strict --show-types -f $(LINT_SRCS)
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 modules 2>&1 | tee $(CACHE)/sparse.log
	@! grep -E '(warning|error):' $(CACHE)/sparse.log

check:
	@tools/deps
	@$(MAKE) --no-print-directory -j$(shell nproc) all
	@tools/check

# The guest stage of make check N times (DEBUG=1: make check-debug's
# guests too), then how often each test passed and every kernel report.
N	?= 3
DEBUG	?= 0
soak:
	@tools/deps
	@$(MAKE) --no-print-directory all
	@N=$(N) DEBUG=$(DEBUG) tools/soak

# The guest selftests under KASAN, lockdep, kmemleak and fault injection
# (tools/debug-kernel builds that kernel once, 12-20 minutes on 2 cores,
# then caches it).
debug-kernel:
	@tools/deps
	@tools/debug-kernel >/dev/null

# FULL=1 runs the heavy stress tests at full size there too.
check-debug:
	@tools/deps
	@$(MAKE) --no-print-directory all
	@tools/debug-kernel >/dev/null
	@FULL=$(FULL) tools/check debug

demo:
	@tools/deps
	@$(MAKE) --no-print-directory all
	@tools/vmtest -- tools/demo

clean:
	-[ -d "$(KDIR)" ] && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f $(GUEST_TESTS) $(HOST_TESTS) $(TWOHOST_TESTS) $(TOOLS)

# ---- libordma, ordmacp, examples, install -----------------------------------
# lib/libordma.so.1 (version script lib/libordma.map: only ordma_* exported,
# all at ORDMA_1.0) and lib/libordma.a; the tools, examples and guest test
# link the static one so they run from the tree. `make install PREFIX=...
# DESTDIR=...` installs the library, <libordma.h> and <linux/ordma.h>,
# ordma.pc, the man pages, ordmacp, ordma-bench and ordmactl; `make
# modules_install` installs the module through kbuild (INSTALL_MOD_PATH,
# INSTALL_MOD_DIR honoured); the test and sample modules built beside it
# stay in the tree.

ORDMA_VERSION	:= 1.0.0
ORDMA_SONAME	:= libordma.so.1
PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
MANDIR		?= $(PREFIX)/share/man
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
INSTALL		?= install

LIB_OBJS	:= $(patsubst %.c,%.o,$(wildcard lib/*.c))
LIB_SO		:= lib/libordma.so.$(ORDMA_VERSION)
LIB_CFLAGS	= $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -Iinclude/uapi -Ilib
LIB_USER_CFLAGS	= $(CPPFLAGS) $(CFLAGS) -Ilib -Iinclude/uapi
EXAMPLES	:= examples/sender examples/receiver
TOOLS		+= tools/ordmacp

.PHONY: lib examples install modules_install clean-lib

all: lib tools/ordmacp examples

lib: lib/libordma.a $(LIB_SO) lib/$(ORDMA_SONAME) lib/libordma.so

lib/%.o: lib/%.c lib/libordma.h lib/private.h include/uapi/linux/ordma.h
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

lib/libordma.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) lib/libordma.map
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(ORDMA_SONAME) \
		-Wl,--version-script=lib/libordma.map -Wl,-z,defs \
		-o $@ $(LIB_OBJS)

lib/$(ORDMA_SONAME) lib/libordma.so: $(LIB_SO)
	ln -sf $(notdir $(LIB_SO)) $@

tools/ordmacp: tools/ordmacp.c lib/libordma.a lib/libordma.h include/uapi/linux/ordma.h
	$(CC) $(LIB_USER_CFLAGS) $(LDFLAGS) -o $@ $< lib/libordma.a

# ordma-bench: libordma against the rdma-core baselines (tools/bench/).
BENCH_SRCS	:= $(wildcard tools/bench/*.c)

tools/ordma-bench: $(BENCH_SRCS) tools/bench/bench.h lib/libordma.a lib/libordma.h include/uapi/linux/ordma.h
	$(CC) $(LIB_USER_CFLAGS) $(LDFLAGS) -o $@ $(BENCH_SRCS) lib/libordma.a -lrdmacm -libverbs -lpthread -lm

examples: $(EXAMPLES)

examples/%: examples/%.c lib/libordma.a lib/libordma.h include/uapi/linux/ordma.h
	$(CC) $(LIB_USER_CFLAGS) -o $@ $< lib/libordma.a

# The library's guest test links the static library and runs ordmacp and the
# examples.
# The two-host tests speak libordma (tools/vmtest --hosts 2).
$(TWOHOST_TESTS): lib/libordma.a selftests/twohost/twohost.h
$(TWOHOST_TESTS): TEST_CPPFLAGS += -Ilib
$(TWOHOST_TESTS): LDLIBS += lib/libordma.a
# version_test's peer of another version is a raw librdmacm one, as
# proto_test's hostile peer (ordma_rawcm.h).
selftests/twohost/version_test selftests/guest/proto_test: selftests/ordma_rawcm.h
selftests/twohost/version_test: LDLIBS += -lrdmacm -libverbs
# many_test's floor is bare RC QPs over librdmacm.
selftests/twohost/many_test: selftests/ordma_rawcm.h
selftests/twohost/many_test: LDLIBS += -lrdmacm -libverbs

selftests/guest/lib_test: lib/libordma.a tools/ordmacp $(EXAMPLES)
selftests/guest/lib_test: TEST_CPPFLAGS += -Ilib
selftests/guest/lib_test: LDLIBS += lib/libordma.a

install: lib tools/ordmacp tools/ordma-bench tools/ordmactl
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/linux \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 644 lib/libordma.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/$(ORDMA_SONAME)
	ln -sf $(ORDMA_SONAME) $(DESTDIR)$(LIBDIR)/libordma.so
	$(INSTALL) -m 644 lib/libordma.h $(DESTDIR)$(INCLUDEDIR)/libordma.h
	$(INSTALL) -m 644 include/uapi/linux/ordma.h $(DESTDIR)$(INCLUDEDIR)/linux/ordma.h
	sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(LIBDIR)|' \
		-e 's|@includedir@|$(INCLUDEDIR)|' -e 's|@version@|$(ORDMA_VERSION)|' \
		lib/ordma.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/ordma.pc
	$(INSTALL) -m 644 man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/
	$(INSTALL) -m 644 man/man7/*.7 $(DESTDIR)$(MANDIR)/man7/
	$(INSTALL) -m 644 man/man8/*.8 $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -m 755 tools/ordmacp tools/ordma-bench tools/ordmactl \
		$(DESTDIR)$(BINDIR)/

modules_install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel modules_install

clean: clean-lib

# ---- Debian packages ----------------------------------------------------------
# `make deb`: ordma-dkms, libordma1, libordma-dev and ordma-tools, built by
# dpkg-buildpackage from a copy of the tree (the files git knows, as they
# are now) under out/deb/, where the packages land; lintian checks them
# (what it still says is justified in debian/*.lintian-overrides).
DEB_DIR		:= out/deb

.PHONY: deb
deb:
	@tools/deps
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/ordma-$(ORDMA_VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		tar --null -T - -cf - | tar -x -C $(DEB_DIR)/ordma-$(ORDMA_VERSION)
	cd $(DEB_DIR)/ordma-$(ORDMA_VERSION) && \
		dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -n 40 ../build.log; exit 1; }
	lintian --fail-on error,warning $(DEB_DIR)/ordma_$(ORDMA_VERSION)_*.changes
	@ls $(DEB_DIR)/*.deb

clean-lib:
	rm -f lib/*.o lib/libordma.a lib/libordma.so* $(EXAMPLES)
