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

LINT_SRCS := $(filter-out %.mod.c,$(wildcard kernel/*.c)) $(wildcard kernel/*.h) \
	     $(wildcard include/uapi/linux/*.h include/linux/*.h)

GUEST_TESTS := $(patsubst %.c,%,$(wildcard selftests/guest/*_test.c))
HOST_TESTS  := $(patsubst %.c,%,$(wildcard selftests/host/*_test.c))

.PHONY: all modules selftests deps lint check check-debug debug-kernel demo clean kbuild-all

TOOLS := tools/ordma-bench

all: modules selftests $(TOOLS)

tools/%: tools/%.c include/uapi/linux/ordma.h
	$(CC) $(CFLAGS) -Iinclude/uapi -o $@ $<

modules:
	@[ -d "$(KDIR)" ] || { echo "no kernel headers in $(KDIR): run 'make deps'"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

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

selftests: $(GUEST_TESTS) $(HOST_TESTS)

# The hostile peer of proto_test speaks raw verbs through librdmacm.
selftests/guest/proto_test: LDLIBS += -lrdmacm -libverbs

selftests/%_test: selftests/%_test.c selftests/ordma_test.h $(wildcard selftests/ordma_chan.h) include/uapi/linux/ordma.h $(KSFT)/kselftest_harness.h
	$(CC) $(CFLAGS) $(TEST_CPPFLAGS) -o $@ $< $(LDLIBS)

deps:
	@tools/deps

# Build the module against every installed Debian *-amd64 kernel, in a copy
# of the tree so the default build is left alone.
kbuild-all:
	@tools/kbuild-all

lint: $(SCRIPTS)/checkpatch.pl
	$(SCRIPTS)/checkpatch.pl --no-tree --quiet --strict --show-types -f $(LINT_SRCS)
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 modules 2>&1 | tee $(CACHE)/sparse.log
	@! grep -E '(warning|error):' $(CACHE)/sparse.log

check:
	@tools/deps
	@$(MAKE) --no-print-directory all
	@tools/check

# The guest selftests under KASAN, lockdep, kmemleak and fault injection
# (tools/debug-kernel builds that kernel once, 15-25 minutes, then caches it).
debug-kernel:
	@tools/deps
	@tools/debug-kernel >/dev/null

check-debug:
	@tools/deps
	@$(MAKE) --no-print-directory all
	@tools/debug-kernel >/dev/null
	@tools/check debug

demo:
	@tools/deps
	@$(MAKE) --no-print-directory all
	@tools/vmtest -- tools/demo

clean:
	-[ -d "$(KDIR)" ] && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f $(GUEST_TESTS) $(HOST_TESTS) $(TOOLS)
