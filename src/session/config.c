/* SPDX-License-Identifier: MIT */
/*
 * Configuration: defaults, RINGTRACE_* environment overrides, validation, the file
 * path pattern, all from one option table. A bad value is reported once on stderr and the default
 * kept: a typo in a job script must never stop the job.
 */
#include "clock/clock.h"
#include "common/launcher.h"
#include "common/names.h"
#include "path/path.h"
#include "session/session.h"
#include "session/signal_names.h"

#include <errno.h>
#include <stddef.h>
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
#define MAX_SEGMENT_MB	   (1u << 20)
#define MAX_SEGMENT_S	   31536000u /* a year */
#define MAX_KEEP	   1000000u
#define DEFAULT_FLIGHT_MB  64u
#define MAX_FLIGHT_MB	   65536u
#define MAX_CLOCK_OFFSET   1000000000000000ll /* about 11.6 days, in ns */
#define OFFSET_EXPECTED	   "an offset in nanoseconds (-1e15 .. 1e15)"

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
static const struct choice format_choices[] = {{"auto", RTR_FORMAT_AUTO},
					       {"json", RTR_FORMAT_JSON},
					       {"perfetto", RTR_FORMAT_PERFETTO},
					       {"pftrace", RTR_FORMAT_PERFETTO},
					       {NULL, 0}};
