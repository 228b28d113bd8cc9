/* SPDX-License-Identifier: MIT */
/*
 * gpu_timeline — the trace a GPU profiler makes, with a simulated device.
 *
 * No GPU is needed: the device is a few threads of this program, one per stream,
 * that run each "kernel" as a little real CPU work over the stream's buffer and each
 * copy as a memcpy. What the example shows is how the timeline is assembled, which is
 * the same as with real hardware:
 *
 *	host thread "main"	launches kernels and copies asynchronously: slices
 *				launchKernel / memcpyAsync, each starting a flow arrow
 *				(rtr_flow_start) towards the work it queued; deviceMalloc
 *				and deviceFree (rtr_mem_alloc / rtr_mem_free on device 0:
 *				the "memory device 0" counter); deviceSynchronize
 *	device (not traced)	streams run their queues in order and stamp each start
 *				and end with the device's own clock, whose origin is nowhere
 *				near the host's; finished work becomes activity records,
 *				collected into buffers of ACTIVITY_BATCH records
 *	"profiler callback"	receives each full buffer, later and in one piece, as
 *				hardware profilers deliver them, and records its contents on
 *				tracks of the pseudo-process "GPU 0": kernels on the lanes
 *				"stream 1" .. "stream 3" with their launch geometry as
 *				arguments, copies on the lane "copy" with bytes and direction,
 *				the end of each launch's flow at the start of its kernel or
 *				copy, and the device's SM occupancy as a counter
 *
 * Device timestamps reach the trace through the tracks' clock mapping: one pair of
 * readings (device clock, rtr_now_ns()) taken at start-up, and the writer translates
 * every device timestamp with it. The profiler also reports the start of iteration
 * 0's second kernel on stream 1 early, so that it partly overlaps the first one (the
 * timing skew seen with real profilers); the library moves it to the overflow lane
 * "stream 1 (2)" rather than mis-nest it.
 *
 *	./gpu_timeline [iterations]	default 4 iterations, well under a second
 *
 * The trace goes to $RINGTRACE_FILE, or to gpu-timeline.json in the current
 * directory. Every other RINGTRACE_* variable applies as well (docs/configuration.md).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringtrace.h>

#define NSTREAMS	   3
#define DEFAULT_ITERATIONS 4
#define MAX_ITERATIONS	   10000
#define QUEUE_DEPTH	   32 /* commands a stream holds before a launch waits */
#define ACTIVITY_BATCH	   8  /* records per buffer the profiler is handed */
/* The device's clock read this much at our start-up: it counts from the device's own
 * reset, a day ago, not from the host's boot. */
#define DEVICE_CLOCK_AT_INIT_NS (UINT64_C(86400) * 1000000000u)
/* How much earlier than the truth the skewed start is reported (at most half the
 * previous kernel, so that the two overlap only partly). */
#define REPORT_SKEW_NS 20000
/* The simulated device's size, for the occupancy counter. */
#define NUM_SMS	     80
#define WARPS_PER_SM 64

/* Buffer sizes: the device memory the program allocates, in floats. */
#define WEIGHTS_FLOATS	 (256 * 1024) /* 1 MiB, copied to the device once */
#define ACT_FLOATS	 (16 * 1024)  /* stream 1's activations: the input and output */
#define WORKSPACE_FLOATS (64 * 1024)  /* stream 2's workspace, one per iteration */
#define SCRATCH_FLOATS	 (16 * 1024)  /* stream 3's buffer */

/* A kernel the host launches every iteration, and the geometry it is launched with. */
struct kernel_desc {
	const char *name;
	int stream;	      /* index into the device's streams */
	int64_t grid[3];      /* blocks */
	int64_t block[3];     /* threads per block */
	int64_t registers;    /* per thread */
	int64_t shared_bytes; /* static shared memory per block */
	unsigned passes;      /* passes of work over the stream's buffer: its length */
};

