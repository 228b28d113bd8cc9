/* SPDX-License-Identifier: MIT */
/*
 * gen_ranks: writes N rank traces of a made-up MPI job as the recorder and the MPI
 * module write them (docs/format.md, docs/mpi.md), with a known pattern and known
 * injected delays, and expected.json beside them saying what was injected
 * (bench/README.md). One rank's file at a time, streamed: no rank's events are kept.
 *
 *	gen_ranks [-n RANKS] [-i ITERATIONS] [-o PATTERN] [--manifest] ...
 */
#include "gen_ranks.h"
#include "path/path.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PID_BASE	   20000
#define REALTIME_BASE_NS   INT64_C(1796000000000000000) /* rank 0's CLOCK_REALTIME at its 0 */
#define RANK_START_STEP_NS 3000		      /* rank r's recorder starts r * this after rank 0's */
#define START_NS	   INT64_C(980000000) /* rank 0's recorder starts here: MPI_Init takes 20 ms */

struct options {
	struct gen_job job;
	const char *pattern;
	const char *expected;
	double drift_ppm; /* rank r's clock runs r x this many ppm fast */
	int manifest;
	int quiet;
};

/* One rank's file: the stream, its clock, its counts. */
struct rank_file {
	FILE *f;
	long rank;
	long pid;
	int64_t origin; /* true ns of its 0 */
	int64_t offset; /* its clock - rank 0's at START_NS */
	double drift;	/* its clock's rate - rank 0's (r x --clock-drift-ppm / 1e6) */
	uint64_t events;
	uint64_t bytes;
};

/* True time t (rank 0's clock) on rf's clock. */
static int64_t local(const struct rank_file *rf, int64_t t)
{
	return t + rf->offset + (int64_t)((double)(t - START_NS) * rf->drift);
}

/* t on rf's timeline: from its origin, its clock's ns. */
static int64_t rel(const struct rank_file *rf, int64_t t)
{
	return local(rf, t) - local(rf, rf->origin);
}

/* µs with up to three decimals from ns (docs/format.md): never negative here. */
static int put_us(char *out, int64_t ns)
{
	int64_t us = ns / 1000, frac = ns % 1000;

	if (frac == 0)
		return sprintf(out, "%" PRId64, us);
	int n = sprintf(out, "%" PRId64 ".%03" PRId64, us, frac);
	while (out[n - 1] == '0')
		out[--n] = '\0';
	return n;
}

static void line(struct rank_file *rf, const char *text)
{
	size_t len = strlen(text);

	fwrite(text, 1, len, rf->f);
	fwrite(",\n", 1, 2, rf->f);
	rf->bytes += len + 2;
}

/* An X slice in category mpi or app, [begin, end) true ns, args as JSON text (or NULL). */
static void slice(struct rank_file *rf, const char *cat, const char *name, int64_t begin,
		  int64_t end, const char *args)
{
	char buf[512], ts[32], dur[32];

	put_us(ts, rel(rf, begin));
	put_us(dur, local(rf, end) - local(rf, begin));
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"ts\":%s,\"dur\":%s,\"pid\":%ld,"
		 "\"tid\":%ld%s%s%s}",
		 cat, name, ts, dur, rf->pid, rf->pid, args != NULL ? ",\"args\":{" : "",
		 args != NULL ? args : "", args != NULL ? "}" : "");
	line(rf, buf);
	rf->events += 2; /* a B and its E */
}

static void flow(struct rank_file *rf, const struct gen_flow *fl, long seq)
{
	char buf[256], ts[32];

	put_us(ts, rel(rf, fl->at));
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"%s,\"cat\":\"mpi\",\"name\":\"message\",\"ts\":%s,\"id\":\"0x%" PRIx64
		 "\",\"pid\":%ld,\"tid\":%ld}",
		 fl->send ? "s\"" : "f\",\"bp\":\"e\"", ts,
		 gen_flow_id(fl->src, fl->dst, fl->tag, seq), rf->pid, rf->pid);
	line(rf, buf);
	rf->events++;
}

