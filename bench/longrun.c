/* SPDX-License-Identifier: MIT */
/*
 * Long runs: how long a snapshot of a full flight window takes, and how long a
 * SIGTERM at full speed takes to leave a finished file.
 *
 *	longrun snapshot [--flight-mb M] [--rounds R] [--path FILE]
 *	longrun sigterm [--rounds R] [--path FILE]
 *
 * snapshot: flight mode, one thread records spans until the window has been filled
 * twice over, then rtr_snapshot() is timed while the thread goes on recording; R
 * rounds, one line each, then the median.
 *
 * sigterm: a child records spans at full speed (block mode) with RINGTRACE_SIGNALS=
 * TERM; after 0.5 s the parent sends SIGTERM and times until waitpid() returns, then
 * checks the status is SIGTERM's and the file ends with the end marker naming it.
 * R rounds, then the median.
 */
#define _GNU_SOURCE
#include <ringtrace.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static volatile int stop_recording;

static void *spans(void *arg)
{
	(void)arg;
	while (!stop_recording) {
		for (int i = 0; i < 1000; i++) {
			rtr_begin("app", "span");
			rtr_end("app", "span");
		}
	}
	return NULL;
}

static int run_snapshot(unsigned flight_mb, int rounds, const char *path)
{
	struct rtr_config cfg;
	double took[64];

	rtr_config_init(&cfg);
	cfg.mode = RTR_MODE_FLIGHT;
	cfg.flight_mb = flight_mb;
	cfg.flight_at_exit = 0;
	cfg.on_full = RTR_ON_FULL_DROP; /* recording goes on while the snapshot runs */
	int err = rtr_start(&cfg);
	if (err != 0) {
		fprintf(stderr, "longrun: rtr_start: %s\n", strerror(-err));
		return 1;
	}
	pthread_t th;
	pthread_create(&th, NULL, spans, NULL);
	for (int r = 0; r < rounds; r++) {
		struct rtr_stats st;
		/* the window full twice over: about 40 bytes a span in the window */
		uint64_t want = (uint64_t)flight_mb * 2 * (1u << 20) / 20;
		rtr_stats_get(&st);
		uint64_t base = st.events_written;
		do {
			usleep(10000);
			rtr_stats_get(&st);
		} while (st.events_written - base < want);
		double t0 = now_s();
		err = rtr_snapshot(path);
		took[r] = now_s() - t0;
		struct stat sb;
		stat(path, &sb);
		printf("round=%d snapshot_s=%.3f bytes=%lld err=%d\n", r, took[r],
		       (long long)sb.st_size, err);
		if (err != 0)
			break;
	}
	stop_recording = 1;
	pthread_join(th, NULL);
	rtr_stop();
	qsort(took, (size_t)rounds, sizeof(took[0]), cmp_double);
	printf("flight_mb=%u rounds=%d median_snapshot_s=%.3f\n", flight_mb, rounds,
	       took[rounds / 2]);
	return err != 0;
}

/* The last line of path names signal 15 in a final end marker. */
static int finished_with_term(const char *path)
{
	FILE *f = fopen(path, "r");
	char tail[2048];

	if (f == NULL)
		return 0;
	fseek(f, -(long)sizeof(tail) + 1, SEEK_END);
	size_t n = fread(tail, 1, sizeof(tail) - 1, f);
	fclose(f);
	tail[n] = '\0';
	return strstr(tail, "\"ringtrace: end\"") != NULL && strstr(tail, "\"final\":true") &&
	       strstr(tail, "\"signal\":15") != NULL && strstr(tail, "}}\n]\n") != NULL;
}

static int run_sigterm(int rounds, const char *path)
{
	double took[64];
	int bad = 0;

	for (int r = 0; r < rounds; r++) {
		pid_t pid = fork();
		if (pid == 0) {
			struct rtr_config cfg;
			rtr_config_init(&cfg);
			cfg.path = path;
			cfg.signals = "TERM";
			cfg.on_full = RTR_ON_FULL_BLOCK;
			if (rtr_start(&cfg) != 0)
				_exit(3);
			spans(NULL);
			_exit(0);
		}
		usleep(500000);
		double t0 = now_s();
		kill(pid, SIGTERM);
		int status;
		waitpid(pid, &status, 0);
		took[r] = now_s() - t0;
		int ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM &&
			 finished_with_term(path);
		struct stat sb;
		stat(path, &sb);
		printf("round=%d finish_s=%.3f bytes=%lld status_term=%d finished=%d\n", r, took[r],
		       (long long)sb.st_size, WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
		       ok);
		bad |= !ok;
	}
	qsort(took, (size_t)rounds, sizeof(took[0]), cmp_double);
	printf("rounds=%d median_finish_s=%.3f all_finished=%d\n", rounds, took[rounds / 2], !bad);
	return bad;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	const char *path = "/tmp/ringtrace-longrun.json";
	unsigned flight_mb = 64;
	int rounds = 5;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--flight-mb") == 0)
			flight_mb = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--path") == 0)
			path = argv[i + 1];
	}
	if (rounds < 1 || rounds > 64) {
		fprintf(stderr, "longrun: --rounds 1 .. 64\n");
		return 2;
	}
	if (strcmp(what, "snapshot") == 0)
		return run_snapshot(flight_mb, rounds, path);
	if (strcmp(what, "sigterm") == 0)
		return run_sigterm(rounds, path);
	fprintf(stderr,
		"usage: longrun snapshot|sigterm [--flight-mb M] [--rounds R] [--path F]\n");
	return 2;
}
