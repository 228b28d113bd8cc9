// SPDX-License-Identifier: MIT
//
// The peers workload on spdlog (Debian's libspdlog-dev, with the external fmt): an
// async logger (spdlog::async_factory, one worker thread, queue of 8192 messages,
// overflow policy block: nothing is lost) with a basic_file_sink, writing one line
// per span when the span ends: "span dur_ns=D" or, with --arg 1, "span dur_ns=D i=I".
// The pattern adds a nanosecond wall-clock time stamp and the thread id, which a
// trace needs: "%Y-%m-%d %H:%M:%S.%F %t %v". The output is complete when
// spdlog::shutdown() returns: the worker has drained the queue and the file is closed.
#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "harness.h"

static std::shared_ptr<spdlog::logger> logger;

static int tool_open(const struct peer_opts *o)
{
	try {
		spdlog::init_thread_pool(8192, 1);
		logger = spdlog::basic_logger_mt<spdlog::async_factory>("peer", o->out, true);
		logger->set_pattern("%Y-%m-%d %H:%M:%S.%F %t %v");
	} catch (const spdlog::spdlog_ex &e) {
		fprintf(stderr, "peer_spdlog: %s\n", e.what());
		return -1;
	}
	return 0;
}

static void *tool_thread_open(int tid)
{
	(void)tid;
	return NULL;
}

static void tool_record(void *t, long n, int with_arg)
{
	using clk = std::chrono::steady_clock;
	spdlog::logger *l = logger.get();

	(void)t;
	if (with_arg) {
		for (long i = 0; i < n; i++) {
			auto t0 = clk::now();
			l->info("span dur_ns={} i={}", (clk::now() - t0).count(), i);
		}
	} else {
		for (long i = 0; i < n; i++) {
			auto t0 = clk::now();
			l->info("span dur_ns={}", (clk::now() - t0).count());
		}
	}
}

static void tool_thread_close(void *t)
{
	(void)t;
}

static int tool_close(void)
{
	logger.reset();
	spdlog::shutdown(); // joins the worker after it has written every queued line
	return 0;
}

int main(int argc, char **argv)
{
	return peer_main("spdlog", argc, argv);
}