/* A clock measurement at true time at (docs/mpi.md "Clock sync"). */
static void clock_sync(struct rank_file *rf, int64_t at)
{
	char buf[512], ts[32];
	int zero = rf->rank == 0;

	put_us(ts, rel(rf, at));
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"ringtrace\",\"name\":\"ringtrace: clock "
		 "sync\",\"ts\":%s,\"pid\":%ld,\"tid\":%ld,\"args\":{\"reference_rank\":0,"
		 "\"rank\":%ld,\"at_ns\":%" PRId64 ",\"offset_ns\":%" PRId64 ",\"error_ns\":%d,"
		 "\"rtt_ns\":%d,\"rounds\":50}}",
		 ts, rf->pid, rf->pid, rf->rank, local(rf, at), at - local(rf, at), zero ? 0 : 300,
		 zero ? 0 : 600);
	line(rf, buf);
	rf->events++;
}

static void host_of(const struct gen_job *job, long r, char *out, size_t size)
{
	snprintf(out, size, "node%03ld", r / job->ranks_per_host);
}

static void start_marker(struct rank_file *rf, const struct gen_job *job)
{
	char buf[1024], host[32];

	host_of(job, rf->rank, host, sizeof(host));
	snprintf(buf, sizeof(buf),
		 "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,\"pid\":%ld,"
		 "\"tid\":%ld,\"args\":{\"origin_monotonic_ns\":\"%" PRId64
		 "\",\"origin_realtime_ns\":\"%" PRId64 "\",\"host\":\"%s\",\"pid\":%ld,"
		 "\"rank\":%ld,\"world_size\":%ld,\"version\":\"0.1.0\",\"clock\":\"tsc\","
		 "\"io\":\"io_uring\",\"ring_bytes\":1048576,\"on_full\":\"drop\",\"flush_ms\":100,"
		 "\"compress\":\"none\",\"cache_mb\":64}}",
		 rf->pid, rf->pid, local(rf, rf->origin), REALTIME_BASE_NS + rf->origin, host,
		 rf->pid, rf->rank, job->ranks);
	line(rf, buf);
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":%ld,\"args\":{"
		 "\"name\":\"rank %ld\"}}",
		 rf->pid, rf->pid, rf->rank);
	line(rf, buf);
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%ld,\"args\":{"
		 "\"name\":\"solver\"}}",
		 rf->pid, rf->pid);
	line(rf, buf);
}

static void end_marker(struct rank_file *rf, int64_t at)
{
	char buf[512], ts[32];

	put_us(ts, rel(rf, at));
	snprintf(buf, sizeof(buf),
		 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":%s,\"pid\":%ld,"
		 "\"tid\":%ld,\"args\":{\"final\":true,\"events\":%" PRIu64 ",\"dropped\":0,"
		 "\"dropped_ring_full\":0,\"dropped_too_large\":0,\"dropped_io\":0,"
		 "\"dropped_reentrant\":0,\"dropped_corrupt\":0,\"dropped_no_track\":0,"
		 "\"args_cut\":0,\"threads\":1,\"bytes\":%" PRIu64 "}}\n]\n",
		 ts, rf->pid, rf->pid, rf->events, rf->bytes);
	fputs(buf, rf->f);
}

/* A collective's args: bytes, comm_size, comm (MPI_COMM_WORLD: 1), seq. */
static void collective(struct rank_file *rf, const struct gen_job *job, const char *name,
		       int64_t begin, int64_t end, int bytes, long seq)
{
	char args[128];

	snprintf(args, sizeof(args), "\"bytes\":%d,\"comm_size\":%ld,\"comm\":1,\"seq\":%ld", bytes,
		 job->ranks, seq);
	slice(rf, "mpi", name, begin, end, args);
}

static void iteration(struct rank_file *rf, const struct gen_job *job, long i, long *seq)
{
	struct gen_iteration it;
	char args[96];

	gen_model_iteration(job, rf->rank, i, &it);
	for (int k = 0; k < it.nhalo; k++) {
		const struct gen_halo_call *c = &it.halo[k];
		for (int f = 0; f < c->nflows; f++)
			flow(rf, &c->flows[f], i + 1);
		if (c->count > 0)
			snprintf(args, sizeof(args), "\"count\":%d", c->count);
		else
			snprintf(args, sizeof(args), "\"peer\":%d,\"tag\":%d,\"bytes\":8", c->peer,
				 c->tag);
		slice(rf, "mpi", c->name, c->begin, c->end, args);
	}
	slice(rf, "app", "compute", it.compute_begin, it.compute_end, NULL);
	slice(rf, "app", job->region_name, it.region_begin, it.region_end, NULL);
	collective(rf, job, "MPI_Allreduce", it.allreduce_enter, gen_allreduce_leave(rf->rank, i),
		   8, ++*seq);
	if (gen_barrier_last_enter(i) != 0)
		collective(rf, job, "MPI_Barrier", gen_barrier_enter(rf->rank, i),
			   gen_barrier_leave(rf->rank, i), 0, ++*seq);
}

