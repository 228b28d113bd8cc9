/* SPDX-License-Identifier: MIT */
/*
 * demo — a small job shaped like an HPC code, recorded with ringtrace.
 *
 * The main thread starts the recorder and four worker threads. Each worker owns a
 * strip of a 1-D heat-diffusion grid and runs the same timestep again and again:
 *
 *	timestep			rtr_begin_args / rtr_end, with the step number
 *	  halo exchange			rtr_begin / rtr_end: read the neighbours' edge cells
 *	  compute			RTR_SCOPE, covering two nested kernel scopes:
 *	    stencil			  Jacobi sweeps over the strip
 *	    dot				  the strip's energy, a dot product
 *	  async copy			rtr_complete with timestamps taken by rtr_now_ns()
 *	  barrier			rtr_begin / rtr_end around pthread_barrier_wait()
 *
 * The last worker through the barrier reduces the residual (a counter track) and,
 * every few steps, records a checkpoint (instants with arguments). Memory the job
 * allocates is a second counter track that rises and falls with each step.
 *
 *	./demo [steps]		default 50 steps, a second or two
 *
 * The trace goes to $RINGTRACE_FILE, or to demo-trace.json in the current directory.
 * Every other RINGTRACE_* variable applies as well (docs/configuration.md).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringtrace.h>

#define NWORKERS	 4
#define CELLS		 (1 << 15) /* grid cells per worker */
#define SWEEPS		 600	   /* stencil sweeps per timestep */
#define ALPHA		 0.25	   /* diffusion number; stable below 0.5 */
#define CHECKPOINT_EVERY 10	   /* steps between checkpoints */
#define DEFAULT_STEPS	 50

/* State the workers share. */
struct job {
	int steps;
	pthread_barrier_t barrier;
	/*
	 * Exchange slots, double-buffered by step parity. Step s writes slot s & 1
	 * before the barrier ending step s; step s + 1 reads it after that barrier.
	 * The slot is written again only in step s + 2, after the barrier ending
	 * step s + 1, which every reader has reached by then.
	 */
	double edges[2][NWORKERS][2]; /* [parity][worker][0 = first cell, 1 = last cell] */
	double partial[2][NWORKERS];  /* each worker's sum of squared updates */
	atomic_llong mem_bytes;	      /* bytes the job has allocated right now */
	int checkpoints;	      /* only the serial thread at the barrier touches it */
};

struct worker {
	struct job *job;
	int id;
	pthread_t thread;
	double *cells; /* one allocation holding u and v */
	double *u;     /* CELLS + 2 cells: u[0] and u[CELLS + 1] are halo cells */
	double *v;     /* the next state, same layout; compute() swaps u and v */
};

/* Account for memory the job allocates (delta > 0) or frees, as a counter track. */
static void job_memory(struct job *job, long long delta)
{
	long long now = atomic_fetch_add(&job->mem_bytes, delta) + delta;

	rtr_counter_i64("job", "memory", now);
}

/*
 * One Jacobi sweep of the heat equation: v = u + ALPHA * (u[i-1] - 2 u[i] + u[i+1]).
 * Returns the sum of the squared updates.
 */
static double stencil_sweep(const double *restrict u, double *restrict v, size_t n)
{
	double sq = 0.0;

	for (size_t i = 1; i <= n; i++) {
		double d = ALPHA * (u[i - 1] - 2.0 * u[i] + u[i + 1]);

		v[i] = u[i] + d;
		sq += d * d;
	}
	return sq;
}

static double dot(const double *a, const double *b, size_t n)
{
	double sum = 0.0;

	for (size_t i = 0; i < n; i++)
		sum += a[i] * b[i];
	return sum;
}

/* Stand-in for network latency, so the exchange is visible in the timeline. */
static void wire_delay(long usec)
{
	struct timespec ts = {0, usec * 1000};

	nanosleep(&ts, NULL);
}

/* Fill u[0] and u[CELLS + 1] from the neighbours' edges of the previous step. */
static void halo_exchange(struct worker *w, int step)
{
	struct job *job = w->job;
	int left = (w->id + NWORKERS - 1) % NWORKERS;
	int right = (w->id + 1) % NWORKERS;
	int prev = (step + 1) & 1; /* parity of step - 1 */

	rtr_begin("comm", "halo exchange");
	wire_delay(100);
	w->u[0] = job->edges[prev][left][1];
	w->u[CELLS + 1] = job->edges[prev][right][0];
	rtr_end("comm", "halo exchange");
}