static const struct choice mode_choices[] = {{"stream", RTR_MODE_STREAM},
					     {"flight", RTR_MODE_FLIGHT},
					     {"profile", RTR_MODE_PROFILE},
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

/*
 * The option table: every field of struct rtr_config that has a default, an
 * environment variable and a range, in one row. It drives rtr_config_init() (defaults,
 * then the environment, in table order), the defaults of fields past an older
 * caller's size, and the range checks of rtr_start(). A bad value in the environment
 * warns and keeps the default; one set in code makes rtr_start() return -EINVAL.
 */
enum opt_type {
	OPT_STRING,	/* const char *; the environment's value as is */
	OPT_CATEGORIES, /* const char *; a category list (producer/filter.h) */
	OPT_SIZE,	/* size_t; decimal in [lo, hi], times 1 << shift */
	OPT_UNSIGNED,	/* unsigned; decimal in [lo, hi] */
	OPT_CHOICE,	/* int; one of choices, case-blind */
	OPT_SIGNALS,	/* const char *; a signal list (session/signals.h), `hi` names at most */
	OPT_PROCESS,	/* no field: read by its own module (rtr__config_clock_offset_ns()) */
};

struct option {
	const char *env; /* RINGTRACE_* */
	enum opt_type type;
	size_t offset; /* of the field in struct rtr_config */
	size_t width;  /* of the field */
	const char *def_str;
	unsigned long long def; /* in the field's unit */
	unsigned long long lo, hi;
	unsigned shift; /* environment unit: field = value << shift */
	const struct choice *choices;
	const char *expected; /* "... is not <expected>" */
};

#define FIELD(f) offsetof(struct rtr_config, f), sizeof(((struct rtr_config *)0)->f)

static const struct option options[] = {
	{"RINGTRACE_FILE", OPT_STRING, FIELD(path), .def_str = DEFAULT_PATH},
	{"RINGTRACE_PROCESS_NAME", OPT_STRING, FIELD(process_name), .def_str = NULL},
	{"RINGTRACE_RING_KB", OPT_SIZE, FIELD(ring_bytes), .def = DEFAULT_RING_BYTES,
	 .lo = MIN_RING_BYTES >> 10, .hi = MAX_RING_BYTES >> 10, .shift = 10,
	 .expected = "a ring size in KiB (4 .. 1048576)"},
	{"RINGTRACE_FLUSH_MS", OPT_UNSIGNED, FIELD(flush_ms), .def = DEFAULT_FLUSH_MS, .lo = 1,
	 .hi = MAX_FLUSH_MS, .expected = "a flush interval in milliseconds (1 .. 60000)"},
	{"RINGTRACE_CACHE_MB", OPT_UNSIGNED, FIELD(cache_mb), .def = DEFAULT_CACHE_MB, .lo = 0,
	 .hi = MAX_CACHE_MB, .expected = "a page cache size in MiB (0 .. 1048576)"},
	{"RINGTRACE_STOP_TIMEOUT_MS", OPT_UNSIGNED, FIELD(stop_timeout_ms), .def = DEFAULT_STOP_MS,
	 .lo = 0, .hi = MAX_STOP_MS, .expected = "a timeout in milliseconds (0 .. 3600000)"},
	{"RINGTRACE_ON_FULL", OPT_CHOICE, FIELD(on_full), .def = RTR_ON_FULL_DROP,
	 .choices = on_full_choices, .expected = "drop or block"},
	{"RINGTRACE_IO", OPT_CHOICE, FIELD(io), .def = RTR_IO_AUTO, .choices = io_choices,
	 .expected = "auto, uring or sync"},
	{"RINGTRACE_CLOCK", OPT_CHOICE, FIELD(clock), .def = RTR_CLOCK_AUTO,
	 .choices = clock_choices, .expected = "auto, monotonic or tsc"},
	{"RINGTRACE_CATEGORIES", OPT_CATEGORIES, FIELD(categories), .def_str = NULL},
	{"RINGTRACE_COMPRESS", OPT_CHOICE, FIELD(compress), .def = RTR_COMPRESS_AUTO,
	 .choices = compress_choices, .expected = "auto, none, gzip or gzip-members"},
	/* version 2 */
	{"RINGTRACE_MAX_MB", OPT_UNSIGNED, FIELD(max_mb), .def = 0, .lo = 0, .hi = MAX_SEGMENT_MB,
	 .expected = "a segment size in MiB (0 .. 1048576)"},
	{"RINGTRACE_MAX_SECONDS", OPT_UNSIGNED, FIELD(max_seconds), .def = 0, .lo = 0,
	 .hi = MAX_SEGMENT_S, .expected = "a segment length in seconds (0 .. 31536000)"},
	{"RINGTRACE_KEEP", OPT_UNSIGNED, FIELD(keep), .def = 0, .lo = 0, .hi = MAX_KEEP,
	 .expected = "a number of segments (0 .. 1000000)"},
	{"RINGTRACE_MODE", OPT_CHOICE, FIELD(mode), .def = RTR_MODE_STREAM, .choices = mode_choices,
	 .expected = "stream, flight or profile"},
	{"RINGTRACE_FLIGHT_MB", OPT_UNSIGNED, FIELD(flight_mb), .def = DEFAULT_FLIGHT_MB, .lo = 1,
	 .hi = MAX_FLIGHT_MB, .expected = "a window size in MiB (1 .. 65536)"},
	{"RINGTRACE_FLIGHT_AT_EXIT", OPT_UNSIGNED, FIELD(flight_at_exit), .def = 1, .lo = 0,
	 .hi = 1, .expected = "0 or 1"},
	{"RINGTRACE_SIGNALS", OPT_SIGNALS, FIELD(signals), .def_str = NULL, .hi = 64,
	 .expected = "a list of signals such as TERM,INT,USR1"},
	{"RINGTRACE_SNAPSHOT_SIGNAL", OPT_SIGNALS, FIELD(snapshot_signal), .def_str = NULL, .hi = 1,
	 .expected = "one signal such as USR2"},
	/* version 3 */
	{"RINGTRACE_FORMAT", OPT_CHOICE, FIELD(format), .def = RTR_FORMAT_AUTO,
	 .choices = format_choices, .expected = "auto, json or perfetto"},
	/* version 4 */
	{"RINGTRACE_OPEN_TIMEOUT_MS", OPT_UNSIGNED, FIELD(open_timeout_ms),
	 .def = RTR_OPEN_TIMEOUT_STOP, .lo = 0, .hi = MAX_STOP_MS,
	 .expected = "a timeout in milliseconds (0 .. 3600000)"},
	{"RINGTRACE_PF_COMPRESS", OPT_UNSIGNED, FIELD(pf_compress), .def = 1, .lo = 0, .hi = 1,
	 .expected = "0 or 1"},
	/* version 5 */
	{"RINGTRACE_PROFILE", OPT_UNSIGNED, FIELD(profile), .def = 0, .lo = 0, .hi = 1,
	 .expected = "0 or 1"},
	{"RINGTRACE_PROFILE_DEPTH", OPT_UNSIGNED, FIELD(profile_depth), .def = 64, .lo = 1,
	 .hi = 1024, .expected = "a depth (1 .. 1024)"},
	{"RINGTRACE_PROFILE_NODES", OPT_UNSIGNED, FIELD(profile_nodes), .def = 100000, .lo = 16,
	 .hi = 16777216, .expected = "a number of call paths (16 .. 16777216)"},
	/* not in struct rtr_config: a testing aid read by the clock (clock/clock.c) */
	{"RINGTRACE_CLOCK_OFFSET_NS", OPT_PROCESS, 0, 0, .expected = OFFSET_EXPECTED},
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

/* The first layout of struct rtr_config, the one a size of 0 stands for. */
#define CONFIG_V1_SIZE (offsetof(struct rtr_config, stop_timeout_ms) + sizeof(unsigned))

static void *field(struct rtr_config *cfg, const struct option *o)
{
	return (char *)cfg + o->offset;
}

static void set_number(struct rtr_config *cfg, const struct option *o, unsigned long long v)
{
	switch (o->type) {
	case OPT_SIZE:
		*(size_t *)field(cfg, o) = (size_t)v;
		break;
	case OPT_UNSIGNED:
		*(unsigned *)field(cfg, o) = (unsigned)v;
		break;
	default:
		*(int *)field(cfg, o) = (int)v;
		break;
	}
}

static unsigned long long get_number(const struct rtr_config *cfg, const struct option *o)
{
	const void *f = (const char *)cfg + o->offset;

	switch (o->type) {
	case OPT_SIZE:
		return *(const size_t *)f;
	case OPT_UNSIGNED:
		return *(const unsigned *)f;
	default:
		return (unsigned long long)(long long)*(const int *)f;
	}
}

/* An unsigned decimal in [lo, hi]; 0 with a warning otherwise. */
static int parse_number(const struct option *o, const char *v, unsigned long long *out)
{
	char *end;

	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || *v == '-' || n < o->lo || n > o->hi) {
		warn_bad(o->env, v, o->expected);
		return 0;
	}
	*out = n << o->shift;
	return 1;
}

static int parse_choice(const struct option *o, const char *v, unsigned long long *out)
{
	for (const struct choice *c = o->choices; c->word != NULL; c++) {
		if (strcasecmp(v, c->word) == 0) {
			*out = (unsigned long long)(long long)c->value;
			return 1;
		}
	}
	warn_bad(o->env, v, o->expected);
	return 0;
}

/* A bad list is reported, and every category recorded. */
static int parse_categories(const char *v)
{
	struct rtr__filter parsed;
	char why[128];

	if (rtr__filter_parse(v, &parsed, why, sizeof(why)) == 0)
		return 1;
	fprintf(stderr,
		"ringtrace: RINGTRACE_CATEGORIES=\"%s\" is not a category list: %s. Expected "
		"names separated by commas, each with an optional '-' to leave it out, as in "
		"\"app,mpi\" or \"-debug,-verbose\"; recording every category\n",
		v, why);
	return 0;
}

/* A bad list is reported, and no signal handled. */
static int parse_signals(const struct option *o, const char *v)
{
	struct rtr__sigset set;
	char why[128];

	if (rtr__signals_parse(v, (unsigned)o->hi, &set, why, sizeof(why)) == 0)
		return 1;
	fprintf(stderr, "ringtrace: %s=\"%s\" is not %s: %s; handling none\n", o->env, v,
		o->expected, why);
	return 0;
}

/* The default of one option, then its environment variable when set and valid. */
static void option_fill(struct rtr_config *cfg, const struct option *o)
{
	const char *v = getenv(o->env);
	unsigned long long n;

	if (o->type == OPT_PROCESS)
		return;
	if (o->type == OPT_STRING || o->type == OPT_CATEGORIES || o->type == OPT_SIGNALS) {
		const char **f = field(cfg, o);
		*f = o->def_str;
		if (v != NULL && *v != '\0' &&
		    (o->type == OPT_STRING ||
		     (o->type == OPT_CATEGORIES ? parse_categories(v) : parse_signals(o, v))))
			*f = v;
		return;
	}
	set_number(cfg, o, o->def);
	if (v == NULL || *v == '\0')
		return;
	if (o->type == OPT_CHOICE ? parse_choice(o, v, &n) : parse_number(o, v, &n))
		set_number(cfg, o, n);
}

/* Whether a value set in code is in the option's range. */
static int option_valid(const struct rtr_config *cfg, const struct option *o)
{
	unsigned long long n;

	switch (o->type) {
	case OPT_STRING:
	case OPT_CATEGORIES:
	case OPT_PROCESS:
		return 1; /* checked where they are used */
	case OPT_SIGNALS: {
		const char *v;
		memcpy(&v, (const char *)cfg + o->offset, sizeof(v));
		struct rtr__sigset set;
		char why[128];
		return v == NULL || *v == '\0' ||
		       rtr__signals_parse(v, (unsigned)o->hi, &set, why, sizeof(why)) == 0;
	}
	case OPT_CHOICE:
		n = get_number(cfg, o);
		for (const struct choice *c = o->choices; c->word != NULL; c++)
			if ((unsigned long long)(long long)c->value == n)
				return 1;
		return 0;
	default:
		n = get_number(cfg, o);
		if (o->offset == offsetof(struct rtr_config, open_timeout_ms) &&
		    n == RTR_OPEN_TIMEOUT_STOP)
			return 1; /* as long as the stop timeout */
		return n >= o->lo << o->shift && n <= o->hi << o->shift;
	}
}

RTR_API void rtr_config_init(struct rtr_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->version = RTR_CONFIG_VERSION;
	for (size_t i = 0; i < NOPTIONS; i++)
		option_fill(cfg, &options[i]);
}

/*
 * The caller's config as this library's struct: the bytes its size covers (0: the
 * first layout; more than ours: a newer header, whose extra fields we cannot know),
 * and the defaults and environment for every field past them.
 */
static void config_complete(struct rtr_config *out, const struct rtr_config *cfg)
{
	size_t n = cfg->size;

	if (n < offsetof(struct rtr_config, path))
		n = CONFIG_V1_SIZE; /* 0: built without rtr_config_init(), the first layout */
	if (n > sizeof(*out))
		n = sizeof(*out);
	memset(out, 0, sizeof(*out));
	memcpy(out, cfg, n);
	for (size_t i = 0; i < NOPTIONS; i++)
		if (options[i].offset + options[i].width > n)
			option_fill(out, &options[i]);
	out->size = sizeof(*out);
	out->version = RTR_CONFIG_VERSION;
}

/*
 * Variables read outside the table, by code that runs before or beside a session:
 * the autostart constructor (recorder.c), the instrument library
 * (instrument/instrument.c), the MPI module (mpi/init.c) and the OpenMP tool
 * (omp/ompt.c). Listed here so that the
 * documentation check (test_abi, against docs/configuration.md) covers them too.
 */
static const char *const env_only[] = {
	"RINGTRACE_AUTOSTART",		"RINGTRACE_INSTRUMENT_MIN_NS",
	"RINGTRACE_INSTRUMENT_DEPTH",	"RINGTRACE_INSTRUMENT_EXCLUDE",
	"RINGTRACE_INSTRUMENT_INCLUDE", "RINGTRACE_INSTRUMENT_LINES",
	"RINGTRACE_MPI_POLLS",		"RINGTRACE_OMP_MUTEX",
};

#define NENV_ONLY (sizeof(env_only) / sizeof(env_only[0]))

const char *rtr__config_option_env(size_t i)
{
	if (i < NOPTIONS)
		return options[i].env;
	i -= NOPTIONS;
	return i < NENV_ONLY ? env_only[i] : NULL;
}

int64_t rtr__config_clock_offset_ns(void)
{
	const char *v = getenv("RINGTRACE_CLOCK_OFFSET_NS");
	char *end;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < -MAX_CLOCK_OFFSET ||
	    n > MAX_CLOCK_OFFSET) {
		warn_bad("RINGTRACE_CLOCK_OFFSET_NS", v, OFFSET_EXPECTED);
		return 0;
	}
	return n;
}

