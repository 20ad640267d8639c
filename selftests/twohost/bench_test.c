// SPDX-License-Identifier: GPL-2.0
/*
 * ordma-bench across two hosts (tools/vmtest --hosts 2, tools/check's stage
 * "twohost"): host 1 runs `ordma-bench --serve`, host 2 `ordma-bench --peer
 * 192.0.2.1` in a small configuration (two sizes, two iterations, one
 * throughput repetition, the quick fairness run). No timing is asserted.
 *
 * Host 2, the peer: the run ends with status 0; its header names the
 * server; its CSV has every strategy the one-host run has (the verbs
 * baselines, every uoverlap fraction, ordma in each mode) for every
 * operation and size, each with every sample taken and every byte of every
 * transfer verified by the receiving host; every throughput run moved every
 * byte; the fairness run measured its three phases.
 * Host 1, the server: ends with status 0, received as many transfers as
 * the peer made (each host hands the other its count over the link), every
 * byte of them as sent, and its NIC received at least those bytes: the
 * data crossed the link.
 */
#define ORDMA_GUEST_TEST
#include <inttypes.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "ordma_test.h"
#include "kselftest_harness.h"
#include "twohost.h"

#define ITERS		2
#define NSIZES		2
#define BENCH_PORT	18890	/* not the default: nothing else meets here */
#define OUT_DIR		".cache/twohost-bench"

static const char *const strategies[] = {
	"prereg", "regper", "bounce", "thresh", "pipeline", "uoverlap/16",
	"uoverlap/8", "uoverlap/4", "uoverlap/2",
	"ordma-auto", "ordma-copy", "ordma-zerocopy", "ordma-overlap",
};

static const char *const ops[] = { "write", "put", "send" };
static const unsigned long sizes[NSIZES] = { 4096, 1 << 20 };

FIXTURE(bench) {
	int host;
	char out[256];		/* this host's files, OUT_DIR/hostN.* */
};

FIXTURE_SETUP(bench)
{
	const char *host = getenv("VMTEST_HOST");

	ORDMA_TEST_FILTER();
	if (!host)
		SKIP(return, "not in a guest of tools/vmtest --hosts 2");
	self->host = atoi(host);
	ASSERT_TRUE(self->host == 1 || self->host == 2);
	ASSERT_EQ(0, access("tools/ordma-bench", X_OK)) TH_LOG("run make first");
	mkdir(".cache", 0755);
	mkdir(OUT_DIR, 0755);
	snprintf(self->out, sizeof(self->out), OUT_DIR "/host%d", self->host);
	ASSERT_EQ(0, ordma_sh("rm -f %s.*", self->out));
}

FIXTURE_TEARDOWN(bench)
{
}

static int64_t nic_rx_bytes(void)
{
	return ordma_read_ll("/sys/class/net/ordma0/statistics/rx_bytes");
}

/* The first line of @path holding @needle, into @line; 0 or -1. */
static int grep_line(const char *path, const char *needle, char *line,
		     size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, len, f))
		if (strstr(line, needle)) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/*
 * The peer's CSV: one row per strategy, operation and size, each with
 * ITERS samples, every byte verified and none wrong. Return: the rows, or
 * -1 with what was wrong in @why.
 */
static int check_csv(const char *path, char *why, size_t len)
{
	bool seen[ARRAY_SIZE(strategies)][ARRAY_SIZE(ops)][NSIZES] = { 0 };
	char line[1024], strat[32], op[16], workload[16];
	unsigned long long bytes, verified, bad, wrong;
	int n, xwrong, rows = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(why, len, "no %s", path);
		return -1;
	}
	if (!fgets(line, sizeof(line), f) || strncmp(line, "strategy,op,bytes,n,", 20)) {
		snprintf(why, len, "no CSV header");
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t s, o, z;

		if (sscanf(line, "%31[^,],%15[^,],%llu,%d,%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%llu,%llu,%15[^,],%llu,%d",
			   strat, op, &bytes, &n, &verified, &bad, workload,
			   &wrong, &xwrong) != 9) {
			snprintf(why, len, "bad row: %.200s", line);
			break;
		}
		for (s = 0; s < ARRAY_SIZE(strategies) && strcmp(strat, strategies[s]); s++)
			;
		for (o = 0; o < ARRAY_SIZE(ops) && strcmp(op, ops[o]); o++)
			;
		for (z = 0; z < NSIZES && bytes != sizes[z]; z++)
			;
		if (s == ARRAY_SIZE(strategies) || o == ARRAY_SIZE(ops) ||
		    z == NSIZES || seen[s][o][z]) {
			snprintf(why, len, "unexpected row: %.200s", line);
			break;
		}
		if (n != ITERS || verified != ITERS * bytes || bad || wrong ||
		    xwrong || strcmp(workload, "fresh")) {
			snprintf(why, len, "not every sample or byte: %.200s", line);
			break;
		}
		seen[s][o][z] = true;
		rows++;
	}
	fclose(f);
	if (rows != ARRAY_SIZE(strategies) * ARRAY_SIZE(ops) * NSIZES) {
		if (!why[0])
			snprintf(why, len, "%d rows", rows);
		return -1;
	}
	return rows;
}