static const struct kernel_desc kernels[] = {
	{"gemm_128x64_nt", 0, {16, 8, 1}, {128, 1, 1}, 96, 32768, 24},
	{"bias_add_relu", 0, {64, 1, 1}, {256, 1, 1}, 24, 0, 6},
	{"layer_norm_fwd", 1, {128, 1, 1}, {256, 1, 1}, 40, 4096, 12},
	{"softmax_fwd", 2, {32, 4, 1}, {128, 1, 1}, 32, 2048, 10},
	{"reduce_sum", 1, {40, 1, 1}, {512, 1, 1}, 32, 8192, 4},
};
#define NKERNELS      (sizeof(kernels) / sizeof(kernels[0]))
#define SKEWED_ITER   0 /* iteration, and index in kernels[], of the kernel whose */
#define SKEWED_KERNEL 1 /* start the profiler reports early */

enum copy_dir { HTOD, DTOH };

/* Work queued on a stream: a kernel, or a copy when kernel is NULL. */
struct command {
	const struct kernel_desc *kernel;
	float *data; /* the kernel's buffer */
	size_t floats;
	void *dst; /* the copy */
	const void *src;
	size_t bytes;
	enum copy_dir dir;
	uint64_t flow;	   /* the launch's flow id */
	bool report_early; /* report its start early (see REPORT_SKEW_NS) */
};

enum activity_kind { ACT_KERNEL, ACT_COPY, ACT_OCCUPANCY };

/* An activity record: what the device did, in its own clock. */
struct activity {
	enum activity_kind kind;
	int stream;
	uint64_t start, end;  /* device clock, ns; ACT_OCCUPANCY: the sample's time in start */
	struct command cmd;   /* ACT_KERNEL, ACT_COPY */
	double occupancy_pct; /* ACT_OCCUPANCY: share of the device's warp slots in use */
};

struct activity_buffer {
	struct activity rec[ACTIVITY_BATCH];
	unsigned n;
	struct activity_buffer *next;
};

struct device;

struct stream {
	struct device *dev;
	int index;
	pthread_t thread;
	bool started;
	struct command queue[QUEUE_DEPTH];
	unsigned head, tail;	       /* free-running, under dev->lock */
	uint64_t last_start, last_end; /* true times of the last kernel; worker only */
	struct rtr_track *track;
};

/* The simulated device and the profiler's delivery queue. One lock guards all of it:
 * the device does little, and the queues are short. */
struct device {
	pthread_mutex_t lock;
	pthread_cond_t work;	  /* a stream got a command, or shutdown */
	pthread_cond_t space;	  /* a stream's queue has room again */
	pthread_cond_t idle;	  /* pending dropped to 0 */
	pthread_cond_t delivered; /* a buffer was delivered, or profiling ends */
	struct stream streams[NSTREAMS];
	unsigned pending; /* commands queued or running */
	bool shutdown;	  /* the streams exit once their queues are empty */
	int64_t active_warps;
	uint64_t host_at_init; /* rtr_now_ns() when the device clock read DEVICE_CLOCK_AT_INIT_NS */
	struct activity_buffer *filling;
	struct activity_buffer *ready_head, **ready_tail; /* delivered, not yet processed */
	bool profiling_done;
	uint64_t records_lost; /* records without a buffer (out of memory) */
	uint64_t buffers_delivered;
	/* Profiler-thread state */
	pthread_t profiler;
	bool profiler_started;
	struct rtr_track *copy_track;
	uint64_t records_processed;
};

/* The device's clock. The simulation derives it from the host's, but nothing else
 * in the program relies on that: the trace gets device times through the tracks'
 * clock mapping alone. */
static uint64_t device_now(const struct device *dev)
{
	return rtr_now_ns() - dev->host_at_init + DEVICE_CLOCK_AT_INIT_NS;
}

static int64_t warps_of(const struct kernel_desc *k)
{
	int64_t blocks = k->grid[0] * k->grid[1] * k->grid[2];
	int64_t threads = k->block[0] * k->block[1] * k->block[2];

	return blocks * ((threads + 31) / 32);
}

/* ------------------------------------------------------------------------- */
/* The device: stream workers and activity buffers (none of it is traced)     */

static void deliver_locked(struct device *dev)
{
	struct activity_buffer *b = dev->filling;

	if (b == NULL || b->n == 0)
		return;
	dev->filling = NULL;
	*dev->ready_tail = b;
	dev->ready_tail = &b->next;
	dev->buffers_delivered++;
	pthread_cond_signal(&dev->delivered);
}

