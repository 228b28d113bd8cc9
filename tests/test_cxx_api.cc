/* SPDX-License-Identifier: MIT */
/*
 * ringtrace.hpp, the C++ API: scopes with typed arguments, copied names, the other
 * calls and the session, read back from the trace with the tests' reader. Built as
 * C++17 and C++20 with -Wall -Wextra -Wpedantic -Wold-style-cast -Werror.
 */
#include <ringtrace.hpp>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

/* C headers without extern "C" of their own */
extern "C" {
#include "test_util.h"
#include "trace_read.h"

#include <cmocka.h>
}

namespace
{

int evaluations; /* calls of counted() */

template <class T> T counted(T v)
{
	evaluations++;
	return v;
}

/* A slice of the trace: an X, or a B and its E on the same thread. */
struct slice {
	const tt_event *ev; /* the X or the B */
	uint64_t t0, t1;
};

std::vector<slice> slices_of(const tt_trace &t)
{
	std::vector<slice> out, open;
	for (size_t i = 0; i < t.n; i++) {
		const tt_event &e = t.ev[i];
		if (std::strcmp(e.ph, "X") == 0) {
			out.push_back({&e, e.ts_ns, e.ts_ns + e.dur_ns});
		} else if (std::strcmp(e.ph, "B") == 0) {
			open.push_back({&e, e.ts_ns, 0});
		} else if (std::strcmp(e.ph, "E") == 0) {
			assert_false(open.empty());
			slice s = open.back();
			open.pop_back();
			assert_string_equal(s.ev->name, e.name); /* an E names its B */
			s.t1 = e.ts_ns;
			out.push_back(s);
		}
	}
	assert_true(open.empty());
	return out;
}

const slice &find_slice(const std::vector<slice> &v, const char *name)
{
	for (const slice &s : v)
		if (s.ev->name != nullptr && std::strcmp(s.ev->name, name) == 0)
			return s;
	fail_msg("no slice named %s", name);
	return v.front();
}

const tt_event *find_event(const tt_trace &t, const char *ph, const char *name)
{
	for (size_t i = 0; i < t.n; i++)
		if (std::strcmp(t.ev[i].ph, ph) == 0 && t.ev[i].name != nullptr &&
		    std::strcmp(t.ev[i].name, name) == 0)
			return &t.ev[i];
	fail_msg("no %s event named %s", ph, name);
	return nullptr;
}

void start(char *path, size_t size, const char *name)
{
	tu_own_file(path, size, "cxx_api", name, ".json");
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
}

void load(const char *path, tt_trace *t)
{
	assert_int_equal(rtr_stop(), 0);
	std::memset(t, 0, sizeof(*t));
	if (tt_load(path, 0, t) != 0)
		fail_msg("%s", t->error);
}

enum class mode : int8_t { slow = -3 };

} // namespace

static void scope_records_typed_arguments_evaluated_once(void **state)
{
	char path[4096];
	tt_trace t;
	int i = 7;
	double dt = 0.25;
	std::string file = "data/in.bin";

	(void)state;
	start(path, sizeof(path), "typed");
	evaluations = 0;
	{
		RINGTRACE_SCOPE("solver", "step", "i", counted(i), "dt", counted(dt), "ok",
				counted(true), "mode", "fast", "u", counted(UINT64_MAX), "neg",
				counted(INT64_MIN), "file", counted(std::string_view(file)),
				"owned", counted(file), "cstr", file.c_str(), "m", mode::slow);
		file.assign("overwritten"); /* the arguments were copied at the start */
	}
	assert_int_equal(evaluations, 7);
	load(path, &t);
	std::vector<slice> v = slices_of(t);
	const tt_event *e = find_slice(v, "step").ev;
	assert_string_equal(e->cat, "solver");
	assert_int_equal(e->nargs, 10);
	assert_int_equal(tu_arg_int(e, "i"), 7);
	assert_true(tt_arg(e, "dt")->d == 0.25);
	assert_int_equal(tt_arg(e, "ok")->type, TT_BOOL);
	assert_true(tt_arg(e, "ok")->b);
	assert_string_equal(tt_arg(e, "mode")->s, "fast");
	assert_true(tt_arg(e, "u")->fits & TT_FITS_U64);
	assert_true(tt_arg(e, "u")->u == UINT64_MAX);
	assert_true(tt_arg(e, "neg")->i == INT64_MIN);
	assert_string_equal(tt_arg(e, "file")->s, "data/in.bin");
	assert_string_equal(tt_arg(e, "owned")->s, "data/in.bin");
	assert_string_equal(tt_arg(e, "cstr")->s, "data/in.bin");
	assert_int_equal(tu_arg_int(e, "m"), -3);
	tt_free(&t);
}

