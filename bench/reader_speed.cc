// SPDX-License-Identifier: MIT
//
// The tools' streaming reader (tools/source/trace.h) against simdjson's on-demand parser,
// the yardstick, on the same file in the same run.
//
//   bench_reader_speed [--runs N] [--tool PATH --command 'ARGS'...] FILE...
//
// Both sides do the same work per event: find it, and read ph, name, cat, ts, dur,
// pid, tid and the top-level keys of args (each value touched, so that nothing is
// skipped unread). The reader streams the file in blocks, as the tools do; simdjson
// is given the whole file in memory (read into a buffer kept from run to run, timed
// too), which is its best case. Built with -march=native, so that simdjson's
// on-demand code is its SIMD kernel and not its portable fallback. Runs alternate between the two;
// the report is the median MB/s of each and their ratio, reader over simdjson. MB is 10^6 bytes of
// the file.
//
// With --command (any number of them), each round also runs `PATH ARGS FILE` once per
// command (the ringtrace command, its output to /dev/null, ARGS split at blanks), right
// after simdjson's run, so that the commands and the yardstick take turns on the same
// machine in the same minutes; one line per command: its median wall time, MB/s, the
// ratio of that to simdjson's median MB/s, and its median peak RSS. `{}` in ARGS is
// replaced by the file, which then is not appended (`-o /tmp/x {}`); ARGS that begin
// with '/' name their own program (another build, to compare in the same rounds).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "trace.h"
}

