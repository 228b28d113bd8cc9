/* SPDX-License-Identifier: MIT */
/*
 * Configuration: defaults, RINGTRACE_* environment overrides, validation, the file
 * path pattern. A bad value is reported once on stderr and the default kept: a typo
 * in a job script must never stop the job.
 */
#include "session/recorder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define DEFAULT_PATH	   "ringtrace-%p.json"
#define DEFAULT_RING_BYTES ((size_t)1 << 20)
#define DEFAULT_FLUSH_MS   100u
#define MIN_RING_BYTES	   ((size_t)4 << 10)
#define MAX_RING_BYTES	   ((size_t)1 << 30)
#define MAX_FLUSH_MS	   60000u
#define DEFAULT_CACHE_MB   64u
#define MAX_CACHE_MB	   (1u << 20)
#define DEFAULT_STOP_MS	   10000u
#define MAX_STOP_MS	   3600000u

struct choice {
	const char *word;
	int value;
};

static const struct choice on_full_choices[] = {
	{"drop", RTR_ON_FULL_DROP}, {"block", RTR_ON_FULL_BLOCK}, {NULL, 0}};
static const struct choice io_choices[] = {{"auto", RTR_IO_AUTO},
					   {"uring", RTR_IO_URING},
					   {"io_uring", RTR_IO_URING},
					   {"sync", RTR_IO_SYNC},
					   {NULL, 0}};
static const struct choice compress_choices[] = {{"auto", RTR_COMPRESS_AUTO},
						 {"none", RTR_COMPRESS_NONE},
						 {"gzip", RTR_COMPRESS_GZIP},
						 {"gzip-members", RTR_COMPRESS_GZIP_MEMBERS},
						 {NULL, 0}};
static const struct choice clock_choices[] = {{"auto", RTR_CLOCK_AUTO},
					      {"monotonic", RTR_CLOCK_MONOTONIC},
					      {"tsc", RTR_CLOCK_TSC},
					      {NULL, 0}};

static void warn_bad(const char *name, const char *value, const char *expected)
{
	fprintf(stderr, "ringtrace: %s=\"%s\" is not %s; keeping the default\n", name, value,
		expected);
}

static void env_choice(const char *name, const struct choice *choices, const char *expected,
		       int *out)
{
	const char *v = getenv(name);

	if (v == NULL || *v == '\0')
		return;
	for (const struct choice *c = choices; c->word != NULL; c++) {
		if (strcasecmp(v, c->word) == 0) {
			*out = c->value;
			return;
		}
	}
	warn_bad(name, v, expected);
}

/* RINGTRACE_CATEGORIES: a bad list is reported, and every category recorded. */
static void env_categories(const char **out)
{
	const char *v = getenv("RINGTRACE_CATEGORIES");
	struct rtr__filter parsed;
	char why[128];

	if (v == NULL || *v == '\0')
		return;
	if (rtr__filter_parse(v, &parsed, why, sizeof(why)) == 0) {
		*out = v;
		return;
	}
	fprintf(stderr,
		"ringtrace: RINGTRACE_CATEGORIES=\"%s\" is not a category list: %s. Expected "
		"names separated by commas, each with an optional '-' to leave it out, as in "
		"\"app,mpi\" or \"-debug,-verbose\"; recording every category\n",
		v, why);
}

/* An unsigned decimal in [lo, hi], or 0 with a warning. */
static int env_number(const char *name, unsigned long long lo, unsigned long long hi,
		      const char *expected, unsigned long long *out)
{
	const char *v = getenv(name);
	char *end;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || *v == '-' || n < lo || n > hi) {
		warn_bad(name, v, expected);
		return 0;
	}
	*out = n;
	return 1;
}

RTR_API void rtr_config_init(struct rtr_config *cfg)
{
	unsigned long long n;
	const char *v;

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = DEFAULT_PATH;
	cfg->ring_bytes = DEFAULT_RING_BYTES;
	cfg->on_full = RTR_ON_FULL_DROP;
	cfg->flush_ms = DEFAULT_FLUSH_MS;
	cfg->io = RTR_IO_AUTO;
	cfg->clock = RTR_CLOCK_AUTO;
	cfg->compress = RTR_COMPRESS_AUTO;
	cfg->cache_mb = DEFAULT_CACHE_MB;
	cfg->stop_timeout_ms = DEFAULT_STOP_MS;

	if ((v = getenv("RINGTRACE_FILE")) != NULL && *v != '\0')
		cfg->path = v;
	if ((v = getenv("RINGTRACE_PROCESS_NAME")) != NULL && *v != '\0')
		cfg->process_name = v;
	if (env_number("RINGTRACE_RING_KB", MIN_RING_BYTES >> 10, MAX_RING_BYTES >> 10,
		       "a ring size in KiB (4 .. 1048576)", &n))
		cfg->ring_bytes = (size_t)n << 10;
	if (env_number("RINGTRACE_FLUSH_MS", 1, MAX_FLUSH_MS,
		       "a flush interval in milliseconds (1 .. 60000)", &n))
		cfg->flush_ms = (unsigned)n;
	if (env_number("RINGTRACE_CACHE_MB", 0, MAX_CACHE_MB,
		       "a page cache size in MiB (0 .. 1048576)", &n))
		cfg->cache_mb = (unsigned)n;
	if (env_number("RINGTRACE_STOP_TIMEOUT_MS", 0, MAX_STOP_MS,
		       "a timeout in milliseconds (0 .. 3600000)", &n))
		cfg->stop_timeout_ms = (unsigned)n;
	env_choice("RINGTRACE_ON_FULL", on_full_choices, "drop or block", &cfg->on_full);
	env_choice("RINGTRACE_IO", io_choices, "auto, uring or sync", &cfg->io);
	env_choice("RINGTRACE_CLOCK", clock_choices, "auto, monotonic or tsc", &cfg->clock);
	env_categories(&cfg->categories);
	env_choice("RINGTRACE_COMPRESS", compress_choices, "auto, none, gzip or gzip-members",
		   &cfg->compress);
}

