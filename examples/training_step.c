/* SPDX-License-Identifier: MIT */
/*
 * training_step — the trace an operator-level profiler makes of a training loop.
 *
 * A real (if small) training run: a two-layer perceptron, 512 -> 256 -> 10, learns
 * to classify synthetic tokens in batches of 32, with cross-entropy loss and plain
 * SGD. The computation is done here, in C; the trace is laid out as an operator
 * profiler lays out a deep-learning framework's run:
 *
 *	thread "main"		train step			(cat "train", the step number)
 *				  next batch			waiting for the data loader
 *				  forward			(cat "phase")
 *				    aten::linear		(cat "op") each operator with its
 *				      aten::t, aten::addmm	inputs' shapes ("Input Dims",
 *				    aten::relu			[[32,512],[256,512],[256]]) and
 *				    ...				dtypes ("Input type", ["float",..])
 *				  backward			autograd nodes (cat "autograd"),
 *				    AddmmBackward0 > aten::mm	each holding its operators
 *				    ...
 *				    wait for all-reduce
 *				  optimizer step > aten::add_	SGD update, one per parameter
 *				  save checkpoint		every CHECKPOINT_EVERY steps and
 *							  at the end: a global instant
 *				counters after each step: loss, learning rate,
 *				throughput, and the step's time split into its phases
 *	thread "data loader"	prepares the next batch while the step runs; the
 *				request is an async span "prefetch" from the moment it is
 *				asked for to the moment the step takes it
 *	thread "gradient	averages each layer's gradients over the (simulated)
 *	 all-reduce"		data-parallel replicas as soon as backward has them, the
 *				way distributed training overlaps communication with
 *				backward; a flow arrow joins each hand-off to its reduction
 *
 * The numbers are deterministic: the same loss curve on every run and thread
 * timing. Only durations and throughput change.
 *
 *	./training_step [steps]		default 8 steps, well under a second
 *
 * The trace goes to $RINGTRACE_FILE, or to training-step.json in the current
 * directory. Every other RINGTRACE_* variable applies as well (docs/configuration.md).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringtrace.h>

#define BATCH		 32  /* tokens per batch */
#define D_IN		 512 /* features per token */
#define D_HIDDEN	 256
#define N_CLASSES	 10
#define DEFAULT_STEPS	 8
#define MAX_STEPS	 100000
#define CHECKPOINT_EVERY 4
#define WORLD_SIZE	 4 /* simulated data-parallel replicas */
#define BASE_LR		 0.05
#define WARMUP_STEPS	 2
#define LOAD_LATENCY_US	 300 /* the data loader's stand-in for reading a shard */
#define WIRE_LATENCY_US	 150 /* the all-reduce's stand-in for the network */

/* The model, its gradients and the step's activations. One training loop per
 * process, so they are file-level state; only the main thread touches them, except
 * the gradients, which the all-reduce thread averages between hand-off and wait. */
struct params {
	float w1[D_HIDDEN * D_IN], b1[D_HIDDEN];
	float w2[N_CLASSES * D_HIDDEN], b2[N_CLASSES];
};
static struct params model, grad, snapshot;

static struct {
	float z1[BATCH * D_HIDDEN], h[BATCH * D_HIDDEN]; /* pre- and post-ReLU */
	float logits[BATCH * N_CLASSES], logp[BATCH * N_CLASSES];
	float dlogp[BATCH * N_CLASSES], dlogits[BATCH * N_CLASSES];
	float dh[BATCH * D_HIDDEN], dz[BATCH * D_HIDDEN];
} act;

struct batch {
	float x[BATCH * D_IN];
	int64_t labels[BATCH];
};

/* The dtypes of operators whose inputs (up to three) are all float tensors. */
static const char *const float_dtypes[] = {"float", "float", "float"};

/* splitmix64: a seedable generator, so every batch is the same on every run. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static float uniform(uint64_t *state)
{
	return (float)(next_random(state) >> 40) / (float)(UINT64_C(1) << 23) - 1.0f;
}

static void sleep_us(long us)
{
	struct timespec ts = {0, us * 1000};

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------- */
/* Operators: the arithmetic, and the span a profiler records for each        */