/* Rank r's file, start to end. 0 or -errno. */
static int write_rank(const struct options *o, long r, const char *path)
{
	const struct gen_job *job = &o->job;
	static char buf[1 << 20];
	struct rank_file rf = {.rank = r, .pid = PID_BASE + r};
	long seq = 0;

	rf.f = fopen(path, "w");
	if (rf.f == NULL)
		return -errno;
	setvbuf(rf.f, buf, _IOFBF, sizeof(buf));
	rf.origin = START_NS + r * RANK_START_STEP_NS;
	rf.offset = job->offset_step_ns * r;
	rf.drift = o->drift_ppm * 1e-6 * (double)r;
	start_marker(&rf, job);
	int64_t init_end = gen_job_begin() + (r % 8) * 100; /* the skew of gen_model.c */
	slice(&rf, "mpi", "MPI_Init", rf.origin + 18000, init_end, NULL);
	char sort[160];
	snprintf(sort, sizeof(sort),
		 "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%ld,\"tid\":%ld,"
		 "\"args\":{\"sort_index\":%ld}}",
		 rf.pid, rf.pid, r);
	line(&rf, sort);
	rf.events++;
	clock_sync(&rf, init_end + 50000);
	for (long i = 0; i < job->iterations; i++)
		iteration(&rf, job, i, &seq);
	int64_t end = gen_job_end(r);
	clock_sync(&rf, end + 50000);
	slice(&rf, "mpi", "MPI_Finalize", end + 60000, end + 5060000, NULL);
	end_marker(&rf, end + 5070000);
	int err = ferror(rf.f) ? -EIO : 0;
	if (fclose(rf.f) != 0 && err == 0)
		err = -errno;
	return err;
}

/* The manifest's directory (with its '/'), which every rank's file is below. */
static size_t manifest_dir(const char *manifest)
{
	const char *slash = strrchr(manifest, '/');

	return slash != NULL ? (size_t)(slash - manifest) + 1 : 0;
}

static uint64_t gen_file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The n-th collective on MPI_COMM_WORLD of iteration i's Allreduce (from 1). */
static long allreduce_seq(const struct gen_job *job, long i)
{
	return i + 1 + (job->barrier_every > 0 ? i / job->barrier_every : 0);
}

static void expected_injected(FILE *e, const struct gen_job *job)
{
	const char *sep = "";

	fputs(",\n\"injected\":[", e);
	if (job->late_rank >= 0) {
		fprintf(e,
			"\n{\"kind\":\"late_sender\",\"rank\":%ld,\"receiver\":%ld,"
			"\"iteration\":%ld,\"call_path\":\"%s\",\"wait_call_path\":\"%s\","
			"\"tag\":2,\"amount_ns\":%" PRId64 ",\"collective\":{\"name\":"
			"\"MPI_Allreduce\",\"comm\":1,\"seq\":%ld}}",
			job->late_rank, (job->late_rank + 1) % job->ranks, job->late_iteration,
			job->blocking ? "MPI_Send" : "MPI_Isend",
			job->blocking ? "MPI_Recv" : "MPI_Waitall", job->late_ns,
			allreduce_seq(job, job->late_iteration));
		sep = ",";
	}
	if (job->slow_rank >= 0) {
		fprintf(e,
			"%s\n{\"kind\":\"slow_rank\",\"rank\":%ld,\"factor\":%g,"
			"\"call_path\":\"compute\",\"iterations\":%ld,\"amount_ns\":%" PRId64
			",\"waits_at\":[\"MPI_Allreduce\"]}",
			sep, job->slow_rank, job->slow_factor, job->iterations,
			(int64_t)((double)job->compute_ns * (job->slow_factor - 1)));
		sep = ",";
	}
	if (job->region_growth > 0) {
		double g = job->region_growth, mean = 1 + g / 2;
		fprintf(e,
			"%s\n{\"kind\":\"imbalance\",\"call_path\":\"%s\",\"growth\":%g,"
			"\"min_ns\":%" PRId64 ",\"max_ns\":%" PRId64 ",\"mean_ns\":%.1f,"
			"\"min_rank\":0,\"max_rank\":%ld,\"imbalance\":%.6f}",
			sep, job->region_name, g, job->region_ns,
			(int64_t)((double)job->region_ns * (1 + g)), (double)job->region_ns * mean,
			job->ranks - 1, (1 + g) / mean);
	}
	fputs("\n]}\n", e);
}