TEST_F_TIMEOUT(bench, every_strategy_across_the_link, 600)
{
	static const char key[] = "\"transfers\": ";
	char path[300], line[512], why[512] = "", other[64];
	unsigned long long xfers = 0, bytes = 0;
	long peer_xfers;
	int64_t rx0 = -1;
	FILE *p;
	int rc;

	if (self->host == 1) {
		rx0 = nic_rx_bytes();
		ASSERT_LE(0, rx0);
		rc = ordma_sh("timeout 240 tools/ordma-bench --serve --addr 192.0.2.1 --port %d >%s.out 2>%s.err",
			      BENCH_PORT, self->out, self->out);
		snprintf(path, sizeof(path), "%s.out", self->out);
		if (!grep_line(path, "# ordma-bench --serve on ", line, sizeof(line)))
			sscanf(line, "# ordma-bench --serve on %*s received %llu transfers, %llu bytes",
			       &xfers, &bytes);
		/* Hand the peer our count, take its own. */
		snprintf(path, sizeof(path),
			 "tools/vmtest-barrier -t 300 bench_test.done %llu", xfers);
	} else {
		rc = ordma_sh("timeout 240 tools/ordma-bench --peer 192.0.2.1 --port %d --quick --sizes 4K,1M --iters %d --tput-reps 1 --json %s.json --csv %s.csv >%s.out 2>%s.err",
			      BENCH_PORT, ITERS, self->out, self->out, self->out,
			      self->out);
		snprintf(path, sizeof(path), "%s.json", self->out);
		if (!grep_line(path, "\"two_hosts\":", line, sizeof(line)) &&
		    strstr(line, key))
			xfers = strtoull(strstr(line, key) + strlen(key), NULL, 10);
		snprintf(path, sizeof(path),
			 "tools/vmtest-barrier -t 300 bench_test.done %llu", xfers);
	}
	p = popen(path, "r");
	ASSERT_NE(NULL, p);
	other[0] = '\0';
	if (!fgets(other, sizeof(other), p))
		other[0] = '\0';
	ASSERT_EQ(0, pclose(p)) TH_LOG("the other host did not reach the end");
	if (rc)
		ordma_sh("sed 's/^/# /' %s.err | tail -n 20 >&2", self->out);
	ASSERT_EQ(0, rc) TH_LOG("ordma-bench ended with status %d", rc);
	peer_xfers = strtol(other, NULL, 10);

	if (self->host == 1) {
		/* every transfer of the peer's, every byte as sent, over ordma0 */
		ASSERT_LT(0ULL, xfers);
		EXPECT_EQ(xfers, (unsigned long long)peer_xfers);
		snprintf(path, sizeof(path), "%s.out", self->out);
		ASSERT_EQ(0, grep_line(path, "; 0 transfers with wrong bytes", line,
				       sizeof(line)));
		EXPECT_LE((int64_t)bytes, nic_rx_bytes() - rx0);
		return;
	}
	ASSERT_LT(0ULL, xfers);
	EXPECT_EQ(xfers, (unsigned long long)peer_xfers);
	snprintf(path, sizeof(path), "%s.out", self->out);
	EXPECT_EQ(0, grep_line(path, "the receiving ends on 192.0.2.1's ", line,
			       sizeof(line)));
	EXPECT_EQ(0, grep_line(path, "# verified: all ", line, sizeof(line)));
	/*
	 * Four throughput runs, each slot (4 channels x 4 outstanding, 1 MiB)
	 * checked once at the end; three fairness phases.
	 */
	EXPECT_EQ(0, ordma_sh("test $(awk '/^(prereg|bounce|regper|ordma) +[0-9.]+ .* 16777216 +0$/' %s.out | wc -l) = 4",
			      self->out));
	EXPECT_EQ(0, ordma_sh("grep -q '^heavy, quota [0-9]* (none) ' %s.out",
			      self->out));
	snprintf(path, sizeof(path), "%s.csv", self->out);
	EXPECT_LT(0, check_csv(path, why, sizeof(why))) TH_LOG("%s", why);
}

TEST_HARNESS_MAIN