long rtr__env_rank(long *world_size)
{
	static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
					    "SLURM_PROCID", "MV2_COMM_WORLD_RANK"};
	static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
					    "MV2_COMM_WORLD_SIZE"};
	long rank = -1;

	*world_size = -1;
	for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]) && rank < 0; i++) {
		const char *v = getenv(ranks[i]);
		char *end;
		if (v != NULL && *v != '\0') {
			long r = strtol(v, &end, 10);
			if (*end == '\0' && r >= 0)
				rank = r;
		}
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && *world_size < 0; i++) {
		const char *v = getenv(sizes[i]);
		char *end;
		if (v != NULL && *v != '\0') {
			long r = strtol(v, &end, 10);
			if (*end == '\0' && r > 0)
				*world_size = r;
		}
	}
	return rank;
}

int rtr__path_expand(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		     long rank)
{
	size_t o = 0;

	if (pattern == NULL || *pattern == '\0')
		return -EINVAL;
	for (const char *p = pattern; *p != '\0'; p++) {
		char num[24];
		const char *piece = num;
		if (*p != '%') {
			num[0] = *p;
			num[1] = '\0';
		} else {
			switch (*++p) {
			case 'p':
				snprintf(num, sizeof(num), "%ld", (long)pid);
				break;
			case 'h':
				piece = host;
				break;
			case 'r':
				snprintf(num, sizeof(num), "%ld", rank < 0 ? 0L : rank);
				break;
			case '%':
				num[0] = '%';
				num[1] = '\0';
				break;
			default:
				return -EINVAL; /* unknown or trailing '%' */
			}
		}
		size_t len = strlen(piece);
		if (o + len >= size)
			return -ENAMETOOLONG;
		memcpy(out + o, piece, len);
		o += len;
	}
	out[o] = '\0';
	return 0;
}

static void copy_string(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

int rtr__session_config(struct rtr__session *s, const struct rtr_config *cfg)
{
	if (cfg->ring_bytes < MIN_RING_BYTES || cfg->ring_bytes > MAX_RING_BYTES ||
	    (cfg->on_full != RTR_ON_FULL_DROP && cfg->on_full != RTR_ON_FULL_BLOCK) ||
	    cfg->flush_ms < 1 || cfg->flush_ms > MAX_FLUSH_MS || cfg->cache_mb > MAX_CACHE_MB ||
	    cfg->stop_timeout_ms > MAX_STOP_MS ||
	    (cfg->io != RTR_IO_AUTO && cfg->io != RTR_IO_URING && cfg->io != RTR_IO_SYNC) ||
	    (cfg->clock != RTR_CLOCK_AUTO && cfg->clock != RTR_CLOCK_MONOTONIC &&
	     cfg->clock != RTR_CLOCK_TSC) ||
	    (cfg->compress != RTR_COMPRESS_AUTO && cfg->compress != RTR_COMPRESS_NONE &&
	     cfg->compress != RTR_COMPRESS_GZIP && cfg->compress != RTR_COMPRESS_GZIP_MEMBERS))
		return -EINVAL;

	s->cfg = *cfg;
	if (gethostname(s->host, sizeof(s->host)) != 0)
		copy_string(s->host, sizeof(s->host), "localhost");
	s->host[sizeof(s->host) - 1] = '\0';
	s->rank = rtr__env_rank(&s->world_size);
	int err = rtr__path_expand(s->path, sizeof(s->path), cfg->path, s->pid, s->host, s->rank);
	if (err != 0)
		return err;
	copy_string(s->process_name, sizeof(s->process_name),
		    cfg->process_name != NULL && *cfg->process_name != '\0'
			    ? cfg->process_name
			    : program_invocation_short_name);
	s->cfg.path = s->path;
	s->cfg.process_name = s->process_name;
	/* A bad list set in code is -EINVAL like any bad field; one from the environment
	 * was already reported and left out by rtr_config_init(). */
	char why[128];
	if (rtr__filter_parse(cfg->categories, &s->filter, why, sizeof(why)) != 0)
		return -EINVAL;
	copy_string(s->categories, sizeof(s->categories), s->filter.n > 0 ? cfg->categories : "");
	s->cfg.categories = s->filter.n > 0 ? s->categories : NULL;
	if (s->cfg.compress == RTR_COMPRESS_AUTO) {
		/* by the expanded path, so "trace-%r.json.gz" works too */
		size_t len = strlen(s->path);
		s->cfg.compress = len >= 3 && strcmp(s->path + len - 3, ".gz") == 0
					  ? RTR_COMPRESS_GZIP
					  : RTR_COMPRESS_NONE;
	}
	return 0;
}