/* expected.json: the job and what was injected into it (bench/README.md). */
static int gen_write_expected(const struct options *o, const char *manifest)
{
	const struct gen_job *job = &o->job;
	char path[PATH_MAX];
	size_t dir = manifest_dir(manifest);

	if (o->expected != NULL)
		snprintf(path, sizeof(path), "%s", o->expected);
	else
		snprintf(path, sizeof(path), "%.*sexpected.json", (int)dir, manifest);
	FILE *e = fopen(path, "w");
	if (e == NULL)
		return fprintf(stderr, "gen_ranks: %s: %s\n", path, strerror(errno)), -1;
	fprintf(e,
		"{\"schema_version\":1,\"type\":\"ringtrace generated job\",\"ranks\":%ld,"
		"\"iterations\":%ld,\"barrier_every\":%ld,\"halo\":\"%s\","
		"\"pattern\":\"%s\",\"manifest\":%s%s%s,\"ranks_per_host\":%d,"
		"\"clock_offset_ns_per_rank\":%" PRId64 ",\"clock_drift_ppm_per_rank\":%g,"
		"\"compute_ns\":%" PRId64 ","
		"\"region\":\"%s\",\"region_ns\":%" PRId64 ",\"noise_ns\":5000,"
		"\"collectives_per_iteration\":\"MPI_Allreduce, then MPI_Barrier every "
		"barrier_every-th\"",
		job->ranks, job->iterations, job->barrier_every, job->blocking ? "send" : "isend",
		o->pattern, o->manifest ? "\"" : "", o->manifest ? manifest + dir : "null",
		o->manifest ? "\"" : "", job->ranks_per_host, job->offset_step_ns, o->drift_ppm,
		job->compute_ns, job->region_name, job->region_ns);
	expected_injected(e, job);
	return fclose(e) == 0 ? 0 : -1;
}

/* "A:B:C" (arg is cut at each ':') into outs by kinds' letters: l a long, d a double,
 * s a string. 0, or -1 for a part missing, left over or not a number. */
static int parse_parts(char *arg, const char *kinds, void **outs)
{
	char *p = arg;

	for (size_t k = 0; kinds[k] != '\0'; k++) {
		char *colon = strchr(p, ':'), *end;
		if ((kinds[k + 1] != '\0') != (colon != NULL))
			return -1;
		if (colon != NULL)
			*colon = '\0';
		if (kinds[k] == 's') {
			*(const char **)outs[k] = p;
			end = p + strlen(p);
		} else if (kinds[k] == 'l') {
			*(long *)outs[k] = strtol(p, &end, 10);
		} else {
			*(double *)outs[k] = strtod(p, &end);
		}
		if (end == p || *end != '\0')
			return -1;
		if (colon != NULL)
			p = colon + 1;
	}
	return 0;
}

enum {
	OPT_MANIFEST = 256,
	OPT_EXPECTED,
	OPT_BARRIER,
	OPT_BLOCKING,
	OPT_COMPUTE,
	OPT_REGION,
	OPT_REGION_US,
	OPT_OFFSET,
	OPT_PER_HOST,
	OPT_LATE,
	OPT_SLOW,
	OPT_IMBALANCE,
	OPT_QUIET,
	OPT_DRIFT
};