/*
 * Begin an operator's span with its inputs as a framework profiler lists them: one
 * shape per input ("Input Dims", a scalar being []) and one dtype per input. n
 * inputs; lens[i] dimensions of input i, taken in turn from dims.
 */
static void op_begin(const char *name, const int64_t *dims, const uint32_t *lens, uint32_t n,
		     const char *const *types)
{
	const struct rtr_arg args[] = {
		RTR_ARG_I64_LISTS("Input Dims", dims, lens, n),
		RTR_ARG_STR_ARRAY("Input type", types, n),
	};

	rtr_begin_args("op", name, args, 2);
}

static void op_end(const char *name)
{
	rtr_end("op", name);
}

/* Dot product with eight partial sums: the compiler may not reorder a float sum, so
 * this is what lets it keep several multiply-adds in flight. */
static float dot(const float *a, const float *b, size_t n)
{
	float s[8] = {0};
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (int j = 0; j < 8; j++)
			s[j] += a[i + (size_t)j] * b[i + (size_t)j];
	for (size_t left = n % 8; left > 0; left--, i++) /* fewer than 8 */
		s[0] += a[i] * b[i];
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* out[B][N] = in[B][K] w[N][K]^T + bias[N], as aten::linear does through aten::addmm. */
static void linear(float *out, const float *in, const float *w, const float *bias, size_t k,
		   size_t n)
{
	const int64_t B = BATCH, K = (int64_t)k, N = (int64_t)n;
	const int64_t lin_dims[] = {B, K, N, K, N};
	const uint32_t lin_lens[] = {2, 2, 1};
	const int64_t t_dims[] = {N, K};
	const uint32_t t_lens[] = {2};
	const int64_t mm_dims[] = {N, B, K, K, N};
	const uint32_t mm_lens[] = {1, 2, 2};

	op_begin("aten::linear", lin_dims, lin_lens, 3, float_dtypes);
	op_begin("aten::t", t_dims, t_lens, 1, float_dtypes); /* a view: no work */
	op_end("aten::t");
	op_begin("aten::addmm", mm_dims, mm_lens, 3, float_dtypes);
	for (size_t b = 0; b < BATCH; b++)
		for (size_t j = 0; j < n; j++)
			out[b * n + j] = bias[j] + dot(in + b * k, w + j * k, k);
	op_end("aten::addmm");
	op_end("aten::linear");
}

static void relu(void)
{
	const int64_t dims[] = {BATCH, D_HIDDEN};
	const uint32_t lens[] = {2};

	op_begin("aten::relu", dims, lens, 1, float_dtypes);
	for (size_t i = 0; i < BATCH * D_HIDDEN; i++)
		act.h[i] = act.z1[i] > 0.0f ? act.z1[i] : 0.0f;
	op_end("aten::relu");
}

/* Mean negative log-likelihood of the labels under log_softmax(logits). */
static double cross_entropy(const int64_t *labels)
{
	static const char *const float_long[] = {"float", "long"};
	const int64_t ce_dims[] = {BATCH, N_CLASSES, BATCH};
	const uint32_t ce_lens[] = {2, 1};
	const uint32_t ls_lens[] = {2};
	double loss = 0.0;

	op_begin("aten::cross_entropy_loss", ce_dims, ce_lens, 2, float_long);
	op_begin("aten::log_softmax", ce_dims, ls_lens, 1, float_dtypes);
	for (size_t b = 0; b < BATCH; b++) {
		const float *row = act.logits + b * N_CLASSES;
		float max = row[0], sum = 0.0f;
		for (size_t c = 1; c < N_CLASSES; c++)
			max = row[c] > max ? row[c] : max;
		for (size_t c = 0; c < N_CLASSES; c++)
			sum += expf(row[c] - max);
		float log_sum = logf(sum) + max;
		for (size_t c = 0; c < N_CLASSES; c++)
			act.logp[b * N_CLASSES + c] = row[c] - log_sum;
	}
	op_end("aten::log_softmax");
	op_begin("aten::nll_loss", ce_dims, ce_lens, 2, float_long);
	for (size_t b = 0; b < BATCH; b++)
		loss -= act.logp[b * N_CLASSES + (size_t)labels[b]];
	op_end("aten::nll_loss");
	op_end("aten::cross_entropy_loss");
	return loss / BATCH;
}

/* ------------------------------------------------------------------------- */
/* The data loader thread                                                     */

struct loader {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	long requested; /* the last batch asked for, -1 none; under lock */
	long produced;	/* the last batch ready, -1 none; under lock */
	bool stop;
	/* Batch i is in slot i % 2. The loader fills slot i % 2 after batch i is
	 * requested, which the main thread does only once it is done with batch i - 2. */
	struct batch slot[2];
	float prototypes[N_CLASSES][D_IN]; /* each class's mean token; set before start */
};

/* Batch `index`: tokens scattered around their class's prototype. */
static void load_batch(struct loader *l, long index)
{
	struct batch *out = &l->slot[index % 2];
	uint64_t rng = UINT64_C(0x5eed0000) + (uint64_t)index;

	rtr_begin_v("dataloader", "load batch", RTR_ARG_I64("batch", index));
	{
		RTR_SCOPE("dataloader", "read shard");
		sleep_us(LOAD_LATENCY_US);
	}
	{
		RTR_SCOPE("dataloader", "collate");
		for (size_t b = 0; b < BATCH; b++) {
			size_t c = (size_t)(next_random(&rng) % N_CLASSES);
			out->labels[b] = (int64_t)c;
			for (size_t i = 0; i < D_IN; i++)
				out->x[b * D_IN + i] = l->prototypes[c][i] + 0.5f * uniform(&rng);
		}
	}
	rtr_end("dataloader", "load batch");
}

static void *loader_main(void *arg)
{
	struct loader *l = arg;

	rtr_thread_name("data loader");
	rtr_thread_sort_index(1);
	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (l->requested == l->produced && !l->stop)
			pthread_cond_wait(&l->cond, &l->lock);
		if (l->stop)
			break;
		long index = l->produced + 1;
		pthread_mutex_unlock(&l->lock);
		load_batch(l, index);
		const struct rtr_arg args[] = {RTR_ARG_I64("batch", index)};
		rtr_async_instant("dataloader", "prefetch", (uint64_t)index + 1, args, 1);
		pthread_mutex_lock(&l->lock);
		l->produced = index;
		pthread_cond_broadcast(&l->cond);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* Ask for batch `index` ahead of time. The async span's id is index + 1: never 0. */
static void request_batch(struct loader *l, long index)
{
	const struct rtr_arg args[] = {RTR_ARG_I64("batch", index)};

	rtr_async_begin("dataloader", "prefetch", (uint64_t)index + 1, args, 1);
	pthread_mutex_lock(&l->lock);
	l->requested = index;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

static const struct batch *take_batch(struct loader *l, long index)
{
	rtr_begin("train", "next batch");
	pthread_mutex_lock(&l->lock);
	while (l->produced < index)
		pthread_cond_wait(&l->cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
	rtr_async_end("dataloader", "prefetch", (uint64_t)index + 1);
	rtr_end("train", "next batch");
	return &l->slot[index % 2];
}

/* ------------------------------------------------------------------------- */
/* The gradient all-reduce thread                                             */

/* A bucket: the gradients of one layer, reduced together. */
struct bucket {
	float *w, *b;
	size_t w_len, b_len;
	uint64_t flow; /* from the hand-off in backward to the reduction */
};

struct reducer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct bucket queue[2]; /* one per layer; under lock */
	unsigned posted, done;	/* buckets handed off and reduced, ever; under lock */
	bool stop;
	float sum[D_HIDDEN * D_IN]; /* the reduction's accumulator; reducer thread only */
};

/* Average buf over the replicas. They all computed the same gradient here, so the
 * result equals the input up to rounding, the same rounding on every run. */
static void average_over_replicas(float *sum, float *buf, size_t n)
{
	memset(sum, 0, n * sizeof(float));
	for (int r = 0; r < WORLD_SIZE; r++)
		for (size_t i = 0; i < n; i++)
			sum[i] += buf[i];
	for (size_t i = 0; i < n; i++)
		buf[i] = sum[i] / WORLD_SIZE;
}

static void all_reduce(struct reducer *rd, const struct bucket *bk, unsigned index)
{
	size_t bytes = (bk->w_len + bk->b_len) * sizeof(float);

	rtr_begin_v("comm", "all_reduce", RTR_ARG_I64("bucket", index), RTR_ARG_U64("bytes", bytes),
		    RTR_ARG_I64("world size", WORLD_SIZE));
	rtr_flow_end("comm", "gradient bucket", bk->flow);
	sleep_us(WIRE_LATENCY_US); /* a ring all-reduce: 2 (world - 1) / world of it on the wire */
	average_over_replicas(rd->sum, bk->w, bk->w_len);
	average_over_replicas(rd->sum, bk->b, bk->b_len);
	rtr_end("comm", "all_reduce");
}

static void *reducer_main(void *arg)
{
	struct reducer *rd = arg;

	rtr_thread_name("gradient all-reduce");
	rtr_thread_sort_index(2);
	pthread_mutex_lock(&rd->lock);
	for (;;) {
		while (rd->done == rd->posted && !rd->stop)
			pthread_cond_wait(&rd->cond, &rd->lock);
		if (rd->done == rd->posted)
			break; /* stopped, nothing left */
		struct bucket bk = rd->queue[rd->done % 2];
		unsigned index = rd->done % 2;
		pthread_mutex_unlock(&rd->lock);
		all_reduce(rd, &bk, index);
		pthread_mutex_lock(&rd->lock);
		rd->done++;
		pthread_cond_broadcast(&rd->cond);
	}
	pthread_mutex_unlock(&rd->lock);
	return NULL;
}

/* Hand a layer's gradients to the reducer; called inside the autograd node that made
 * them, where the flow arrow starts. */
static void post_bucket(struct reducer *rd, float *w, size_t w_len, float *b, size_t b_len)
{
	struct bucket bk = {w, b, w_len, b_len, rtr_flow_id()};

	rtr_flow_start("comm", "gradient bucket", bk.flow);
	pthread_mutex_lock(&rd->lock);
	rd->queue[rd->posted % 2] = bk;
	rd->posted++;
	pthread_cond_broadcast(&rd->cond);
	pthread_mutex_unlock(&rd->lock);
}

static void wait_all_reduce(struct reducer *rd)
{
	rtr_begin("comm", "wait for all-reduce");
	pthread_mutex_lock(&rd->lock);
	while (rd->done != rd->posted)
		pthread_cond_wait(&rd->cond, &rd->lock);
	pthread_mutex_unlock(&rd->lock);
	rtr_end("comm", "wait for all-reduce");
}

/* ------------------------------------------------------------------------- */
/* One training step                                                          */

static void forward(const struct batch *in, double *loss)
{
	rtr_begin("phase", "forward");
	linear(act.z1, in->x, model.w1, model.b1, D_IN, D_HIDDEN);
	relu();
	linear(act.logits, act.h, model.w2, model.b2, D_HIDDEN, N_CLASSES);
	*loss = cross_entropy(in->labels);
	rtr_end("phase", "forward");
}

/* The gradients of a linear layer y = x w^T + b: dw[N][K] = dy^T x, db = sum of dy's
 * rows, and, unless dx is NULL (the input needs none), dx[B][K] = dy w. */
static void linear_backward(const float *dy, const float *x, const float *w, float *dw, float *db,
			    float *dx, size_t k, size_t n)
{
	const int64_t B = BATCH, K = (int64_t)k, N = (int64_t)n;
	const int64_t dw_dims[] = {N, B, B, K};
	const int64_t dx_dims[] = {B, N, N, K};
	const int64_t sum_dims[] = {B, N};
	const uint32_t mm_lens[] = {2, 2}, sum_lens[] = {2};

	op_begin("aten::mm", dw_dims, mm_lens, 2, float_dtypes);
	memset(dw, 0, n * k * sizeof(float));
	for (size_t b = 0; b < BATCH; b++)
		for (size_t j = 0; j < n; j++) {
			float g = dy[b * n + j];
			for (size_t i = 0; i < k; i++)
				dw[j * k + i] += g * x[b * k + i];
		}
	op_end("aten::mm");
	if (dx != NULL) {
		op_begin("aten::mm", dx_dims, mm_lens, 2, float_dtypes);
		memset(dx, 0, BATCH * k * sizeof(float));
		for (size_t b = 0; b < BATCH; b++)
			for (size_t j = 0; j < n; j++) {
				float g = dy[b * n + j];
				for (size_t i = 0; i < k; i++)
					dx[b * k + i] += g * w[j * k + i];
			}
		op_end("aten::mm");
	}
	op_begin("aten::sum", sum_dims, sum_lens, 1, float_dtypes);
	for (size_t j = 0; j < n; j++) {
		float s = 0.0f;
		for (size_t b = 0; b < BATCH; b++)
			s += dy[b * n + j];
		db[j] = s;
	}
	op_end("aten::sum");
}

static void backward(struct reducer *rd, const struct batch *in)
{
	static const char *const nll_types[] = {"float", "float", "long"};
	const int64_t nll_dims[] = {BATCH, N_CLASSES, BATCH}; /* grad [] , self, target */
	const uint32_t nll_lens[] = {0, 2, 1};
	const int64_t ls_dims[] = {BATCH, N_CLASSES, BATCH, N_CLASSES};
	const uint32_t ls_lens[] = {2, 2};
	const int64_t th_dims[] = {BATCH, D_HIDDEN, BATCH, D_HIDDEN};

	rtr_begin("phase", "backward");

	rtr_begin("autograd", "NllLossBackward0");
	op_begin("aten::nll_loss_backward", nll_dims, nll_lens, 3, nll_types);
	for (size_t b = 0; b < BATCH; b++)
		for (size_t c = 0; c < N_CLASSES; c++)
			act.dlogp[b * N_CLASSES + c] =
				(int64_t)c == in->labels[b] ? -1.0f / BATCH : 0.0f;
	op_end("aten::nll_loss_backward");
	rtr_end("autograd", "NllLossBackward0");

	rtr_begin("autograd", "LogSoftmaxBackward0");
	op_begin("aten::_log_softmax_backward_data", ls_dims, ls_lens, 2, float_dtypes);
	for (size_t b = 0; b < BATCH; b++) {
		float s = 0.0f;
		for (size_t c = 0; c < N_CLASSES; c++)
			s += act.dlogp[b * N_CLASSES + c];
		for (size_t c = 0; c < N_CLASSES; c++) {
			size_t i = b * N_CLASSES + c;
			act.dlogits[i] = act.dlogp[i] - expf(act.logp[i]) * s;
		}
	}
	op_end("aten::_log_softmax_backward_data");
	rtr_end("autograd", "LogSoftmaxBackward0");

	rtr_begin("autograd", "AddmmBackward0");
	linear_backward(act.dlogits, act.h, model.w2, grad.w2, grad.b2, act.dh, D_HIDDEN,
			N_CLASSES);
	/* The last layer's gradients are final: reduce them while backward goes on. */
	post_bucket(rd, grad.w2, N_CLASSES * D_HIDDEN, grad.b2, N_CLASSES);
	rtr_end("autograd", "AddmmBackward0");

	rtr_begin("autograd", "ReluBackward0");
	op_begin("aten::threshold_backward", th_dims, ls_lens, 2, float_dtypes);
	for (size_t i = 0; i < BATCH * D_HIDDEN; i++)
		act.dz[i] = act.z1[i] > 0.0f ? act.dh[i] : 0.0f;
	op_end("aten::threshold_backward");
	rtr_end("autograd", "ReluBackward0");

	rtr_begin("autograd", "AddmmBackward0");
	linear_backward(act.dz, in->x, model.w1, grad.w1, grad.b1, NULL, D_IN, D_HIDDEN);
	post_bucket(rd, grad.w1, D_HIDDEN * D_IN, grad.b1, D_HIDDEN);
	rtr_end("autograd", "AddmmBackward0");

	wait_all_reduce(rd);
	rtr_end("phase", "backward");
}

/* p -= lr * g, as aten::add_(p, g, alpha = -lr). */
static void sgd_update(float *p, const float *g, size_t rows, size_t cols, double lr)
{
	static const char *const types[] = {"float", "float", "Scalar"};
	const int64_t matrix_dims[] = {(int64_t)rows, (int64_t)cols, (int64_t)rows, (int64_t)cols};
	const int64_t vector_dims[] = {(int64_t)rows, (int64_t)rows};
	const uint32_t matrix_lens[] = {2, 2, 0}, vector_lens[] = {1, 1, 0};
	bool vector = cols == 1;
	float step = (float)lr;

	op_begin("aten::add_", vector ? vector_dims : matrix_dims,
		 vector ? vector_lens : matrix_lens, 3, types);
	for (size_t i = 0; i < rows * cols; i++)
		p[i] -= step * g[i];
	op_end("aten::add_");
}

static void optimizer_step(double lr)
{
	rtr_begin("phase", "optimizer step");
	sgd_update(model.w1, grad.w1, D_HIDDEN, D_IN, lr);
	sgd_update(model.b1, grad.b1, D_HIDDEN, 1, lr);
	sgd_update(model.w2, grad.w2, N_CLASSES, D_HIDDEN, lr);
	sgd_update(model.b2, grad.b2, N_CLASSES, 1, lr);
	rtr_end("phase", "optimizer step");
}

/* Linear warm-up, then cosine decay to a tenth of the base rate at the last step. */
static double learning_rate(int step, int steps)
{
	if (step < WARMUP_STEPS)
		return BASE_LR * (step + 1) / WARMUP_STEPS;
	if (steps - WARMUP_STEPS <= 1)
		return BASE_LR;
	double progress = (double)(step - WARMUP_STEPS) / (steps - WARMUP_STEPS - 1);
	return BASE_LR * (0.1 + 0.9 * 0.5 * (1.0 + cos(3.14159265358979323846 * progress)));
}

/* The parameters into an in-memory snapshot: what a checkpoint writes, minus the file. */
static void save_checkpoint(int step, double loss)
{
	rtr_begin_v("io", "save checkpoint", RTR_ARG_I64("step", step));
	memcpy(&snapshot, &model, sizeof(model));
	/* Global: the moment every replica's timeline shares. */
	const struct rtr_arg args[] = {
		RTR_ARG_I64("step", step),
		RTR_ARG_F64("loss", loss),
		RTR_ARG_U64("bytes", sizeof(model)),
	};
	rtr_instant_scoped("io", "checkpoint", RTR_INSTANT_GLOBAL, args, 3);
	rtr_end("io", "save checkpoint");
}

static double ms_between(uint64_t from, uint64_t to)
{
	return (double)(to - from) / 1e6;
}

/* Step `step` of `steps`; returns its loss. */
static double train_step(struct loader *l, struct reducer *rd, int step, int steps)
{
	double lr = learning_rate(step, steps);
	double loss;

	rtr_begin_v("train", "train step", RTR_ARG_I64("step", step));
	uint64_t t0 = rtr_now_ns();
	const struct batch *in = take_batch(l, step);
	if (step + 1 < steps)
		request_batch(l, step + 1); /* prefetched while this step computes */
	uint64_t t1 = rtr_now_ns();
	forward(in, &loss);
	uint64_t t2 = rtr_now_ns();
	backward(rd, in);
	uint64_t t3 = rtr_now_ns();
	optimizer_step(lr);
	uint64_t t4 = rtr_now_ns();
	if ((step + 1) % CHECKPOINT_EVERY == 0 || step + 1 == steps)
		save_checkpoint(step + 1, loss);
	rtr_end("train", "train step");

	const struct rtr_arg loss_series[] = {RTR_ARG_F64("loss", loss)};
	const struct rtr_arg lr_series[] = {RTR_ARG_F64("lr", lr)};
	const struct rtr_arg rate_series[] = {
		RTR_ARG_F64("tokens/s", BATCH * 1e9 / (double)(t4 - t0))};
	/* Parts of the step's time: they stack up to the whole in the viewers. */
	const struct rtr_arg time_series[] = {
		RTR_ARG_F64("data wait", ms_between(t0, t1)),
		RTR_ARG_F64("forward", ms_between(t1, t2)),
		RTR_ARG_F64("backward", ms_between(t2, t3)),
		RTR_ARG_F64("optimizer", ms_between(t3, t4)),
	};
	rtr_counter_args("train", "loss", loss_series, 1);
	rtr_counter_args("train", "learning rate", lr_series, 1);
	rtr_counter_args("train", "throughput", rate_series, 1);
	rtr_counter_args("train", "step time (ms)", time_series, 4);
	return loss;
}

/* ------------------------------------------------------------------------- */
/* Setup                                                                      */

/* Small random weights, zero biases (what a framework's default init does, roughly),
 * and the classes' prototypes. */
static void init_model(struct loader *l)
{
	uint64_t rng = UINT64_C(42);

	for (size_t i = 0; i < D_HIDDEN * D_IN; i++)
		model.w1[i] = uniform(&rng) / sqrtf(D_IN);
	for (size_t i = 0; i < N_CLASSES * D_HIDDEN; i++)
		model.w2[i] = uniform(&rng) / sqrtf(D_HIDDEN);
	for (size_t c = 0; c < N_CLASSES; c++)
		for (size_t i = 0; i < D_IN; i++)
			l->prototypes[c][i] = uniform(&rng);
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
	if (errno != 0 || end == argv[1] || *end != '\0' || n < 1 || n > MAX_STEPS)
		return -1;
	return (int)n;
}

int main(int argc, char **argv)
{
	static struct loader loader = {.requested = -1, .produced = -1};
	static struct reducer reducer;
	struct rtr_config cfg;
	struct rtr_stats st = {0};
	int steps = parse_steps(argc, argv);
	double first_loss = 0.0, last_loss = 0.0;
	int rc;

	if (steps < 0) {
		fprintf(stderr, "usage: %s [steps]    (1 .. %d, default %d)\n", argv[0], MAX_STEPS,
			DEFAULT_STEPS);
		return 2;
	}

	/* Defaults plus the RINGTRACE_* environment; our own default file name. */
	rtr_config_init(&cfg);
	const char *file = getenv("RINGTRACE_FILE");
	if (file == NULL || *file == '\0')
		cfg.path = "training-step.json";
	rc = rtr_start(&cfg);
	if (rc != 0) {
		fprintf(stderr, "training_step: cannot start the recorder on %s: %s\n", cfg.path,
			strerror(-rc));
		return 1;
	}
	rtr_thread_name("main");
	rtr_thread_sort_index(0);
	rtr_process_label("trainer: rank 0 of 4 (simulated), MLP 512-256-10");

	init_model(&loader);
	pthread_mutex_init(&loader.lock, NULL);
	pthread_cond_init(&loader.cond, NULL);
	pthread_mutex_init(&reducer.lock, NULL);
	pthread_cond_init(&reducer.cond, NULL);
	rc = pthread_create(&loader.thread, NULL, loader_main, &loader);
	if (rc == 0) {
		rc = pthread_create(&reducer.thread, NULL, reducer_main, &reducer);
		if (rc != 0) {
			pthread_mutex_lock(&loader.lock);
			loader.stop = true;
			pthread_cond_broadcast(&loader.cond);
			pthread_mutex_unlock(&loader.lock);
			pthread_join(loader.thread, NULL);
		}
	}
	if (rc != 0) {
		fprintf(stderr, "training_step: pthread_create: %s\n", strerror(rc));
		rtr_stop();
		return 1;
	}

	request_batch(&loader, 0);
	for (int step = 0; step < steps; step++) {
		double loss = train_step(&loader, &reducer, step, steps);
		if (step == 0)
			first_loss = loss;
		last_loss = loss;
	}

	pthread_mutex_lock(&loader.lock);
	loader.stop = true;
	pthread_cond_broadcast(&loader.cond);
	pthread_mutex_unlock(&loader.lock);
	pthread_mutex_lock(&reducer.lock);
	reducer.stop = true;
	pthread_cond_broadcast(&reducer.cond);
	pthread_mutex_unlock(&reducer.lock);
	pthread_join(loader.thread, NULL);
	pthread_join(reducer.thread, NULL);

	rc = rtr_stop();
	rtr_stats_get(&st);
	printf("trace:    %s\n", rtr_trace_path());
	printf("training: %d steps of %d tokens, loss %.4f -> %.4f\n", steps, BATCH, first_loss,
	       last_loss);
	printf("events:   %llu recorded, %llu written, %llu dropped\n",
	       (unsigned long long)st.events_recorded, (unsigned long long)st.events_written,
	       (unsigned long long)st.events_dropped);
	printf("open it:  drag the file into https://ui.perfetto.dev or chrome://tracing\n");
	if (rc != 0) {
		fprintf(stderr, "training_step: the trace is incomplete: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
