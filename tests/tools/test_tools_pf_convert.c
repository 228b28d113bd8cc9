/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace convert --to json` of a .pftrace writes the JSON the library writes for
 * the same events (docs/commands/ringtrace-convert.md): the same events recorded once
 * in each format, convert's JSON compared with the library's event by event (names,
 * ph, category, pid and tid, arguments; ts and dur where the program gave them), read
 * back with yajl, a parser that is neither's. Only the documented differences are
 * allowed: an async span's id (the track's uuid in Perfetto), rtr_counters (a C per
 * series in Perfetto, named "name key"), a process's M events at any of its tids, the
 * start marker's "format" and the values of the markers' counts of bytes. A slice
 * written as a B and an E counts as the one X that ends where its E is, in either
 * file: the library writes one X at the E (or, before that change, B and E), convert
 * an X when the END follows its BEGIN and B and E around what happened in between.
 */
#include <ringtrace.h>

#include "json_tree.h"
#include "tool_test.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Times the program gave, from t0: what both files must place the same. */
static const char *const exact[] = {"ref", "exact", "exact args", "kernel", "overlap", "mark"};

static void *worker(void *arg)
{
	(void)arg;
	rtr_thread_name("worker");
	for (int i = 0; i < 3; i++) {
		rtr_begin_v("work", "step", RTR_ARG_I64("i", i));
		rtr_counter_i64("work", "depth", i);
		rtr_end("work", "step");
	}
	return NULL;
}

/* The same events into path, in whichever format its name says. */
static void record(const char *path)
{
	struct rtr_config cfg;
	pthread_t th;
	static int x;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("main");
	uint64_t t0 = rtr_now_ns();
	rtr_complete("app", "ref", t0, 0);
	rtr_complete("app", "exact", t0 + 1000, 2345);
	rtr_complete_args("app", "exact args", t0 + 5000, 10,
			  (const struct rtr_arg[]){RTR_ARG_I64("n", -3)}, 1);
	rtr_begin_v("app", "with args", RTR_ARG_I64("neg", -42), RTR_ARG_U64("big", UINT64_MAX),
		    RTR_ARG_F64("pi", 3.25), RTR_ARG_BOOL("yes", 1), RTR_ARG_STR("str", "static"),
		    RTR_ARG_STR_COPY("copy", "copied \"quoted\""));
	rtr_instant("app", "inside");
	rtr_scope_arg_i64("app", "added", 99);
	rtr_end("app", "with args");
	int64_t arr[3] = {1, -2, 3};
	rtr_instant_v("app", "array", RTR_ARG_I64_ARRAY("xs", arr, 3));
	rtr_counter_i64("app", "queue", 7);
	rtr_counter_f64("app", "load", 0.5);
	rtr_counter_i64("other", "queue", 8); /* the same name in another category */
	rtr_counter_args("app", "series",
			 (const struct rtr_arg[]){RTR_ARG_I64("a", 1), RTR_ARG_F64("b", 2.5)}, 2);
	rtr_flow_start("app", "send", 0xabcdef);
	rtr_flow_end("app", "recv", 0xabcdef);
	rtr_async_begin("io", "read", 77, NULL, 0);
	rtr_async_end("io", "read", 77);
	rtr_instant_scoped("app", "global", RTR_INSTANT_GLOBAL, NULL, 0);
	rtr_instant_scoped("app", "process", RTR_INSTANT_PROCESS, NULL, 0);
	rtr_mem_alloc(RTR_MEM_HOST, &x, 4096);
	rtr_mem_free(RTR_MEM_HOST, &x);
	struct rtr_track_desc d = RTR_TRACK_DESC_INIT();
	d.process = "GPU 0";
	d.lane = "stream 7";
	struct rtr_track *t = rtr_track_create(&d);
	assert_non_null(t);
	rtr_track_complete(t, "gpu", "kernel", t0 + 100, 500, NULL, 0);
	rtr_track_complete(t, "gpu", "overlap", t0 + 200, 500, NULL, 0);
	rtr_track_instant(t, "gpu", "mark", t0 + 150, NULL, 0);
	rtr_thread_sort_index(-3);
	rtr_process_label("label one");
	assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(rtr_stop(), 0);
}

/* An event of a file: its line and its tree. */
struct event {
	char *line;
	yajl_val v;
};

struct file {
	struct event *ev;
	size_t n;
	long long pid;
	char worker_tid[32]; /* the worker's tid as text, from its thread_name */
	double ref_us;	     /* the ts of "ref" */
};

/* The events of a bare-array file, one per line. */
static void load(const char *path, struct file *f)
{
	char *text = tu_read_file(path, NULL), *save = NULL;

	memset(f, 0, sizeof(*f));
	for (char *l = strtok_r(text, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(l);
		if (strcmp(l, "[") == 0 || strcmp(l, "]") == 0)
			continue;
		if (l[len - 1] == ',')
			l[--len] = '\0';
		f->ev = realloc(f->ev, (f->n + 1) * sizeof(*f->ev));
		f->ev[f->n].line = strdup(l);
		f->ev[f->n].v = jt_parse(l, path);
		f->n++;
	}
	free(text);
	for (size_t i = 0; i < f->n; i++) {
		yajl_val v = f->ev[i].v;
		const char *name = jt_str(v, "name");
		if (strcmp(name, "ringtrace: start") == 0)
			f->pid = jt_int(v, "pid");
		if (strcmp(name, "thread_name") == 0 &&
		    strcmp(jt_str(jt_at(v, "args"), "name"), "worker") == 0)
			snprintf(f->worker_tid, sizeof(f->worker_tid), "%lld", jt_int(v, "tid"));
		if (strcmp(name, "ref") == 0)
			f->ref_us = jt_double(v, "ts");
	}
}

static yajl_val member(yajl_val v, const char *key)
{
	const char *path[] = {key, NULL};

	return yajl_tree_get(v, path, yajl_t_any);
}

/* A JSON value as text (strings escaped as far as the tests' need: quotes, \\). */
static void put_value(char **p, yajl_val v)
{
	switch (v->type) {
	case yajl_t_string:
		*(*p)++ = '"';
		for (const char *s = v->u.string; *s != '\0'; s++) {
			if (*s == '"' || *s == '\\')
				*(*p)++ = '\\';
			*(*p)++ = *s;
		}
		*(*p)++ = '"';
		break;
	case yajl_t_number:
		*p += sprintf(*p, "%s", v->u.number.r);
		break;
	case yajl_t_object:
		*(*p)++ = '{';
		for (size_t i = 0; i < v->u.object.len; i++) {
			if (i > 0)
				*(*p)++ = ',';
			*p += sprintf(*p, "\"%s\":", v->u.object.keys[i]);
			put_value(p, v->u.object.values[i]);
		}
		*(*p)++ = '}';
		break;
	case yajl_t_array:
		*(*p)++ = '[';
		for (size_t i = 0; i < v->u.array.len; i++) {
			if (i > 0)
				*(*p)++ = ',';
			put_value(p, v->u.array.values[i]);
		}
		*(*p)++ = ']';
		break;
	case yajl_t_true:
		*p += sprintf(*p, "true");
		break;
	case yajl_t_false:
		*p += sprintf(*p, "false");
		break;
	default:
		*p += sprintf(*p, "null");
		break;
	}
}

/* Each B with its E on the same thread as the X that ends where the E is: ts the
 * B's, dur to the E's, the B's args then the E's; the B taken out. */
static void pair_slices(struct file *f)
{
	for (size_t e = 0; e < f->n; e++) {
		yajl_val ve = f->ev[e].v;
		if (strcmp(jt_str(ve, "ph"), "E") != 0)
			continue;
		size_t b = e, depth = 0;
		while (b-- > 0) { /* its B: the innermost open one of its thread */
			yajl_val vb = f->ev[b].v;
			if (jt_int(vb, "tid") != jt_int(ve, "tid") ||
			    jt_int(vb, "pid") != jt_int(ve, "pid"))
				continue;
			const char *ph = jt_str(vb, "ph");
			if (strcmp(ph, "E") == 0)
				depth++;
			else if (strcmp(ph, "B") == 0 && depth-- == 0)
				break;
		}
		if (b == (size_t)-1)
			continue;
		yajl_val vb = f->ev[b].v, ab = member(vb, "args"), ae = member(ve, "args");
		char *line = malloc(strlen(f->ev[b].line) + strlen(f->ev[e].line) + 256), *p = line;
		p += sprintf(p, "{\"ph\":\"X\"");
		if (member(vb, "cat") != NULL) {
			p += sprintf(p, ",\"cat\":");
			put_value(&p, member(vb, "cat"));
		}
		p += sprintf(p, ",\"name\":");
		put_value(&p, member(vb, "name"));
		p += sprintf(p, ",\"ts\":%s,\"dur\":%.3f,\"pid\":%lld,\"tid\":%lld",
			     member(vb, "ts")->u.number.r,
			     jt_double(ve, "ts") - jt_double(vb, "ts"), jt_int(vb, "pid"),
			     jt_int(vb, "tid"));
		if (ab != NULL || ae != NULL) {
			p += sprintf(p, ",\"args\":{");
			for (int k = 0, n = 0; k < 2; k++) {
				yajl_val a = k == 0 ? ab : ae;
				for (size_t i = 0; a != NULL && i < a->u.object.len; i++, n++) {
					p += sprintf(p, "%s\"%s\":", n > 0 ? "," : "",
						     a->u.object.keys[i]);
					put_value(&p, a->u.object.values[i]);
				}
			}
			*p++ = '}';
		}
		sprintf(p, "}");
		free(f->ev[e].line);
		yajl_tree_free(f->ev[e].v);
		f->ev[e].line = line;
		f->ev[e].v = jt_parse(line, "a paired slice");
		free(f->ev[b].line);
		yajl_tree_free(f->ev[b].v);
		memmove(&f->ev[b], &f->ev[b + 1], (f->n - b - 1) * sizeof(*f->ev));
		f->n--;
		e--;
	}
}

static void unload(struct file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->ev[i].line);
		yajl_tree_free(f->ev[i].v);
	}
	free(f->ev);
}

/* a and b the same JSON: keys in the same order, numbers as the same text. */
static bool same(yajl_val a, yajl_val b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case yajl_t_string:
		return strcmp(a->u.string, b->u.string) == 0;
	case yajl_t_number:
		return strcmp(a->u.number.r, b->u.number.r) == 0;
	case yajl_t_object:
		if (a->u.object.len != b->u.object.len)
			return false;
		for (size_t i = 0; i < a->u.object.len; i++)
			if (strcmp(a->u.object.keys[i], b->u.object.keys[i]) != 0 ||
			    !same(a->u.object.values[i], b->u.object.values[i]))
				return false;
		return true;
	case yajl_t_array:
		if (a->u.array.len != b->u.array.len)
			return false;
		for (size_t i = 0; i < a->u.array.len; i++)
			if (!same(a->u.array.values[i], b->u.array.values[i]))
				return false;
		return true;
	default:
		return true;
	}
}

/* The thread an event is on, the same in both files: the worker by its name. */
static void thread_key(const struct file *f, yajl_val v, char *out, size_t size)
{
	char tid[32];

	snprintf(tid, sizeof(tid), "%lld", jt_int(v, "tid"));
	snprintf(out, size, "%lld/%s", jt_int(v, "pid") == f->pid ? 0 : jt_int(v, "pid"),
		 strcmp(tid, f->worker_tid) == 0 ? "worker"
		 : jt_int(v, "tid") == f->pid	 ? "main"
						 : tid);
}

static bool is_exact(const char *name)
{
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(name, exact[i]) == 0)
			return true;
	return false;
}

/* The key of an event for its thread's sequence of events in the file. */
static bool is_marker(yajl_val v)
{
	const char *name = jt_str(v, "name");

	return strncmp(name, "ringtrace: ", 11) == 0 && strcmp(jt_str(v, "ph"), "i") == 0;
}

/* Where a and b differ, in words; NULL when they do not (documented differences
 * allowed). */
static const char *differ(const struct file *fa, yajl_val a, const struct file *fb, yajl_val b)
{
	static const char *const keys[] = {"ph", "s", "bp", "cat", "name", "id"};
	static char why[64];
	char ta[64], tb[64];
	const char *ph = jt_str(a, "ph");

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		if (strcmp(keys[k], "id") == 0 && strchr("ben", ph[0]) != NULL)
			continue; /* async: the track's uuid in Perfetto */
		if (!same(member(a, keys[k]), member(b, keys[k])))
			return keys[k];
	}
	thread_key(fa, a, ta, sizeof(ta));
	thread_key(fb, b, tb, sizeof(tb));
	if (strcmp(ta, tb) != 0)
		return "pid/tid";
	if ((member(a, "ts") == NULL) != (member(b, "ts") == NULL) ||
	    (member(a, "dur") == NULL) != (member(b, "dur") == NULL))
		return "ts or dur present";
	if (is_exact(jt_str(a, "name"))) {
		long long ra = llround((jt_double(a, "ts") - fa->ref_us) * 1000);
		long long rb = llround((jt_double(b, "ts") - fb->ref_us) * 1000);
		if (ra != rb)
			return "ts from the ref";
		/* in ns: an X's dur may be written as the double that adds up with its ts */
		if (member(a, "dur") != NULL &&
		    llround(jt_double(a, "dur") * 1000) != llround(jt_double(b, "dur") * 1000))
			return "dur";
	}
	yajl_val aa = member(a, "args"), ab = member(b, "args");
	if (is_marker(a)) { /* the same keys; the values are the run's */
		if ((aa == NULL) != (ab == NULL))
			return "args present";
		size_t i = 0, j = 0;
		for (; aa != NULL && i < aa->u.object.len && j < ab->u.object.len; i++, j++) {
			if (strcmp(ab->u.object.keys[j], "format") == 0)
				j++; /* the format, said by Perfetto's start marker */
			if (j == ab->u.object.len ||
			    strcmp(aa->u.object.keys[i], ab->u.object.keys[j]))
				return snprintf(why, sizeof(why), "marker key %s",
						aa->u.object.keys[i]),
				       why;
		}
		return NULL;
	}
	if (!same(aa, ab))
		return "args";
	return NULL;
}

/* rtr_counters' series: a C per series in Perfetto (documented). */
static bool is_series(yajl_val v)
{
	return strcmp(jt_str(v, "ph"), "C") == 0 && strncmp(jt_str(v, "name"), "series", 6) == 0;
}

/* The events of thread key in f, M events and series left out, in file order. */
static size_t of_thread(const struct file *f, const char *key, const struct event **out)
{
	size_t n = 0;
	char tk[64];

	for (size_t i = 0; i < f->n; i++) {
		yajl_val v = f->ev[i].v;
		if (strcmp(jt_str(v, "ph"), "M") == 0 || is_series(v))
			continue;
		thread_key(f, v, tk, sizeof(tk));
		if (strcmp(tk, key) == 0)
			out[n++] = &f->ev[i];
	}
	return n;
}

static void converts_as_the_library_writes(void **state)
{
	(void)state;
	char *json = strdup(tool_tmp("lib.json"));
	char *pf = strdup(tool_tmp("lib.pftrace"));
	char *conv = strdup(tool_tmp("conv.json"));
	struct tool_run r;
	struct file a, b;

	record(json);
	record(pf);
	tool_run(&r, NULL, "convert", "--to", "json", "-o", conv, pf, NULL);
	if (r.status != 0)
		fail_msg("convert: %d\n%s", r.status, r.err);
	tool_run_free(&r);
	load(json, &a);
	load(conv, &b);
	pair_slices(&a);
	pair_slices(&b);
	assert_true(a.n > 20);
	assert_true(a.worker_tid[0] != '\0' && b.worker_tid[0] != '\0');

	/* every thread's events, in order */
	const struct event **ea = calloc(a.n, sizeof(*ea)), **eb = calloc(b.n, sizeof(*eb));
	char keys[16][64];
	size_t nkeys = 0, compared = 0;
	for (size_t i = 0; i < a.n; i++) {
		char k[64];
		thread_key(&a, a.ev[i].v, k, sizeof(k));
		size_t j = 0;
		while (j < nkeys && strcmp(keys[j], k) != 0)
			j++;
		if (j == nkeys && nkeys < 16)
			snprintf(keys[nkeys++], sizeof(keys[0]), "%s", k);
	}
	for (size_t k = 0; k < nkeys; k++) {
		size_t na = of_thread(&a, keys[k], ea), nb = of_thread(&b, keys[k], eb);
		for (size_t i = 0; i < na || i < nb; i++) {
			if (i >= na || i >= nb)
				fail_msg("thread %s: %zu events in the library's JSON, %zu in "
					 "convert's; the first apart:\n%s",
					 keys[k], na, nb, i < na ? ea[i]->line : eb[i]->line);
			const char *why = differ(&a, ea[i]->v, &b, eb[i]->v);
			if (why != NULL)
				fail_msg("thread %s, event %zu: %s differs:\nlibrary: %s\nconvert: "
					 "%s",
					 keys[k], i, why, ea[i]->line, eb[i]->line);
			compared++;
		}
	}
	size_t want = 0;
	for (size_t i = 0; i < a.n; i++)
		want += strcmp(jt_str(a.ev[i].v, "ph"), "M") != 0 && !is_series(a.ev[i].v);
	assert_int_equal(compared, want);

	/* rtr_counters: one C of its series in the library's JSON, a C per series named
	 * "name key" in convert's (Perfetto has a track per series) */
	yajl_val lib = NULL, sa = NULL, sb = NULL;
	for (size_t i = 0; i < a.n; i++)
		if (is_series(a.ev[i].v))
			lib = a.ev[i].v;
	for (size_t i = 0; i < b.n; i++) {
		if (!is_series(b.ev[i].v))
			continue;
		if (strcmp(jt_str(b.ev[i].v, "name"), "series a") == 0)
			sa = b.ev[i].v;
		else if (strcmp(jt_str(b.ev[i].v, "name"), "series b") == 0)
			sb = b.ev[i].v;
	}
	assert_non_null(lib);
	assert_non_null(sa);
	assert_non_null(sb);
	assert_int_equal(jt_int(jt_at(lib, "args"), "a"), 1);
	assert_true(jt_double(jt_at(lib, "args"), "b") == 2.5);
	assert_int_equal(jt_int(jt_at(sa, "args"), "value"), 1);
	assert_true(jt_double(jt_at(sb, "args"), "value") == 2.5);
	assert_string_equal(jt_str(sa, "cat"), "app");
	assert_int_equal(jt_int(sa, "tid"), jt_int(lib, "tid") - a.pid + b.pid);

	/* the M events: the same set (a process's at any of its tids: Perfetto reads
	 * only the pid of process_name, process_labels and process_sort_index) */
	for (size_t i = 0; i < a.n; i++) {
		yajl_val v = a.ev[i].v;
		if (strcmp(jt_str(v, "ph"), "M") != 0)
			continue;
		bool process = strncmp(jt_str(v, "name"), "process_", 8) == 0;
		char ka[64], kb[64];
		thread_key(&a, v, ka, sizeof(ka));
		if (process)
			*strchr(ka, '/') = '\0';
		bool found = false;
		for (size_t j = 0; j < b.n && !found; j++) {
			yajl_val w = b.ev[j].v;
			thread_key(&b, w, kb, sizeof(kb));
			if (process)
				*strchr(kb, '/') = '\0';
			found = strcmp(jt_str(w, "ph"), "M") == 0 &&
				strcmp(jt_str(v, "name"), jt_str(w, "name")) == 0 &&
				strcmp(ka, kb) == 0 && same(member(v, "args"), member(w, "args"));
		}
		if (!found)
			fail_msg("not in convert's JSON: %s", a.ev[i].line);
	}
	free(ea);
	free(eb);
	unload(&a);
	unload(&b);
	unlink(json);
	unlink(pf);
	unlink(conv);
	free(json);
	free(pf);
	free(conv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(converts_as_the_library_writes),
	};
	return cmocka_run_group_tests_name("tools_pf_convert", tests, NULL, NULL);
}