/* Scopes of every form inside one another: each one's slice holds the next. */
static void scopes_nest(void **state)
{
	char path[4096];
	tt_trace t;

	(void)state;
	start(path, sizeof(path), "nest");
	{
		RINGTRACE_SCOPE("nest", "outer", "depth", 0);
		{
			std::string name = "copied-";
			name += std::to_string(1);
			ringtrace::Scope copied("nest", name);
			name.assign("changed"); /* the scope keeps its own copy */
			{
				ringtrace::Scope args("nest", "args", ringtrace::arg("depth", 2));
				{
					RINGTRACE_SCOPE("nest", "leaf");
					ringtrace::instant("nest", "inside");
				}
			}
		}
	}
	load(path, &t);
	std::vector<slice> v = slices_of(t);
	const char *order[] = {"outer", "copied-1", "args", "leaf"};
	for (size_t k = 0; k + 1 < 4; k++) {
		const slice &a = find_slice(v, order[k]), &b = find_slice(v, order[k + 1]);
		assert_true(a.t0 <= b.t0);
		assert_true(b.t1 <= a.t1);
	}
	assert_int_equal(tu_arg_int(find_slice(v, "outer").ev, "depth"), 0);
	assert_int_equal(tu_arg_int(find_slice(v, "args").ev, "depth"), 2);
	const tt_event *in = find_event(t, "i", "inside");
	const slice &leaf = find_slice(v, "leaf");
	assert_true(leaf.t0 <= in->ts_ns && in->ts_ns <= leaf.t1);
	tt_free(&t);
}

/* Stopped: nothing is recorded; the macros evaluate no argument (a load and a branch),
 * the functions evaluate theirs once, as any function call does. */
static void stopped_recorder_records_nothing(void **state)
{
	(void)state;
	evaluations = 0;
	assert_false(ringtrace::enabled("any"));
	{
		RINGTRACE_SCOPE("off", "scope", "i", counted(1));
		ringtrace::Scope s("off", std::string("copied"));
		RINGTRACE_INSTANT("off", "i", "k", counted(2));
		ringtrace::instant("off", "i", ringtrace::arg("k", counted(3)));
	}
	assert_int_equal(evaluations, 1);
	rtr_stats st;
	rtr_stats_get(&st);
	assert_int_equal(st.running, 0);
}