/* Run the kernels; returns this worker's sum of squared updates in the last sweep. */
static double compute(struct worker *w)
{
	RTR_SCOPE("kernel", "compute");
	double sq = 0.0;
	double energy;

	{
		RTR_SCOPE("kernel", "stencil");
		for (int i = 0; i < SWEEPS; i++) {
			double *t;

			w->v[0] = w->u[0]; /* the halo stays fixed for the whole step */
			w->v[CELLS + 1] = w->u[CELLS + 1];
			sq = stencil_sweep(w->u, w->v, CELLS);
			t = w->u;
			w->u = w->v;
			w->v = t;
		}
	}
	{
		RTR_SCOPE("kernel", "dot");
		energy = dot(w->u + 1, w->u + 1, CELLS);
	}
	/* A thread-scoped instant carrying numbers: shown as an arrow on the thread. */
	if (w->id == 0)
		rtr_instant_v("kernel", "energy", RTR_ARG_F64("energy", energy));
	return sq;
}

/*
 * Copy the strip into a staging buffer, as a code would before an asynchronous
 * device or network transfer. The work is timed with rtr_now_ns() and recorded
 * afterwards with rtr_complete(), the way a device's own timestamps are. The buffer
 * grows and shrinks from step to step, so the memory track moves.
 */
static int async_copy(struct worker *w, int step)
{
	size_t copies = 1 + (size_t)(step % 4);
	size_t bytes = copies * CELLS * sizeof(double);
	double *staging = malloc(bytes);

	if (staging == NULL)
		return -ENOMEM;
	job_memory(w->job, (long long)bytes);

	uint64_t t0 = rtr_now_ns();
	for (size_t c = 0; c < copies; c++)
		memcpy(staging + c * CELLS, w->u + 1, CELLS * sizeof(double));
	uint64_t t1 = rtr_now_ns();
	rtr_complete("copy", "async copy", t0, t1 - t0);

	free(staging);
	job_memory(w->job, -(long long)bytes);
	return 0;
}

/* Runs on the one thread pthread_barrier_wait() picks, after step `step` ends. */
static void end_of_step(struct job *job, int step)
{
	double sum = 0.0;
	char file[32];
	char name[32];

	for (int i = 0; i < NWORKERS; i++)
		sum += job->partial[step & 1][i];
	double residual = sqrt(sum);

	rtr_counter_f64("solver", "residual", residual);

	bool last = step == job->steps - 1;
	if ((step + 1) % CHECKPOINT_EVERY != 0 && !last)
		return;

	/* The demo writes no checkpoint files; it only records where one would go. */
	job->checkpoints++;
	snprintf(file, sizeof(file), "ckpt-%04d.bin", step + 1);
	rtr_instant_v("io", "checkpoint", RTR_ARG_I64("step", step + 1),
		      RTR_ARG_F64("residual", residual),
		      RTR_ARG_STR("kind", last ? "final" : "periodic"),
		      RTR_ARG_STR_COPY("file", file), RTR_ARG_BOOL("converged", residual < 1e-6));
	/* A name built at run time must be copied: the _copy calls do that. */
	snprintf(name, sizeof(name), "checkpoint %d", job->checkpoints);
	rtr_instant_copy("io", name);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct job *job = w->job;
	char name[32];

	snprintf(name, sizeof(name), "worker %d", w->id);
	rtr_thread_name(name); /* copied: the buffer may go away */

	for (int step = 0; step < job->steps; step++) {
		const struct rtr_arg args[] = {
			RTR_ARG_I64("step", step),
			RTR_ARG_I64("cells", CELLS),
		};

		rtr_begin_args("solver", "timestep", args, 2);
		halo_exchange(w, step);
		double sq = compute(w);
		if (async_copy(w, step) != 0)
			fprintf(stderr, "demo: worker %d: out of memory, copy skipped\n", w->id);

		/* Publish this step's results for the reduction and the next exchange. */
		job->partial[step & 1][w->id] = sq;
		job->edges[step & 1][w->id][0] = w->u[1];
		job->edges[step & 1][w->id][1] = w->u[CELLS];

		rtr_begin("sync", "barrier");
		int rc = pthread_barrier_wait(&job->barrier);
		rtr_end("sync", "barrier");
		if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
			end_of_step(job, step);
		rtr_end("solver", "timestep");
	}
	return NULL;
}

/* Parse argv[1]; returns the number of steps or -1. */
static int parse_steps(int argc, char **argv)
{
	char *end;
	long n;

	if (argc < 2)
		return DEFAULT_STEPS;
	if (argc > 2)
		return -1;
	errno = 0;
	n = strtol(argv[1], &end, 10);
	if (errno != 0 || end == argv[1] || *end != '\0' || n < 1 || n > 1000000)
		return -1;
	return (int)n;
}