namespace
{

struct tally {
	uint64_t events = 0;
	uint64_t bytes = 0; // of the values touched, so the work cannot be optimised out
};

double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

bool read_with_reader(const char *path, tally &t)
{
	trace *r = nullptr;
	const trace_event *ev = nullptr;
	int rc;

	if (trace_open(path, nullptr, &r) != 0)
		return false;
	while ((rc = trace_next(r, &ev)) == 1) {
		t.events++;
		t.bytes += ev->ph.len + ev->name.len + ev->cat.len + (uint64_t)ev->ts_ns +
			   (uint64_t)ev->dur_ns + (uint64_t)ev->pid_num + (uint64_t)ev->tid_num;
		for (size_t i = 0; i < ev->nargs; i++)
			t.bytes += ev->arg[i].key_len + ev->arg[i].value.len;
	}
	trace_close(r);
	return rc == 0;
}

template <typename V> uint64_t touch(V &&v)
{
	simdjson::ondemand::json_type type;

	if (v.type().get(type))
		return 0;
	switch (type) {
	case simdjson::ondemand::json_type::string: {
		std::string_view s;
		return v.get_string().get(s) ? 0 : s.size();
	}
	case simdjson::ondemand::json_type::number: {
		double d;
		return v.get_double().get(d) ? 0 : (uint64_t)d;
	}
	case simdjson::ondemand::json_type::object: {
		simdjson::ondemand::object o;
		std::string_view raw;
		return v.get_object().get(o) || o.raw_json().get(raw) ? 0 : raw.size();
	}
	case simdjson::ondemand::json_type::array: {
		simdjson::ondemand::array a;
		std::string_view raw;
		return v.get_array().get(a) || a.raw_json().get(raw) ? 0 : raw.size();
	}
	default: {
		std::string_view raw;
		return v.raw_json_token().get(raw) ? 0 : raw.size();
	}
	}
}

bool walk_events(simdjson::ondemand::array events, tally &t)
{
	for (auto element : events) {
		simdjson::ondemand::object ev;

		if (element.get_object().get(ev))
			return false;
		t.events++;
		for (auto field : ev) {
			std::string_view key;

			if (field.unescaped_key().get(key))
				return false;
			if (key == "args") {
				simdjson::ondemand::object args;

				if (field.value().get_object().get(args))
					return false;
				for (auto arg : args) {
					std::string_view k;

					if (arg.unescaped_key().get(k))
						return false;
					t.bytes += k.size() + touch(arg.value());
				}
			} else {
				t.bytes += touch(field.value());
			}
		}
	}
	return true;
}

// The file is read into one buffer and parsed by one parser, both kept from run to
// run: after the first run simdjson pays no allocation and no page faults, which on
// this kind of machine cost it more than the parse itself.
struct simdjson_side {
	std::vector<char> text;
	simdjson::ondemand::parser parser;
};

bool read_with_simdjson(simdjson_side &side, const char *path, tally &t)
{
	simdjson::ondemand::document doc;
	simdjson::ondemand::json_type type;
	FILE *fp = std::fopen(path, "rb");
	size_t len;

	if (fp == nullptr || std::fseek(fp, 0, SEEK_END) != 0)
		return false;
	len = (size_t)std::ftell(fp);
	std::rewind(fp);
	if (side.text.size() < len + simdjson::SIMDJSON_PADDING)
		side.text.resize(len + simdjson::SIMDJSON_PADDING);
	if (std::fread(side.text.data(), 1, len, fp) != len) {
		std::fclose(fp);
		return false;
	}
	std::fclose(fp);
	if (side.parser.iterate(side.text.data(), len, side.text.size()).get(doc) ||
	    doc.type().get(type))
		return false;
	if (type == simdjson::ondemand::json_type::array) {
		simdjson::ondemand::array events;

		return !doc.get_array().get(events) && walk_events(events, t);
	}
	simdjson::ondemand::array events;

	return !doc["traceEvents"].get_array().get(events) && walk_events(events, t);
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

struct command {
	std::string args;
	std::vector<double> wall_s, rss_mib;
};

// Run `tool ARGS FILE` (ARGS split at blanks; `{}` is the file), output to /dev/null:
// its wall time and peak RSS, or false when it could not run or exited above 1 (1 is
// "findings", which check may have). The peak RSS comes through /usr/bin/time when
// there is one (0 otherwise): a child of this process starts with its high-water mark,
// the gigabyte of simdjson's buffer, which a child of /usr/bin/time does not.
bool run_command(const char *tool, command &c, const char *path)
{
	static const char time_tool[] = "/usr/bin/time", rss_file[] = "/tmp/bench_reader_rss";
	bool timed = access(time_tool, X_OK) == 0;
	std::vector<std::string> words;

	if (timed)
		words = {time_tool, "-f", "%M", "-o", rss_file};
	if (c.args[0] != '/') /* else ARGS names its own program: a build to compare */
		words.push_back(tool);
	std::vector<char *> argv;
	bool file_given = false;
	size_t i = 0;

	while (i < c.args.size()) {
		size_t j = c.args.find(' ', i);

		if (j == std::string::npos)
			j = c.args.size();
		if (j > i) {
			std::string w = c.args.substr(i, j - i);

			if (w == "{}") {
				w = path;
				file_given = true;
			}
			words.push_back(w);
		}
		i = j + 1;
	}
	if (!file_given)
		words.push_back(path);
	for (auto &w : words)
		argv.push_back(w.data());
	argv.push_back(nullptr);

	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status;
	struct rusage ru;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	double t0 = now_s();
	int err = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0 || wait4(pid, &status, 0, &ru) != pid)
		return false;
	double t1 = now_s();
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return false;
	double kib = 0;
	if (timed) {
		FILE *fp = std::fopen(rss_file, "r");

		if (fp != nullptr) {
			if (std::fscanf(fp, "%lf", &kib) != 1)
				kib = 0;
			std::fclose(fp);
		}
	}
	c.wall_s.push_back(t1 - t0);
	c.rss_mib.push_back(kib / 1024.0);
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	int runs = 5, first = 1;
	const char *tool = nullptr;
	std::vector<command> commands;

	while (first + 1 < argc && argv[first][0] == '-' && argv[first][1] == '-') {
		if (std::strcmp(argv[first], "--runs") == 0)
			runs = std::atoi(argv[first + 1]);
		else if (std::strcmp(argv[first], "--tool") == 0)
			tool = argv[first + 1];
		else if (std::strcmp(argv[first], "--command") == 0)
			commands.push_back(command{argv[first + 1], {}, {}});
		else
			break;
		first += 2;
	}
	if (first >= argc || runs < 1 || (!commands.empty() && tool == nullptr)) {
		std::fprintf(stderr, "usage: bench_reader_speed [--runs N] [--tool PATH --command "
				     "'ARGS'...] FILE...\n");
		return 2;
	}
	for (int f = first; f < argc; f++) {
		const char *path = argv[f];
		std::vector<double> ours, theirs;
		simdjson_side side;
		tally a, b;
		for (auto &c : commands)
			c.wall_s.clear(), c.rss_mib.clear();
		FILE *fp = std::fopen(path, "rb");
		double mb;

		if (fp == nullptr || std::fseek(fp, 0, SEEK_END) != 0) {
			std::fprintf(stderr, "%s: cannot open\n", path);
			return 1;
		}
		mb = (double)std::ftell(fp) / 1e6;
		std::fclose(fp);
		for (int i = 0; i < runs; i++) {
			double t0 = now_s();

			a = tally();
			if (!read_with_reader(path, a)) {
				std::fprintf(stderr, "%s: the reader failed\n", path);
				return 1;
			}
			double t1 = now_s();

			b = tally();
			if (!read_with_simdjson(side, path, b)) {
				std::fprintf(stderr, "%s: simdjson failed\n", path);
				return 1;
			}
			double t2 = now_s();

			ours.push_back(mb / (t1 - t0));
			theirs.push_back(mb / (t2 - t1));
			for (auto &c : commands) {
				if (!run_command(tool, c, path)) {
					std::fprintf(stderr, "%s: `%s %s` failed\n", path, tool,
						     c.args.c_str());
					return 1;
				}
			}
		}
		if (a.events != b.events) {
			std::fprintf(stderr, "%s: %llu events read, simdjson %llu\n", path,
				     (unsigned long long)a.events, (unsigned long long)b.events);
			return 1;
		}
		double m_ours = median(ours), m_theirs = median(theirs);

		std::printf("%s: %.1f MB, %llu events, %d runs: reader %.0f MB/s, simdjson %.0f "
			    "MB/s, ratio %.2f\n",
			    path, mb, (unsigned long long)a.events, runs, m_ours, m_theirs,
			    m_ours / m_theirs);
		const command *stats = nullptr;
		for (auto &c : commands) {
			double t = median(c.wall_s);

			if (c.args == "stats")
				stats = &c;
			std::printf("  %-40s %7.3f s %6.0f MB/s  %.2fx simdjson  %5.1f MiB\n",
				    c.args.c_str(), t, mb / t, mb / t / m_theirs,
				    median(c.rss_mib));
		}
		// Each command's time against a stats pass of the same rounds (the median
		// of the rounds' own ratios): what window is measured by.
		for (auto &c : commands) {
			std::vector<double> ratio;

			if (stats == nullptr || &c == stats)
				continue;
			for (size_t i = 0; i < c.wall_s.size(); i++)
				ratio.push_back(c.wall_s[i] / stats->wall_s[i]);
			std::printf("  %-40s %.3fx a stats pass\n", c.args.c_str(), median(ratio));
		}
	}
	return 0;
}