static const struct option long_options[] = {
	{"manifest", no_argument, NULL, OPT_MANIFEST},
	{"expected", required_argument, NULL, OPT_EXPECTED},
	{"barrier-every", required_argument, NULL, OPT_BARRIER},
	{"blocking", no_argument, NULL, OPT_BLOCKING},
	{"compute-us", required_argument, NULL, OPT_COMPUTE},
	{"region", required_argument, NULL, OPT_REGION},
	{"region-us", required_argument, NULL, OPT_REGION_US},
	{"clock-offset-us", required_argument, NULL, OPT_OFFSET},
	{"clock-drift-ppm", required_argument, NULL, OPT_DRIFT},
	{"ranks-per-host", required_argument, NULL, OPT_PER_HOST},
	{"late-sender", required_argument, NULL, OPT_LATE},
	{"slow-rank", required_argument, NULL, OPT_SLOW},
	{"imbalance", required_argument, NULL, OPT_IMBALANCE},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{NULL, 0, NULL, 0},
};

static int parse_option(int c, char *arg, struct options *o)
{
	struct gen_job *job = &o->job;
	double late_ms = 0, us = 0;

	switch (c) {
	case 'n':
		job->ranks = strtol(arg, NULL, 10);
		return job->ranks >= 2 ? 0 : -1;
	case 'i':
		job->iterations = strtol(arg, NULL, 10);
		return job->iterations >= 1 ? 0 : -1;
	case 'o':
		o->pattern = arg;
		return 0;
	case OPT_MANIFEST:
		o->manifest = 1;
		return 0;
	case OPT_EXPECTED:
		o->expected = arg;
		return 0;
	case OPT_BARRIER:
		job->barrier_every = strtol(arg, NULL, 10);
		return 0;
	case OPT_BLOCKING:
		job->blocking = 1;
		return 0;
	case OPT_COMPUTE:
		job->compute_ns = (int64_t)(strtod(arg, NULL) * 1000);
		return 0;
	case OPT_REGION:
		job->region_name = arg;
		return 0;
	case OPT_REGION_US:
		job->region_ns = (int64_t)(strtod(arg, NULL) * 1000);
		return 0;
	case OPT_OFFSET:
		job->offset_step_ns = (int64_t)(strtod(arg, NULL) * 1000);
		return 0;
	case OPT_DRIFT:
		o->drift_ppm = strtod(arg, NULL);
		return o->drift_ppm >= 0 && o->drift_ppm <= 1000 ? 0 : -1;
	case OPT_PER_HOST:
		job->ranks_per_host = (int)strtol(arg, NULL, 10);
		return job->ranks_per_host >= 1 ? 0 : -1;
	case OPT_LATE:
		if (parse_parts(arg, "lld",
				(void *[]){&job->late_rank, &job->late_iteration, &late_ms}) != 0 ||
		    late_ms <= 0)
			return -1;
		job->late_ns = (int64_t)(late_ms * 1e6);
		return 0;
	case OPT_SLOW:
		return parse_parts(arg, "ld", (void *[]){&job->slow_rank, &job->slow_factor}) !=
					       0 ||
				       job->slow_factor < 1
			       ? -1
			       : 0;
	case OPT_IMBALANCE:
		return parse_parts(arg, "sd", (void *[]){&job->region_name, &job->region_growth});
	case OPT_QUIET:
		o->quiet = 1;
		return 0;
	default:
		(void)us;
		return -1;
	}
}

static int gen_parse(int argc, char **argv, struct options *o)
{
	int c;

	*o = (struct options){
		.job = {.ranks = 4,
			.iterations = 20,
			.barrier_every = 5,
			.compute_ns = 200000,
			.region_ns = 50000,
			.region_name = "assemble",
			.offset_step_ns = 50000000,
			.late_rank = -1,
			.late_iteration = -1,
			.slow_rank = -1,
			.slow_factor = 1,
			.ranks_per_host = 8},
		.pattern = "gen-%r.json",
	};
	while ((c = getopt_long(argc, argv, "n:i:o:", long_options, NULL)) != -1)
		if (parse_option(c, optarg, o) != 0)
			return -1;
	const struct gen_job *job = &o->job;
	if (optind != argc || job->late_rank >= job->ranks || job->slow_rank >= job->ranks ||
	    job->late_iteration >= job->iterations)
		return -1;
	/* one file a rank: the name must tell them apart */
	if (strstr(o->pattern, "%r") == NULL && strstr(o->pattern, "%p") == NULL) {
		fprintf(stderr, "gen_ranks: -o %s: the pattern needs %%r (or %%p)\n", o->pattern);
		return -1;
	}
	return 0;
}