static void print_path(FILE *out, const char *path)
{
	char cwd[4096];

	if (path[0] != '/' && strcmp(path, "-") != 0 && getcwd(cwd, sizeof(cwd)) != NULL)
		fprintf(out, "trace:    %s/%s\n", cwd, path);
	else
		fprintf(out, "trace:    %s\n", path);
	if (strchr(path, '%') != NULL)
		fprintf(out,
			"          (a pattern: %%p is pid %ld, %%h the host name, %%r the rank)\n",
			(long)getpid());
}

int main(int argc, char **argv)
{
	static struct job job;
	struct worker workers[NWORKERS];
	struct rtr_config cfg;
	struct rtr_stats st = {0};
	size_t grid_bytes = 2 * (CELLS + 2) * sizeof(double);
	int steps = parse_steps(argc, argv);
	int rc;

	if (steps < 0) {
		fprintf(stderr, "usage: %s [steps]    (1 .. 1000000, default %d)\n", argv[0],
			DEFAULT_STEPS);
		return 2;
	}

	/* Defaults plus the RINGTRACE_* environment; our own default file name. */
	rtr_config_init(&cfg);
	const char *file = getenv("RINGTRACE_FILE");
	if (file == NULL || *file == '\0')
		cfg.path = "demo-trace.json";
	rc = rtr_start(&cfg);
	if (rc != 0) {
		fprintf(stderr, "demo: cannot start the recorder on %s: %s\n", cfg.path,
			strerror(-rc));
		return 1;
	}
	rtr_thread_name("main");

	job.steps = steps;
	pthread_barrier_init(&job.barrier, NULL, NWORKERS);
	{
		RTR_SCOPE("job", "setup");
		for (int i = 0; i < NWORKERS; i++) {
			struct worker *w = &workers[i];

			w->job = &job;
			w->id = i;
			w->cells = calloc(2 * (CELLS + 2), sizeof(double));
			if (w->cells == NULL) {
				fprintf(stderr, "demo: out of memory\n");
				return 1;
			}
			w->u = w->cells;
			w->v = w->cells + CELLS + 2;
			/* A hot block in the middle of each strip, to diffuse. */
			for (int c = CELLS / 3; c < 2 * CELLS / 3; c++)
				w->u[1 + c] = 1.0 + i;
			job_memory(&job, (long long)grid_bytes);
		}
	}

	rtr_begin_v("job", "run", RTR_ARG_I64("workers", NWORKERS), RTR_ARG_I64("steps", steps));
	for (int i = 0; i < NWORKERS; i++) {
		rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
		if (rc != 0) {
			fprintf(stderr, "demo: pthread_create: %s\n", strerror(rc));
			return 1;
		}
	}
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(workers[i].thread, NULL);
	rtr_end("job", "run");

	for (int i = 0; i < NWORKERS; i++) {
		free(workers[i].cells);
		job_memory(&job, -(long long)grid_bytes);
	}
	pthread_barrier_destroy(&job.barrier);

	/* Drain every ring, write the end marker, close the file. */
	rc = rtr_stop();
	rtr_stats_get(&st);

	/* The report goes to stderr when the trace itself goes to stdout. */
	FILE *out = strcmp(cfg.path, "-") == 0 || strcmp(cfg.path, "/dev/stdout") == 0 ? stderr
										       : stdout;
	print_path(out, cfg.path);
	fprintf(out,
		"events:   %llu recorded, %llu written, %llu dropped "
		"(%llu ring full, %llu I/O, %llu too large, %llu reentrant)\n",
		(unsigned long long)st.events_recorded, (unsigned long long)st.events_written,
		(unsigned long long)st.events_dropped, (unsigned long long)st.events_dropped_full,
		(unsigned long long)st.events_dropped_io,
		(unsigned long long)st.events_dropped_too_large,
		(unsigned long long)st.events_dropped_reentrant);
	fprintf(out, "output:   %llu bytes through %s, %llu threads, %llu writer wakeups\n",
		(unsigned long long)st.bytes_written, rtr_io_name(st.io_method),
		(unsigned long long)st.threads, (unsigned long long)st.writer_wakeups);
	if (out == stdout)
		fprintf(out,
			"open it:  drag the file into https://ui.perfetto.dev\n"
			"          or chrome://tracing -> Load, or https://www.speedscope.app\n");

	if (rc != 0) {
		fprintf(stderr, "demo: the trace is incomplete: %s\n", strerror(-rc));
		return 1;
	}
	if (st.events_dropped != 0 && cfg.on_full == RTR_ON_FULL_BLOCK) {
		fprintf(stderr, "demo: %llu events dropped in block mode\n",
			(unsigned long long)st.events_dropped);
		return 1;
	}
	if (st.events_dropped != 0)
		fprintf(out, "note:     drop mode; RINGTRACE_ON_FULL=block keeps every event\n");
	return 0;
}