/* Append a record, handing the buffer to the profiler when it is full. */
static void record_activity_locked(struct device *dev, const struct activity *a)
{
	if (dev->filling == NULL) {
		dev->filling = calloc(1, sizeof(*dev->filling));
		if (dev->filling == NULL) {
			dev->records_lost++; /* as a profiler drops records without a buffer */
			return;
		}
	}
	dev->filling->rec[dev->filling->n++] = *a;
	if (dev->filling->n == ACTIVITY_BATCH)
		deliver_locked(dev);
}

static void record_occupancy_locked(struct device *dev, uint64_t ts)
{
	double pct = 100.0 * (double)dev->active_warps / (NUM_SMS * WARPS_PER_SM);
	struct activity a = {.kind = ACT_OCCUPANCY, .start = ts};

	a.occupancy_pct = pct > 100.0 ? 100.0 : pct;
	record_activity_locked(dev, &a);
}

/* The kernel's work: passes of a multiply-add over its buffer. */
static void run_kernel(const struct command *c)
{
	float scale = 0.999f, bias = 0.001f * (float)(c->kernel->registers % 7);

	for (unsigned p = 0; p < c->kernel->passes; p++)
		for (size_t i = 0; i < c->floats; i++)
			c->data[i] = c->data[i] * scale + bias;
}

