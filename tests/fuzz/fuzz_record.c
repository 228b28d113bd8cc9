/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the record encoder (src/record/encode.h) and decoder (src/record/) and the
 * JSON format (src/format/json/) as a pair, through the public calls that copy.
 *
 * The recorder runs once for the whole fuzzing session (blocking mode, a ring big
 * enough for the largest event, the file in $TMPDIR). Each input is a few calls:
 *
 *	op 0	rtr_instant_copy(cat, name), name NULL too (recorded as "")
 *	op 1	rtr_begin_copy(cat, name), then rtr_end(): one X (its B held until its E)
 *	op 2	rtr_instant_args(cat, "args", args, n), 0 to 18 arguments of the types
 *		STR_COPY (NULL too), STR_ARRAY (NULL items too), I64_ARRAY (NULL
 *		too), I64, VALUE (built by <ringtrace/value.h> from the input, with
 *		counts that promise more than follows, raw bytes, depths past
 *		RTR_VALUE_MAX_DEPTH and lengths past RTR_MAX_COPY)
 *
 * with names and values cut from the input. Then rtr_flush(), and every line the
 * file gained must be strict JSON (fuzz_check.h), and each event of these calls, in
 * order, must carry exactly what was passed: the name or each argument decoded from
 * the file equal to the input cut as the library cuts (fuzz_check.h) with invalid
 * UTF-8 replaced by U+FFFD; the first RTR_MAX_ARGS arguments of a call with more.
 */
#include <ringtrace.h>
#include <ringtrace/value.h>

#include "fuzz_check.h"

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CAT	    "fuzz"
#define MAX_OPS	    8
#define MAX_ITEMS   8 /* items of a STR_ARRAY */
#define MAX_VALUES  600
#define MAX_ARGS_IN (RTR_MAX_ARGS + 2)

/* Argument keys: static strings, interned by pointer, one per position. */
static const char *const keys[MAX_ARGS_IN] = {
	"a0", "a1",  "a2",  "a3",  "a4",  "a5",	 "a6",	"a7",  "a8",
	"a9", "a10", "a11", "a12", "a13", "a14", "a15", "a16", "a17",
};

/* The input, taken from the front. */
struct input {
	const uint8_t *p;
	size_t n;
};

