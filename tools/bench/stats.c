// SPDX-License-Identifier: GPL-2.0
/*
 * Summaries of timing samples: median, p99 (nearest rank), minimum, and a
 * bootstrap 95% confidence interval of the median (percentile method,
 * fixed seed so that one set of samples always gives the same interval).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define BOOT_ROUNDS	2000

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_sorted(const double *v, int n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Nearest rank: the smallest sample with at least p of them at or below. */
static double pct_sorted(const double *v, int n, double p)
{
	int k = (int)ceil(p * n) - 1;

	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

void bench_summarise(const double *t, int n, struct bench_summary *s)
{
	double *v, *r, *meds;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	memset(s, 0, sizeof(*s));
	s->n = n;
	if (n <= 0)
		return;
	v = malloc(n * sizeof(*v));
	r = malloc(n * sizeof(*r));
	meds = malloc(BOOT_ROUNDS * sizeof(*meds));
	if (!v || !r || !meds)
		bench_die("out of memory");
	memcpy(v, t, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	s->median = median_sorted(v, n);
	s->p99 = pct_sorted(v, n, 0.99);
	s->min = v[0];
	for (int i = 0; i < BOOT_ROUNDS; i++) {
		for (int j = 0; j < n; j++)
			r[j] = v[xorshift(&seed) % n];
		qsort(r, n, sizeof(*r), cmp_double);
		meds[i] = median_sorted(r, n);
	}
	qsort(meds, BOOT_ROUNDS, sizeof(*meds), cmp_double);
	s->lo = meds[(int)(0.025 * BOOT_ROUNDS)];
	s->hi = meds[(int)(0.975 * BOOT_ROUNDS) - 1];
	free(meds);
	free(r);
	free(v);
}

/* Within noise: the two medians' confidence intervals overlap. */
int bench_tied(const struct bench_summary *a, const struct bench_summary *b)
{
	if (!a->n || !b->n)
		return 0;
	return a->lo <= b->hi && b->lo <= a->hi;
}