static void *stream_main(void *arg)
{
	struct stream *s = arg;
	struct device *dev = s->dev;

	pthread_mutex_lock(&dev->lock);
	for (;;) {
		while (s->head == s->tail && !dev->shutdown)
			pthread_cond_wait(&dev->work, &dev->lock);
		if (s->head == s->tail)
			break; /* shut down with nothing left to run */
		struct command c = s->queue[s->head++ % QUEUE_DEPTH];
		pthread_cond_broadcast(&dev->space);

		struct activity a = {.kind = c.kernel != NULL ? ACT_KERNEL : ACT_COPY,
				     .stream = s->index,
				     .cmd = c};
		a.start = device_now(dev);
		if (c.kernel != NULL) {
			dev->active_warps += warps_of(c.kernel);
			record_occupancy_locked(dev, a.start);
		}
		pthread_mutex_unlock(&dev->lock);

		if (c.kernel != NULL)
			run_kernel(&c);
		else
			memcpy(c.dst, c.src, c.bytes);

		pthread_mutex_lock(&dev->lock);
		a.end = device_now(dev);
		if (a.end <= a.start)
			a.end = a.start + 1; /* a clock tick coarser than the work */
		if (c.kernel != NULL) {
			uint64_t true_start = a.start;
			if (c.report_early && s->last_end > s->last_start) {
				uint64_t skew = (s->last_end - s->last_start) / 2;
				if (skew > REPORT_SKEW_NS)
					skew = REPORT_SKEW_NS;
				a.start = s->last_end - (skew > 0 ? skew : 1);
			}
			s->last_start = true_start;
			s->last_end = a.end;
			dev->active_warps -= warps_of(c.kernel);
		}
		record_activity_locked(dev, &a);
		if (c.kernel != NULL)
			record_occupancy_locked(dev, a.end);
		if (--dev->pending == 0)
			pthread_cond_broadcast(&dev->idle);
	}
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

static void enqueue(struct device *dev, int stream, const struct command *c)
{
	struct stream *s = &dev->streams[stream];

	pthread_mutex_lock(&dev->lock);
	while (s->tail - s->head == QUEUE_DEPTH)
		pthread_cond_wait(&dev->space, &dev->lock);
	s->queue[s->tail++ % QUEUE_DEPTH] = *c;
	dev->pending++;
	pthread_cond_broadcast(&dev->work);
	pthread_mutex_unlock(&dev->lock);
}

/* ------------------------------------------------------------------------- */
/* The profiler callback: activity records onto tracks                        */

static void record_kernel(const struct device *dev, const struct activity *a)
{
	const struct kernel_desc *k = a->cmd.kernel;
	struct rtr_track *t = dev->streams[a->stream].track;
	const struct rtr_arg args[] = {
		RTR_ARG_I64_ARRAY("grid", k->grid, 3),
		RTR_ARG_I64_ARRAY("block", k->block, 3),
		RTR_ARG_I64("registers per thread", k->registers),
		RTR_ARG_I64("shared memory", k->shared_bytes),
		RTR_ARG_I64("warps", warps_of(k)),
		RTR_ARG_I64("stream", a->stream + 1),
		RTR_ARG_I64("device", 0),
	};

	rtr_track_complete(t, "kernel", k->name, a->start, a->end - a->start, args,
			   sizeof(args) / sizeof(args[0]));
	/* Right after its kernel, at the kernel's start: the writer puts the flow's end on
	 * the lane the kernel went to, overflow lane included, and it binds there. */
	rtr_track_flow_end(t, "kernel", "launch", a->start, a->cmd.flow);
}

static void record_copy(const struct device *dev, const struct activity *a)
{
	const struct command *c = &a->cmd;
	const struct rtr_arg args[] = {
		RTR_ARG_U64("bytes", c->bytes),
		RTR_ARG_STR("direction", c->dir == HTOD ? "HtoD" : "DtoH"),
		RTR_ARG_I64("stream", a->stream + 1),
		RTR_ARG_I64("device", 0),
	};
	const char *name = c->dir == HTOD ? "Memcpy HtoD" : "Memcpy DtoH";

	rtr_track_complete(dev->copy_track, "memcpy", name, a->start, a->end - a->start, args,
			   sizeof(args) / sizeof(args[0]));
	rtr_track_flow_end(dev->copy_track, "memcpy", "launch", a->start, c->flow);
}

static void record_occupancy(const struct device *dev, const struct activity *a)
{
	const struct rtr_arg series[] = {RTR_ARG_F64("percent", a->occupancy_pct)};

	/* A counter belongs to its process in every viewer; it is recorded on stream 1's
	 * track only because a track event needs a lane. */
	rtr_track_counter(dev->streams[0].track, "gpu", "SM occupancy", a->start, series, 1);
}

static void process_buffer(struct device *dev, const struct activity_buffer *b)
{
	rtr_begin_v("profiler", "activity buffer", RTR_ARG_I64("records", b->n));
	for (unsigned i = 0; i < b->n; i++) {
		const struct activity *a = &b->rec[i];

		switch (a->kind) {
		case ACT_KERNEL:
			record_kernel(dev, a);
			break;
		case ACT_COPY:
			record_copy(dev, a);
			break;
		case ACT_OCCUPANCY:
			record_occupancy(dev, a);
			break;
		}
	}
	rtr_end("profiler", "activity buffer");
	dev->records_processed += b->n;
}

static void *profiler_main(void *arg)
{
	struct device *dev = arg;

	rtr_thread_name("profiler callback");
	rtr_thread_sort_index(1);
	pthread_mutex_lock(&dev->lock);
	for (;;) {
		while (dev->ready_head == NULL && !dev->profiling_done)
			pthread_cond_wait(&dev->delivered, &dev->lock);
		struct activity_buffer *b = dev->ready_head;
		if (b == NULL)
			break;
		dev->ready_head = b->next;
		if (dev->ready_head == NULL)
			dev->ready_tail = &dev->ready_head;
		pthread_mutex_unlock(&dev->lock);
		process_buffer(dev, b);
		free(b);
		pthread_mutex_lock(&dev->lock);
	}
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

/* ------------------------------------------------------------------------- */
/* Setup and teardown                                                         */

/* Make the tracks: one lane per stream and one for copies, in the process "GPU 0"
 * that sorts after the host. Returns 0 or -ENOMEM. */
static int make_tracks(struct device *dev)
{
	static const char *const lanes[NSTREAMS] = {"stream 1", "stream 2", "stream 3"};
	struct rtr_track_desc d = {
		.process = "GPU 0",
		.label = "SimGPU 80 SM (simulated)",
		.process_sort_index = 2,
	};

	for (int i = 0; i < NSTREAMS; i++) {
		d.lane = lanes[i];
		d.lane_sort_index = i + 1;
		dev->streams[i].track = rtr_track_create(&d);
		if (dev->streams[i].track == NULL)
			return -ENOMEM;
	}
	d.lane = "copy";
	d.lane_sort_index = NSTREAMS + 1;
	dev->copy_track = rtr_track_create(&d);
	if (dev->copy_track == NULL)
		return -ENOMEM;

	/* One reading of both clocks at about the same moment: the writer maps every
	 * device timestamp with it. */
	uint64_t device_ts = device_now(dev);
	uint64_t host_ns = rtr_now_ns();
	for (int i = 0; i < NSTREAMS; i++)
		rtr_track_clock_pair(dev->streams[i].track, device_ts, host_ns);
	rtr_track_clock_pair(dev->copy_track, device_ts, host_ns);
	return 0;
}

static void device_stop(struct device *dev)
{
	pthread_mutex_lock(&dev->lock);
	dev->shutdown = true;
	pthread_cond_broadcast(&dev->work);
	pthread_mutex_unlock(&dev->lock);
	for (int i = 0; i < NSTREAMS; i++)
		if (dev->streams[i].started)
			pthread_join(dev->streams[i].thread, NULL);

	/* What the streams recorded last is delivered now, as a final flush does. */
	pthread_mutex_lock(&dev->lock);
	deliver_locked(dev);
	dev->profiling_done = true;
	pthread_cond_signal(&dev->delivered);
	pthread_mutex_unlock(&dev->lock);
	if (dev->profiler_started)
		pthread_join(dev->profiler, NULL);

	free(dev->filling); /* only when delivery failed: the profiler took the rest */
	while (dev->ready_head != NULL) {
		struct activity_buffer *b = dev->ready_head;
		dev->ready_head = b->next;
		free(b);
	}
	pthread_cond_destroy(&dev->delivered);
	pthread_cond_destroy(&dev->idle);
	pthread_cond_destroy(&dev->space);
	pthread_cond_destroy(&dev->work);
	pthread_mutex_destroy(&dev->lock);
}

/* Start the device's streams and the profiler thread. 0, or a positive errno from
 * pthread_create(); the caller then calls device_stop(). */
static int device_start(struct device *dev)
{
	int rc;

	dev->ready_tail = &dev->ready_head;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_cond_init(&dev->work, NULL);
	pthread_cond_init(&dev->space, NULL);
	pthread_cond_init(&dev->idle, NULL);
	pthread_cond_init(&dev->delivered, NULL);
	dev->host_at_init = rtr_now_ns();
	for (int i = 0; i < NSTREAMS; i++) {
		dev->streams[i].dev = dev;
		dev->streams[i].index = i;
	}
	if ((rc = pthread_create(&dev->profiler, NULL, profiler_main, dev)) != 0)
		return rc;
	dev->profiler_started = true;
	for (int i = 0; i < NSTREAMS; i++) {
		rc = pthread_create(&dev->streams[i].thread, NULL, stream_main, &dev->streams[i]);
		if (rc != 0)
			return rc;
		dev->streams[i].started = true;
	}
	return 0;
}

/* ------------------------------------------------------------------------- */
/* The host's side: what a program calls through a GPU runtime                */

static void *device_malloc(size_t bytes)
{
	rtr_begin_v("runtime", "deviceMalloc", RTR_ARG_U64("bytes", bytes));
	void *p = calloc(1, bytes); /* the simulated device's memory lives in ours */
	if (p != NULL)
		rtr_mem_alloc(0, p, bytes);
	rtr_end("runtime", "deviceMalloc");
	return p;
}

static void device_free(void *p)
{
	if (p == NULL)
		return;
	rtr_begin("runtime", "deviceFree");
	rtr_mem_free(0, p); /* the writer remembers the size from the allocation */
	free(p);
	rtr_end("runtime", "deviceFree");
}

static void launch_kernel(struct device *dev, const struct kernel_desc *k, float *data,
			  size_t floats, bool report_early)
{
	struct command c = {
		.kernel = k,
		.data = data,
		.floats = floats,
		.flow = rtr_flow_id(),
		.report_early = report_early,
	};

	rtr_begin_v("runtime", "launchKernel", RTR_ARG_STR("kernel", k->name),
		    RTR_ARG_I64("stream", k->stream + 1));
	/* Viewers pair this with the flow's end on the device lane by (cat, name, id).
	 * The cat is the kernel's: some viewers bind a flow event only to a slice of its
	 * own category. */
	rtr_flow_start("kernel", "launch", c.flow);
	enqueue(dev, k->stream, &c);
	rtr_end("runtime", "launchKernel");
}

static void copy_async(struct device *dev, void *dst, const void *src, size_t bytes,
		       enum copy_dir dir, int stream)
{
	struct command c = {
		.dst = dst,
		.src = src,
		.bytes = bytes,
		.dir = dir,
		.flow = rtr_flow_id(),
	};

	rtr_begin_v("runtime", "memcpyAsync", RTR_ARG_U64("bytes", bytes),
		    RTR_ARG_STR("direction", dir == HTOD ? "HtoD" : "DtoH"),
		    RTR_ARG_I64("stream", stream + 1));
	rtr_flow_start("memcpy", "launch", c.flow);
	enqueue(dev, stream, &c);
	rtr_end("runtime", "memcpyAsync");
}

static void device_synchronize(struct device *dev)
{
	rtr_begin("runtime", "deviceSynchronize");
	pthread_mutex_lock(&dev->lock);
	while (dev->pending > 0)
		pthread_cond_wait(&dev->idle, &dev->lock);
	pthread_mutex_unlock(&dev->lock);
	rtr_end("runtime", "deviceSynchronize");
}

/* The host program's buffers and the device memory it holds across iterations. */
struct buffers {
	float *host_weights, *host_input, *host_output; /* host memory */
	float *weights, *act, *scratch;			/* device memory */
};

static void free_buffers(struct buffers *b)
{
	device_free(b->weights);
	device_free(b->act);
	device_free(b->scratch);
	free(b->host_weights);
	free(b->host_input);
	free(b->host_output);
	memset(b, 0, sizeof(*b));
}

static int alloc_buffers(struct buffers *b)
{
	b->host_weights = malloc(WEIGHTS_FLOATS * sizeof(float));
	b->host_input = malloc(ACT_FLOATS * sizeof(float));
	b->host_output = malloc(ACT_FLOATS * sizeof(float));
	b->weights = device_malloc(WEIGHTS_FLOATS * sizeof(float));
	b->act = device_malloc(ACT_FLOATS * sizeof(float));
	b->scratch = device_malloc(SCRATCH_FLOATS * sizeof(float));
	if (b->host_weights == NULL || b->host_input == NULL || b->host_output == NULL ||
	    b->weights == NULL || b->act == NULL || b->scratch == NULL) {
		free_buffers(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < WEIGHTS_FLOATS; i++)
		b->host_weights[i] = (float)(i % 97) / 97.0f;
	return 0;
}

/*
 * One iteration: fill the input, copy it in, launch the kernels, copy the result
 * out, wait for the device. Returns the output's checksum, or -1 when the
 * workspace could not be allocated.
 */
static double iteration(struct device *dev, struct buffers *b, int it)
{
	double sum = 0.0;

	rtr_begin_v("host", "iteration", RTR_ARG_I64("iteration", it));
	{
		RTR_SCOPE("host", "prepare input");
		for (size_t i = 0; i < ACT_FLOATS; i++)
			b->host_input[i] = (float)((i + (size_t)it) % 31) / 31.0f;
	}
	float *workspace = device_malloc(WORKSPACE_FLOATS * sizeof(float));
	if (workspace == NULL) {
		rtr_end("host", "iteration");
		return -1.0;
	}
	copy_async(dev, b->act, b->host_input, ACT_FLOATS * sizeof(float), HTOD, 0);
	for (size_t k = 0; k < NKERNELS; k++) {
		const struct kernel_desc *kd = &kernels[k];
		float *data = kd->stream == 0 ? b->act : kd->stream == 1 ? workspace : b->scratch;
		size_t floats = kd->stream == 0	  ? ACT_FLOATS
				: kd->stream == 1 ? WORKSPACE_FLOATS
						  : SCRATCH_FLOATS;
		launch_kernel(dev, kd, data, floats, it == SKEWED_ITER && k == SKEWED_KERNEL);
	}
	copy_async(dev, b->host_output, b->act, ACT_FLOATS * sizeof(float), DTOH, 0);
	device_synchronize(dev);
	device_free(workspace); /* after the synchronize: no kernel uses it any more */
	for (size_t i = 0; i < ACT_FLOATS; i++)
		sum += b->host_output[i];
	rtr_end("host", "iteration");
	return sum;
}

/* Parse argv[1]; returns the number of iterations or -1. */
static int parse_iterations(int argc, char **argv)
{
	char *end;
	long n;

	if (argc < 2)
		return DEFAULT_ITERATIONS;
	if (argc > 2)
		return -1;
	errno = 0;
	n = strtol(argv[1], &end, 10);
	if (errno != 0 || end == argv[1] || *end != '\0' || n < 1 || n > MAX_ITERATIONS)
		return -1;
	return (int)n;
}

int main(int argc, char **argv)
{
	static struct device dev;
	struct buffers bufs = {0};
	struct rtr_config cfg;
	struct rtr_stats st = {0};
	int iterations = parse_iterations(argc, argv);
	double checksum = 0.0;
	int status = 0;
	int rc;

	if (iterations < 0) {
		fprintf(stderr, "usage: %s [iterations]    (1 .. %d, default %d)\n", argv[0],
			MAX_ITERATIONS, DEFAULT_ITERATIONS);
		return 2;
	}

	/* Defaults plus the RINGTRACE_* environment; our own default file name. */
	rtr_config_init(&cfg);
	const char *file = getenv("RINGTRACE_FILE");
	if (file == NULL || *file == '\0')
		cfg.path = "gpu-timeline.json";
	rc = rtr_start(&cfg);
	if (rc != 0) {
		fprintf(stderr, "gpu_timeline: cannot start the recorder on %s: %s\n", cfg.path,
			strerror(-rc));
		return 1;
	}
	rtr_thread_name("main");
	rtr_thread_sort_index(0);
	rtr_process_label("host: launches on GPU 0");
	rtr_process_sort_index(1); /* before "GPU 0" (2) */

	rc = device_start(&dev);
	if (rc != 0) {
		fprintf(stderr, "gpu_timeline: cannot start the device: %s\n", strerror(rc));
		status = 1;
		goto out_device;
	}
	if (make_tracks(&dev) != 0) {
		fprintf(stderr, "gpu_timeline: cannot make the tracks\n");
		status = 1;
		goto out_device;
	}
	if (alloc_buffers(&bufs) != 0) {
		fprintf(stderr, "gpu_timeline: out of memory\n");
		status = 1;
		goto out_device;
	}

	copy_async(&dev, bufs.weights, bufs.host_weights, WEIGHTS_FLOATS * sizeof(float), HTOD, 0);
	for (int it = 0; it < iterations; it++) {
		double sum = iteration(&dev, &bufs, it);
		if (sum < 0.0) {
			fprintf(stderr, "gpu_timeline: out of memory in iteration %d\n", it);
			status = 1;
			break;
		}
		checksum += sum;
	}
	device_synchronize(&dev);
	free_buffers(&bufs);

out_device:
	device_stop(&dev);
	rc = rtr_stop();
	rtr_stats_get(&st);

	printf("trace:    %s\n", rtr_trace_path());
	printf("device:   %d iterations, %zu kernels and 2 copies each, %llu activity records "
	       "in %llu buffers, %llu lost\n",
	       iterations, NKERNELS, (unsigned long long)dev.records_processed,
	       (unsigned long long)dev.buffers_delivered, (unsigned long long)dev.records_lost);
	printf("events:   %llu recorded, %llu written, %llu dropped\n",
	       (unsigned long long)st.events_recorded, (unsigned long long)st.events_written,
	       (unsigned long long)st.events_dropped);
	printf("checksum: %.6f\n", checksum);
	printf("open it:  drag the file into https://ui.perfetto.dev or chrome://tracing\n");

	if (rc != 0) {
		fprintf(stderr, "gpu_timeline: the trace is incomplete: %s\n", strerror(-rc));
		return 1;
	}
	if (dev.records_lost != 0) {
		fprintf(stderr, "gpu_timeline: %llu activity records lost\n",
			(unsigned long long)dev.records_lost);
		return 1;
	}
	return status;
}