static unsigned take_u8(struct input *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

static unsigned take_u16(struct input *in)
{
	unsigned lo = take_u8(in);
	return lo | take_u8(in) << 8;
}

/* Up to len bytes of the input, NUL-terminated in a buffer of ours (one per use). */
static char *take_str(struct input *in, size_t len, char *buf)
{
	if (len > in->n)
		len = in->n;
	memcpy(buf, in->p, len);
	buf[len] = 0;
	in->p += len;
	in->n -= len;
	return buf;
}

/* What one call recorded, to compare the file with. */
struct op {
	int kind;
	const char *name; /* op 0, 1 */
	struct rtr_arg args[MAX_ARGS_IN];
	unsigned nargs;
};

static struct op ops[MAX_OPS];
static char bufs[MAX_OPS][MAX_ARGS_IN + 1][MAX_ITEMS][RTR_MAX_COPY + 64];
static const char *items[MAX_OPS][MAX_ARGS_IN][MAX_ITEMS];
static int has_values; /* this input has a VALUE argument: its keys may repeat */
static int64_t values[MAX_OPS][MAX_ARGS_IN][MAX_VALUES];

static char path[4096];
static int rfd = -1;
static off_t consumed; /* bytes of the file checked: whole lines before any provisional end */
static char *text;
static size_t text_cap;
static char arena_bytes[64 << 20];

static void start_recorder(void)
{
	struct rtr_config cfg;
	const char *dir = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/ringtrace-fuzz-%d.json", dir ? dir : "/tmp", getpid());
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.ring_bytes = 4 << 20; /* 18 arguments of 4 KiB fit many times over */
	cfg.flush_ms = 60000;	  /* written on rtr_flush(), in practice */
	int err = rtr_start(&cfg);
	if (err != 0)
		FUZZ_FAIL("rtr_start: %s", strerror(-err));
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		FUZZ_FAIL("cannot read %s", path);
	if (getenv("RTR_FUZZ_KEEP") == NULL)
		unlink(path); /* gone when the fuzzer ends, however it ends */
}

/* A new file now and then: the trace of a long run stays small, and the fuzzing
 * goes through stop and start too. */
#define FILE_BYTES (64 << 20)

static void restart_recorder(void)
{
	if (rtr_stop() != 0)
		FUZZ_FAIL("rtr_stop failed");
	close(rfd);
	consumed = 0;
	start_recorder();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	start_recorder();
	return 0;
}

/* The expected text of a copied string: up to its NUL, at most `room` bytes. */
static void expect_copy(const struct jnode *v, const char *s, size_t room, const char *what)
{
	expect_str(v, s, strnlen(s, room), what);
}

/* ------------------------------------------------------------------------- */
/* VALUE arguments                                                            */

struct vbytes {
	const unsigned char *p, *end;
};

static uint64_t vtake(struct vbytes *in, size_t n)
{
	uint64_t x = 0;

	memcpy(&x, in->p, n);
	in->p += n;
	return x;
}

static void expect_json_null(const struct jnode *v, const char *what)
{
	if (v == NULL || v->type != J_NULL)
		FUZZ_FAIL("%s: want null", what);
}

static void expect_value(const struct jnode *v, struct vbytes *in, unsigned depth,
			 const char *what);

/* An array's or object's members after its head; `count` as recorded. */
static void expect_members(const struct jnode *v, struct vbytes *in, uint32_t count, bool object,
			   unsigned depth, const char *what)
{
	static char want[6 * (RTR_MAX_COPY + 64)];
	const struct jnode *kid = v->kids;

	for (uint32_t k = 0; k < count && in->p < in->end; k++) {
		if (object) {
			if (in->end - in->p < 4) {
				in->p = in->end;
				break;
			}
			size_t len = (size_t)vtake(in, 4);
			if (len > (size_t)(in->end - in->p))
				len = (size_t)(in->end - in->p);
			size_t want_len = sanitize(want, (const char *)in->p, len);
			in->p += len;
			if (kid == NULL || kid->key_len != want_len ||
			    memcmp(kid->key, want, want_len) != 0)
				FUZZ_FAIL("%s: member %u: key differs", what, k);
		}
		if (kid == NULL)
			FUZZ_FAIL("%s: item %u missing", what, k);
		expect_value(kid, in, depth + 1, what);
		kid = kid->next;
	}
	if (kid != NULL)
		FUZZ_FAIL("%s: more items than recorded", what);
}

/* The oracle: what the bytes say (record/value.h's rules: cut where they end, an
 * unknown tag ends the value, null for a missing item, nothing deeper than
 * RTR_VALUE_MAX_DEPTH) against the node v. */
static void expect_value(const struct jnode *v, struct vbytes *in, unsigned depth, const char *what)
{
	if (in->p == in->end)
		return expect_json_null(v, what);
	int tag = *in->p++;
	size_t left = (size_t)(in->end - in->p), need = 0;
	bool known = true;
	switch (tag) {
	case 'i':
	case 'u':
	case 'd':
		need = 8;
		break;
	case 's':
	case '[':
	case '{':
		need = 4;
		break;
	case 'n':
	case 'f':
	case 't':
		break;
	default:
		known = false;
	}
	if (!known || left < need) {
		in->p = in->end;
		return expect_json_null(v, what);
	}
	uint64_t x = vtake(in, need);
	double d;
	if (tag == 'n') {
		expect_json_null(v, what);
	} else if (tag == 'f' || tag == 't') {
		if (v->type != J_BOOL || (v->s[0] == 't') != (tag == 't'))
			FUZZ_FAIL("%s: want %s", what, tag == 't' ? "true" : "false");
	} else if (tag == 'i' || tag == 'u') {
		if (v->type != J_NUM || (tag == 'i' ? (uint64_t)strtoll(v->s, NULL, 10)
						    : strtoull(v->s, NULL, 10)) != x)
			FUZZ_FAIL("%s: want %llu", what, (unsigned long long)x);
	} else if (tag == 'd') {
		memcpy(&d, &x, sizeof(d));
		if (!isfinite(d))
			expect_json_null(v, what);
		else if (v->type != J_NUM || strtod(v->s, NULL) != d)
			FUZZ_FAIL("%s: want %.17g", what, d);
	} else if (tag == 's') {
		size_t len = x < left - 4 ? (size_t)x : left - 4;
		expect_str(v, (const char *)in->p, len, what);
		in->p += len;
	} else if (depth >= RTR_VALUE_MAX_DEPTH) {
		in->p = in->end;
		expect_json_null(v, what);
	} else {
		if (v->type != (tag == '{' ? J_OBJ : J_ARR))
			FUZZ_FAIL("%s: want %s", what, tag == '{' ? "an object" : "an array");
		expect_members(v, in, (uint32_t)x, tag == '{', depth, what);
	}
}

static void check_args(const struct op *o, const struct jnode *ev)
{
	const struct jnode *args = jget(ev, "args");
	unsigned kept = o->nargs < RTR_MAX_ARGS ? o->nargs : RTR_MAX_ARGS;

	if (kept == 0) {
		if (args != NULL && args->n != 0)
			FUZZ_FAIL("arguments on an event without any");
		return;
	}
	if (args == NULL || args->type != J_OBJ || args->n != kept)
		FUZZ_FAIL("want %u arguments, have %zu", kept, args ? args->n : 0);
	for (unsigned i = 0; i < kept; i++) {
		const struct rtr_arg *a = &o->args[i];
		const struct jnode *v = jget(args, keys[i]);
		if (v == NULL)
			FUZZ_FAIL("argument %s missing", keys[i]);
		switch (a->type) {
		case RTR_ARG_TYPE_I64:
			if (v->type != J_NUM || strtoll(v->s, NULL, 10) != a->v.i64)
				FUZZ_FAIL("%s: want %lld", keys[i], (long long)a->v.i64);
			break;
		case RTR_ARG_TYPE_STR_COPY:
			if (a->v.str == NULL) {
				if (v->type != J_NULL)
					FUZZ_FAIL("%s: want null", keys[i]);
				break;
			}
			expect_copy(v, a->v.str, RTR_MAX_COPY, keys[i]);
			break;
		case RTR_ARG_TYPE_VALUE: {
			uint32_t len =
				a->v.value.len < RTR_MAX_COPY ? a->v.value.len : RTR_MAX_COPY;
			struct vbytes in = {a->v.value.bytes,
					    (const unsigned char *)a->v.value.bytes + len};
			expect_value(v, &in, 0, keys[i]);
			break;
		}
		case RTR_ARG_TYPE_I64_ARRAY: {
			uint32_t n = a->v.i64s.v == NULL ? 0 : a->v.i64s.n;
			if (n > RTR_MAX_COPY / sizeof(int64_t))
				n = RTR_MAX_COPY / sizeof(int64_t); /* whole values in 4 KiB */
			if (v->type != J_ARR || v->n != n)
				FUZZ_FAIL("%s: want %u values, have %zu", keys[i], n, v->n);
			const struct jnode *x = v->kids;
			for (uint32_t k = 0; k < n; k++, x = x->next)
				if (x->type != J_NUM || strtoll(x->s, NULL, 10) != a->v.i64s.v[k])
					FUZZ_FAIL("%s[%u]: want %lld", keys[i], k,
						  (long long)a->v.i64s.v[k]);
			break;
		}
		case RTR_ARG_TYPE_STR_ARRAY: {
			/* the items share RTR_MAX_COPY bytes, 4 of length each besides */
			size_t bytes = 0, n = 0;
			if (a->v.strs.v != NULL)
				for (; n < a->v.strs.n && RTR_MAX_COPY - bytes >= 4; n++) {
					const char *s = a->v.strs.v[n];
					bytes += 4 + (s ? strnlen(s, RTR_MAX_COPY - bytes - 4) : 0);
				}
			if (v->type != J_ARR || v->n != n)
				FUZZ_FAIL("%s: want %zu items, have %zu", keys[i], n, v->n);
			bytes = 0;
			const struct jnode *x = v->kids;
			for (size_t k = 0; k < n; k++, x = x->next) {
				const char *s = a->v.strs.v[k];
				if (s == NULL) {
					if (x->type != J_NULL)
						FUZZ_FAIL("%s[%zu]: want null", keys[i], k);
					bytes += 4;
					continue;
				}
				size_t room = RTR_MAX_COPY - bytes - 4;
				expect_copy(x, s, room, keys[i]);
				bytes += 4 + strnlen(s, room);
			}
			break;
		}
		}
	}
}

/* Line by line, the file's new text against ops[0 .. nops). */
static void check_file(int nops)
{
	struct stat st;
	int next = 0;

	if (fstat(rfd, &st) != 0)
		FUZZ_FAIL("fstat");
	size_t n = (size_t)(st.st_size - consumed);
	if (n + 1 > text_cap) {
		text_cap = n + 1 > 2 * text_cap ? n + 1 : 2 * text_cap;
		text = realloc(text, text_cap);
		if (text == NULL)
			FUZZ_FAIL("out of memory");
	}
	if (pread(rfd, text, n, consumed) != (ssize_t)n)
		FUZZ_FAIL("short read of the trace");
	const off_t base = consumed;
	size_t at = 0;
	while (at < n) {
		char *nl = memchr(text + at, '\n', n - at);
		if (nl == NULL)
			FUZZ_FAIL("a line without its end at byte %lld",
				  (long long)(base + (off_t)at));
		size_t len = (size_t)(nl - (text + at)), pad = 0;
		const char *line = text + at;
		/* a line that would cross a 4 KiB page of the file starts on the next one,
		 * after spaces (out_commit() in src/writer/out.h) */
		while (pad < len && line[pad] == ' ')
			pad++;
		if (pad > 0 && ((uint64_t)(base + (off_t)(at + pad)) & 4095) != 0)
			FUZZ_FAIL("spaces before a line that starts inside a page");
		line += pad;
		at += pad;
		len -= pad;
		if (base + (off_t)at == 0) { /* the file's "[" */
			if (len != 1 || line[0] != '[')
				FUZZ_FAIL("the file does not start with [");
			at += len + 1;
			consumed = base + (off_t)at;
			continue;
		}
		if (len == 1 && line[0] == ']')
			break; /* the provisional close: the next write goes over it */
		if (len == 0)
			FUZZ_FAIL("an empty line at byte %lld", (long long)(base + (off_t)at));
		int comma = line[len - 1] == ',';
		struct jarena arena = {arena_bytes, 0, sizeof(arena_bytes)};
		const struct jnode *ev = json_parse(&arena, line, len - (size_t)comma);
		if (ev->type != J_OBJ)
			FUZZ_FAIL("a line that is not an object");
		if (!comma) { /* the provisional end marker */
			const struct jnode *name = jget(ev, "name");
			if (name == NULL || strcmp(name->s, "ringtrace: end") != 0)
				FUZZ_FAIL("a line without a comma that is not the end marker");
			/* blocking mode: nothing dropped, no record of ours taken as corrupt */
			const struct jnode *dropped = jget(jget(ev, "args"), "dropped");
			if (dropped == NULL || dropped->type != J_NUM ||
			    strcmp(dropped->s, "0") != 0)
				FUZZ_FAIL("the end marker counts dropped events: %s",
					  dropped ? dropped->s : "(none)");
			at += len + 1;
			continue;
		}
		at += len + 1;
		consumed = base + (off_t)at;
		const struct jnode *cat = jget(ev, "cat"), *ph = jget(ev, "ph");
		if (cat == NULL || strcmp(cat->s, CAT) != 0 || ph == NULL ||
		    strcmp(ph->s, "E") == 0)
			continue; /* metadata, markers, the ends of op 1 */
		if (next == nops)
			FUZZ_FAIL("more events than calls");
		const struct op *o = &ops[next++];
		const struct jnode *name = jget(ev, "name");
		if (o->kind == 2) {
			if (strcmp(ph->s, "i") != 0 || name == NULL || strcmp(name->s, "args") != 0)
				FUZZ_FAIL("want the instant \"args\"");
			check_args(o, ev);
		} else {
			if (strcmp(ph->s, o->kind == 0 ? "i" : "X") != 0)
				FUZZ_FAIL("want ph %s, have %s", o->kind == 0 ? "i" : "X", ph->s);
			expect_copy(name, o->name != NULL ? o->name : "", RTR_MAX_COPY, "name");
		}
	}
	if (next != nops)
		FUZZ_FAIL("%d events for %d calls", next, nops);
}

/* Items of a value from the input: well formed mostly, and counts that promise more
 * than follows, raw bytes, depths past RTR_VALUE_MAX_DEPTH, strings past RTR_MAX_COPY. */
static void make_value(struct input *in, struct rtr_value *v, unsigned depth)
{
	unsigned op = take_u8(in), n;
	uint64_t x = 0;
	double d;

	if (depth > RTR_VALUE_MAX_DEPTH + 4)
		op = 0;
	switch (op % 10) {
	case 0:
		rtr_value_null(v);
		break;
	case 1:
		rtr_value_bool(v, op & 0x10);
		break;
	case 2:
	case 3:
	case 4:
		for (int b = 0; b < 8; b++)
			x |= (uint64_t)take_u8(in) << (8 * b);
		memcpy(&d, &x, sizeof(d));
		if (op % 10 == 2)
			rtr_value_i64(v, (int64_t)x);
		else if (op % 10 == 3)
			rtr_value_u64(v, x);
		else
			rtr_value_f64(v, d);
		break;
	case 5:
	case 6:
		n = op % 10 == 5 ? take_u8(in) % 64 : take_u16(in) % (RTR_MAX_COPY + 64);
		n = n < in->n ? n : (unsigned)in->n;
		rtr_value_str(v, (const char *)in->p, n);
		in->p += n, in->n -= n;
		break;
	case 7:
	case 8:
		n = take_u8(in) % 6;
		(op % 10 == 7 ? rtr_value_array : rtr_value_object)(v, n + (op & 0x80 ? 3 : 0));
		for (unsigned k = 0; k < n; k++) {
			if (op % 10 == 8) {
				size_t len = in->n < 3 ? in->n : 3;
				rtr_value_key(v, (const char *)in->p, len);
				in->p += len, in->n -= len;
			}
			make_value(in, v, depth + 1);
		}
		break;
	default: /* raw bytes */
		n = take_u8(in) % 16;
		n = n < in->n ? n : (unsigned)in->n;
		if (!v->cut && n <= v->cap - v->len) {
			memcpy(v->buf + v->len, in->p, n);
			v->len += n;
		}
		in->p += n, in->n -= n;
		break;
	}
}

static void make_args(struct input *in, int i, struct op *o)
{
	o->nargs = take_u8(in) % (MAX_ARGS_IN + 1);
	for (unsigned k = 0; k < o->nargs; k++) {
		struct rtr_arg *a = &o->args[k];
		unsigned type = take_u8(in);
		memset(a, 0, sizeof(*a));
		a->key = keys[k];
		switch (type % 6) {
		case 0:
			a->type = RTR_ARG_TYPE_STR_COPY;
			a->v.str = take_str(in, take_u16(in) % (RTR_MAX_COPY + 64), bufs[i][k][0]);
			break;
		case 1:
			a->type = RTR_ARG_TYPE_STR_COPY; /* NULL: null */
			break;
		case 2: {
			a->type = RTR_ARG_TYPE_STR_ARRAY;
			unsigned n = take_u8(in) % (MAX_ITEMS + 2); /* MAX_ITEMS + 1: NULL array */
			if (n > MAX_ITEMS)
				break;
			for (unsigned j = 0; j < n; j++) {
				unsigned len = take_u16(in);
				items[i][k][j] = len == 0xffff
							 ? NULL
							 : take_str(in, len % (RTR_MAX_COPY + 64),
								    bufs[i][k][j]);
			}
			a->v.strs.v = items[i][k];
			a->v.strs.n = n;
			break;
		}
		case 3: {
			a->type = RTR_ARG_TYPE_I64_ARRAY;
			unsigned n = take_u16(in) % (MAX_VALUES + 2); /* MAX_VALUES + 1: NULL */
			if (n > MAX_VALUES) {
				a->v.i64s.n = 3; /* a count without values: [] */
				break;
			}
			for (unsigned j = 0; j < n; j++) {
				uint64_t v = 0;
				for (int b = 0; b < 8; b++)
					v |= (uint64_t)take_u8(in) << (8 * b);
				values[i][k][j] = (int64_t)v;
			}
			a->v.i64s.v = values[i][k];
			a->v.i64s.n = n;
			break;
		}
		case 4: {
			struct rtr_value v;
			rtr_value_init(&v, bufs[i][k][0], sizeof(bufs[i][k][0]));
			make_value(in, &v, 0);
			*a = RTR_ARG_VALUE(keys[k], bufs[i][k][0], v.len);
			has_values = 1;
			break;
		}
		default: {
			a->type = RTR_ARG_TYPE_I64;
			uint64_t v = 0;
			for (int b = 0; b < 8; b++)
				v |= (uint64_t)take_u8(in) << (8 * b);
			a->v.i64 = (int64_t)v;
			break;
		}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size};
	int nops = 0;

	has_values = 0;
	while (in.n > 0 && nops < MAX_OPS) {
		struct op *o = &ops[nops];
		o->kind = (int)(take_u8(&in) % 3);
		o->nargs = 0;
		if (o->kind == 2) {
			make_args(&in, nops, o);
			rtr_instant_args(CAT, "args", o->args, o->nargs);
		} else {
			unsigned len = take_u16(&in);
			/* 0xffff: a NULL name, recorded as "" */
			o->name = len == 0xffff ? NULL
						: take_str(&in, len % (RTR_MAX_COPY + 64),
							   bufs[nops][MAX_ARGS_IN][0]);
			if (o->kind == 0) {
				rtr_instant_copy(CAT, o->name);
			} else {
				rtr_begin_copy(CAT, o->name);
				rtr_end(CAT, "end");
			}
		}
		nops++;
	}
	if (rtr_flush() != 0)
		FUZZ_FAIL("rtr_flush failed");
	json_duplicate_keys_ok = has_values; /* a value's keys are carried as they were built */
	check_file(nops);
	if (consumed > FILE_BYTES)
		restart_recorder();
	return 0;
}