long rtr__env_rank(long *world_size)
{
	*world_size = rtr__launcher_world_size();
	return rtr__launcher_rank();
}

static void copy_string(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

static bool ends_with(const char *s, size_t len, const char *tail)
{
	size_t n = strlen(tail);

	return len >= n && memcmp(s + len - n, tail, n) == 0;
}

/* Whether path names a Perfetto trace: ".pftrace" or ".perfetto-trace", gzip'd or not. */
static bool path_is_perfetto(const char *path)
{
	size_t len = strlen(path);

	if (ends_with(path, len, ".gz"))
		len -= 3;
	return ends_with(path, len, ".pftrace") || ends_with(path, len, ".perfetto-trace");
}

int rtr__session_config(struct rtr__session *s, const struct rtr_config *given)
{
	struct rtr_config full;
	const struct rtr_config *cfg = &full;

	config_complete(&full, given);
	for (size_t i = 0; i < NOPTIONS; i++)
		if (!option_valid(cfg, &options[i]))
			return -EINVAL;
	if (full.mode == RTR_MODE_PROFILE) {
		/* A profile does not grow: no segment fills up; it is written whole, plain. */
		full.max_mb = 0;
		full.compress = RTR_COMPRESS_NONE;
	}

	s->cfg = *cfg;
	if (gethostname(s->host, sizeof(s->host)) != 0)
		copy_string(s->host, sizeof(s->host), "localhost");
	s->host[sizeof(s->host) - 1] = '\0';
	s->rank = rtr__env_rank(&s->world_size);
	s->numbered = cfg->max_mb > 0 || cfg->max_seconds > 0 || cfg->mode == RTR_MODE_FLIGHT;
	int err = cfg->path == NULL || *cfg->path == '\0' ? -EINVAL
		  : s->numbered
			  ? rtr__path_number_pattern(s->pattern, sizeof(s->pattern), cfg->path)
			  : (copy_string(s->pattern, sizeof(s->pattern), cfg->path), 0);
	if (err == 0 && strlen(cfg->path) >= sizeof(s->pattern))
		err = -ENAMETOOLONG;
	if (err == 0)
		err = rtr__path_expand(s->path, sizeof(s->path), s->pattern, s->pid, s->host,
				       s->rank, 0);
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
	struct rtr__sigset set = {0};
	if (cfg->signals != NULL && *cfg->signals != '\0' &&
	    rtr__signals_parse(cfg->signals, 64, &set, why, sizeof(why)) != 0)
		return -EINVAL;
	s->fatal_signals = set.mask;
	copy_string(s->signals, sizeof(s->signals), set.mask != 0 ? cfg->signals : "");
	s->cfg.signals = set.mask != 0 ? s->signals : NULL;
	set.mask = 0;
	if (cfg->snapshot_signal != NULL && *cfg->snapshot_signal != '\0' &&
	    rtr__signals_parse(cfg->snapshot_signal, 1, &set, why, sizeof(why)) != 0)
		return -EINVAL;
	s->snapshot_signal = set.mask != 0 ? __builtin_ctzll(set.mask) + 1 : 0;
	if (s->snapshot_signal != 0 && (s->fatal_signals & set.mask))
		return -EINVAL; /* one signal cannot both finish the file and snapshot it */
	copy_string(s->snapshot_signal_name, sizeof(s->snapshot_signal_name),
		    set.mask != 0 ? cfg->snapshot_signal : "");
	s->cfg.snapshot_signal = set.mask != 0 ? s->snapshot_signal_name : NULL;
	if (s->cfg.compress == RTR_COMPRESS_AUTO) {
		/* by the expanded path, so "trace-%r.json.gz" works too */
		size_t len = strlen(s->path);
		s->cfg.compress = len >= 3 && strcmp(s->path + len - 3, ".gz") == 0
					  ? RTR_COMPRESS_GZIP
					  : RTR_COMPRESS_NONE;
	}
	if (s->cfg.format == RTR_FORMAT_AUTO)
		s->cfg.format = path_is_perfetto(s->path) ? RTR_FORMAT_PERFETTO : RTR_FORMAT_JSON;
	if (s->cfg.open_timeout_ms == RTR_OPEN_TIMEOUT_STOP)
		s->cfg.open_timeout_ms = s->cfg.stop_timeout_ms;
	return 0;
}