static void the_other_calls_record(void **state)
{
	char path[4096];
	tt_trace t;
	std::string runtime = "runtime-name";

	(void)state;
	start(path, sizeof(path), "calls");
	assert_true(ringtrace::enabled("calls"));
	ringtrace::thread_name(std::string("cxx-main"));
	ringtrace::instant("calls", "plain");
	RINGTRACE_INSTANT("calls", "macro", "n", 5);
	ringtrace::instant("calls", std::string_view(runtime));
	ringtrace::instant("calls", "proc", ringtrace::where::process, ringtrace::arg("x", 1.5));
	ringtrace::counter("calls", "ci", 42);
	ringtrace::counter("calls", "cf", 0.5);
	ringtrace::counter("calls", "multi", ringtrace::arg("a", 1), ringtrace::arg("b", 2u));
	uint64_t now = ringtrace::now_ns();
	ringtrace::complete("calls", "done", now, 1000, ringtrace::arg("k", -1));
	ringtrace::complete("calls", runtime, now, 2000);
	ringtrace::begin("calls", "be", ringtrace::arg("k", 3));
	ringtrace::end("calls", "be");
	uint64_t id = ringtrace::flow_id();
	{
		RINGTRACE_SCOPE("calls", "from");
		ringtrace::flow_start("calls", "flow", id);
	}
	{
		RINGTRACE_SCOPE("calls", "to");
		ringtrace::flow_end("calls", "flow", id);
	}
	ringtrace::async_begin("calls", "req", id, ringtrace::arg("size", 10));
	ringtrace::async_instant("calls", "req", id);
	ringtrace::async_end("calls", "req", id);
	runtime.assign("gone");
	load(path, &t);
	assert_non_null(find_event(t, "i", "plain"));
	assert_int_equal(tu_arg_int(find_event(t, "i", "macro"), "n"), 5);
	assert_non_null(find_event(t, "i", "runtime-name"));
	assert_string_equal(find_event(t, "i", "proc")->scope, "p");
	assert_int_equal(tu_arg_int(find_event(t, "C", "ci"), "value"), 42);
	assert_true(tt_arg(find_event(t, "C", "cf"), "value")->d == 0.5);
	const tt_event *m = find_event(t, "C", "multi");
	assert_int_equal(tu_arg_int(m, "a"), 1);
	assert_int_equal(tu_arg_int(m, "b"), 2);
	const tt_event *x = find_event(t, "X", "done");
	assert_int_equal(x->dur_ns, 1000);
	assert_int_equal(tu_arg_int(x, "k"), -1);
	assert_int_equal(find_event(t, "X", "runtime-name")->dur_ns, 2000);
	std::vector<slice> v = slices_of(t);
	assert_int_equal(tu_arg_int(find_slice(v, "be").ev, "k"), 3);
	assert_non_null(find_event(t, "s", "flow"));
	assert_non_null(find_event(t, "f", "flow"));
	assert_int_equal(tu_arg_int(find_event(t, "b", "req"), "size"), 10);
	assert_non_null(find_event(t, "n", "req"));
	assert_non_null(find_event(t, "e", "req"));
	bool named = false;
	for (size_t i = 0; i < t.n; i++)
		if (std::strcmp(t.ev[i].ph, "M") == 0 && tt_arg(&t.ev[i], "name") != nullptr &&
		    tt_arg(&t.ev[i], "name")->s != nullptr &&
		    std::strcmp(tt_arg(&t.ev[i], "name")->s, "cxx-main") == 0)
			named = true;
	assert_true(named);
	tt_free(&t);
}

static void session_starts_and_stops(void **state)
{
	char path[4096];
	tt_trace t;

	(void)state;
	tu_own_file(path, sizeof(path), "cxx_api", "session", ".json");
	{
		ringtrace::Session s(ringtrace::Config()
					     .path(std::string(path))
					     .block_when_full()
					     .ring_bytes(1 << 16)
					     .process_name("cxx-session"));
		assert_int_equal(s.error(), 0);
		assert_true(static_cast<bool>(s));
		assert_string_equal(std::string(ringtrace::Session::path()).c_str(), path);
		RINGTRACE_SCOPE("session", "work");
		assert_int_equal(s.flush(), 0);
	}
	assert_int_equal(ringtrace::Session::stats().running, 0);
	std::memset(&t, 0, sizeof(t));
	if (tt_load(path, 0, &t) != 0)
		fail_msg("%s", t.error);
	std::vector<slice> v = slices_of(t);
	assert_string_equal(find_slice(v, "work").ev->cat, "session");
	tt_free(&t);
}