static void manifest_file(FILE *m, const struct options *o, long r, const char *path,
			  const char *manifest)
{
	char host[32];
	size_t dir = manifest_dir(manifest);

	if (strncmp(path, manifest, dir) == 0)
		path += dir;
	host_of(&o->job, r, host, sizeof(host));
	fprintf(m, "%s\n{\"rank\":%ld,\"host\":\"%s\",\"pid\":%ld,\"path\":\"%s\"}",
		r == 0 ? "" : ",", r, host, PID_BASE + r, path);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int gen_run(const struct options *o)
{
	const struct gen_job *job = &o->job;
	char path[PATH_MAX], failed[PATH_MAX], host[32], manifest[PATH_MAX];
	FILE *m = NULL;
	double t0 = now_s();
	uint64_t bytes = 0;
	int err;

	if (gen_model_init(job) != 0)
		return fprintf(stderr, "gen_ranks: out of memory\n"), 1;
	if (o->manifest) {
		if ((err = rtr__path_job(manifest, sizeof(manifest), o->pattern, PID_BASE,
					 "node000", ".manifest.json")) != 0 ||
		    (err = rtr__path_make_dirs(manifest, failed, sizeof(failed))) != 0 ||
		    (m = fopen(manifest, "w")) == NULL)
			return fprintf(stderr, "gen_ranks: %s: %s\n", manifest,
				       strerror(err != 0 ? -err : errno)),
			       1;
		fprintf(m,
			"{\"schema_version\":1,\"type\":\"ringtrace manifest\","
			"\"pattern\":\"%s\",\"world_size\":%ld,\"files\":[",
			o->pattern, job->ranks);
	}
	for (long r = 0; r < job->ranks; r++) {
		host_of(job, r, host, sizeof(host));
		err = rtr__path_expand(path, sizeof(path), o->pattern, (pid_t)(PID_BASE + r), host,
				       r, 0);
		if (err == 0 && (err = rtr__path_make_dirs(path, failed, sizeof(failed))) != 0)
			fprintf(stderr, "gen_ranks: cannot create the directory %s\n", failed);
		if (err == 0)
			err = write_rank(o, r, path);
		if (err != 0)
			return fprintf(stderr, "gen_ranks: %s: %s\n", path, strerror(-err)), 1;
		if (m != NULL)
			manifest_file(m, o, r, path, manifest);
		bytes += gen_file_bytes(path);
	}
	if (m != NULL && (fputs("\n]}\n", m), fclose(m)) != 0)
		return fprintf(stderr, "gen_ranks: %s: %s\n", manifest, strerror(errno)), 1;
	if (m == NULL)
		rtr__path_job(manifest, sizeof(manifest), o->pattern, PID_BASE, "node000",
			      ".manifest.json");
	err = gen_write_expected(o, manifest);
	gen_model_free();
	if (err != 0)
		return 1;
	if (!o->quiet)
		printf("gen_ranks: %ld ranks x %ld iterations: %.1f MB in %.3f s%s%s\n", job->ranks,
		       job->iterations, (double)bytes / 1e6, now_s() - t0,
		       m != NULL ? "; manifest " : "", m != NULL ? manifest : "");
	return 0;
}

static void usage(FILE *to)
{
	fputs("usage: gen_ranks [-n RANKS] [-i ITERATIONS] [-o PATTERN] [--manifest]\n"
	      "                 [--expected FILE] [--barrier-every K] [--blocking]\n"
	      "                 [--compute-us US] [--region NAME] [--region-us US]\n"
	      "                 [--clock-offset-us US] [--clock-drift-ppm P]\n"
	      "                 [--ranks-per-host N]\n"
	      "                 [--late-sender RANK:ITERATION:MS] [--slow-rank RANK:FACTOR]\n"
	      "                 [--imbalance NAME:GROWTH] [--quiet]\n",
	      to);
}

int main(int argc, char **argv)
{
	struct options o;

	if (gen_parse(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	return gen_run(&o);
}