/* A flight-mode session: a snapshot while a scope is open shows it open. */
static void session_takes_snapshots(void **state)
{
	char path[4096], snap[4200];
	tt_trace t;

	(void)state;
	tu_own_file(path, sizeof(path), "cxx_api", "flight", ".json");
	snprintf(snap, sizeof(snap), "%s.snap.json", path);
	{
		ringtrace::Session s(ringtrace::Config().path(std::string(path)).flight(1, false));
		assert_int_equal(s.error(), 0);
		/* a Scope records its begin (RINGTRACE_SCOPE records once, at its end) */
		ringtrace::Scope waiting("flight", "waiting");
		ringtrace::instant("flight", "inside");
		assert_int_equal(s.snapshot(snap), 0);
	}
	assert_int_equal(access(path, F_OK), -1); /* flight_at_exit off: no last snapshot */
	std::memset(&t, 0, sizeof(t));
	if (tt_load(snap, 0, &t) != 0)
		fail_msg("%s", t.error);
	/* the Scope still open at the snapshot: one X from its begin to the thread's
	 * latest time ("inside"), marked open */
	const tt_event *open = nullptr, *inside = nullptr;
	for (size_t i = 0; i < t.n; i++) {
		assert_true(std::strcmp(t.ev[i].ph, "B") != 0 && std::strcmp(t.ev[i].ph, "E") != 0);
		if (std::strcmp(t.ev[i].ph, "i") == 0 && t.ev[i].name != nullptr &&
		    std::strcmp(t.ev[i].name, "inside") == 0)
			inside = &t.ev[i];
		if (std::strcmp(t.ev[i].ph, "X") == 0)
			open = &t.ev[i];
	}
	assert_non_null(inside);
	assert_non_null(open);
	assert_true(open > inside);
	assert_string_equal(open->name, "waiting");
	assert_non_null(tt_arg(open, "open"));
	assert_int_equal(tt_arg(open, "open")->b, 1);
	assert_true(open->ts_ns <= inside->ts_ns);
	/* ended at its thread's latest time, and 1 ns more for the level it holds open
	 * (a child that ended then stays inside it for every viewer) */
	assert_int_equal(open->ts_ns + open->dur_ns, inside->ts_ns + 1);
	tt_free(&t);
	unlink(snap);
}

/* Arguments added to a scope before it ends, copied-name scopes ended by a pop, and
 * end() with a copied name. */
static void scopes_take_arguments_and_copied_names(void **state)
{
	char path[4096];
	tt_trace t;
	std::string name = "job-1";

	(void)state;
	start(path, sizeof(path), "added");
	{
		ringtrace::Scope s("solver", "solve");
		s.add("iters", 12);
		s.add("residual", 0.5);
		std::string status = "converged";
		s.add("status", status);
		status.assign("overwritten");
	}
	{
		ringtrace::Scope copied("io", name);
		name.assign("freed-by-now");
	}
	ringtrace::begin("io", std::string("manual"));
	ringtrace::end("io", std::string("manual"));
	assert_true(ringtrace::enabled("io"));
	load(path, &t);
	assert_false(ringtrace::enabled("io"));
	std::vector<slice> v = slices_of(t);
	const tt_event *e = find_slice(v, "solve").ev;
	/* an X with them, or a B whose E has them */
	const tt_event *with = std::strcmp(e->ph, "X") == 0 ? e : e + 1;
	assert_string_equal(with->ph, std::strcmp(e->ph, "X") == 0 ? "X" : "E");
	assert_int_equal(with->nargs, 3);
	assert_int_equal(tu_arg_int(with, "iters"), 12);
	assert_true(tt_arg(with, "residual")->d == 0.5);
	assert_string_equal(tt_arg(with, "status")->s, "converged");
	assert_string_equal(find_slice(v, "job-1").ev->cat, "io");
	assert_string_equal(find_slice(v, "manual").ev->cat, "io");
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(scope_records_typed_arguments_evaluated_once,
					  tu_teardown),
		cmocka_unit_test_teardown(scopes_nest, tu_teardown),
		cmocka_unit_test(stopped_recorder_records_nothing),
		cmocka_unit_test_teardown(the_other_calls_record, tu_teardown),
		cmocka_unit_test_teardown(session_starts_and_stops, tu_teardown),
		cmocka_unit_test_teardown(session_takes_snapshots, tu_teardown),
		cmocka_unit_test_teardown(scopes_take_arguments_and_copied_names, tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("cxx_api", tests, NULL, NULL);
}
