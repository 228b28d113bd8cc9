/* SPDX-License-Identifier: MIT */
/*
 * The ABI that can grow: sized structs read (or written) only as far as the caller's
 * size covers, the runtime version, the versioned symbols of the inline fast path,
 * and the option table against the documentation (docs/configuration.md).
 */
#include <ringtrace.h>

#include "session/session.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define XSTR(x) STR(x)
#define STR(x)	#x

/* struct rtr_config as a caller built against an older header would have it: every
 * field up to categories, without cache_mb and stop_timeout_ms. */
struct old_config {
	uint32_t size;
	uint32_t version;
	const char *path;
	size_t ring_bytes;
	int on_full;
	unsigned flush_ms;
	int io;
	const char *process_name;
	int clock;
	int compress;
	const char *categories;
};

static void unset_env(void)
{
	unsetenv("RINGTRACE_CACHE_MB");
	unsetenv("RINGTRACE_STOP_TIMEOUT_MS");
	unsetenv("RINGTRACE_RING_KB");
	unsetenv("RINGTRACE_FLUSH_MS");
}

static int setup(void **state)
{
	struct rtr__session *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -1;
	unset_env();
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	unset_env();
	free(*state);
	return 0;
}

/* The prefix really is a prefix of today's struct. */
static void old_config_is_a_prefix(void **state)
{
	(void)state;
	assert_int_equal(offsetof(struct old_config, categories),
			 offsetof(struct rtr_config, categories));
	assert_int_equal(sizeof(struct old_config), offsetof(struct rtr_config, cache_mb));
}

static void older_config_gets_defaults_past_its_size(void **state)
{
	struct rtr__session *s = *state;
	/* exactly its own size on the heap: ASan catches a read past it */
	struct old_config *old = malloc(sizeof(*old));

	assert_non_null(old);
	memset(old, 0, sizeof(*old));
	old->size = sizeof(*old);
	old->version = 1;
	old->path = "abi-%p.json";
	old->ring_bytes = 1 << 16;
	old->on_full = RTR_ON_FULL_BLOCK;
	old->flush_ms = 7;
	old->io = RTR_IO_SYNC;
	old->clock = RTR_CLOCK_MONOTONIC;
	old->compress = RTR_COMPRESS_NONE;
	assert_int_equal(rtr__session_config(s, (const struct rtr_config *)old), 0);
	free(old);
	assert_int_equal(s->cfg.ring_bytes, 1 << 16);
	assert_int_equal(s->cfg.on_full, RTR_ON_FULL_BLOCK);
	assert_int_equal(s->cfg.flush_ms, 7);
	assert_int_equal(s->cfg.io, RTR_IO_SYNC);
	assert_int_equal(s->cfg.clock, RTR_CLOCK_MONOTONIC);
	assert_int_equal(s->cfg.cache_mb, 64); /* the defaults */
	assert_int_equal(s->cfg.stop_timeout_ms, 10000);
	assert_int_equal(s->cfg.size, sizeof(struct rtr_config));
}

static void older_config_gets_environment_past_its_size(void **state)
{
	struct rtr__session *s = *state;
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = "abi-%p.json";
	cfg.size = offsetof(struct rtr_config, cache_mb);
	cfg.cache_mb = 999999999; /* past the size: never read */
	cfg.stop_timeout_ms = 999999999;
	setenv("RINGTRACE_CACHE_MB", "16", 1);
	setenv("RINGTRACE_FLUSH_MS", "5", 1); /* within the size: the caller's value wins */
	cfg.flush_ms = 9;
	assert_int_equal(rtr__session_config(s, &cfg), 0);
	assert_int_equal(s->cfg.cache_mb, 16);
	assert_int_equal(s->cfg.stop_timeout_ms, 10000);
	assert_int_equal(s->cfg.flush_ms, 9);
}

static void config_size_zero_is_the_first_layout(void **state)
{
	struct rtr__session *s = *state;
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	assert_int_equal(cfg.size, sizeof(cfg));
	assert_int_equal(cfg.version, RTR_CONFIG_VERSION);
	cfg.path = "abi-%p.json";
	cfg.size = 0;
	cfg.version = 0;
	cfg.cache_mb = 8;
	cfg.stop_timeout_ms = 5;
	assert_int_equal(rtr__session_config(s, &cfg), 0);
	assert_int_equal(s->cfg.cache_mb, 8);
	assert_int_equal(s->cfg.stop_timeout_ms, 5);
}

static void config_out_of_range_in_code_is_einval(void **state)
{
	struct rtr__session *s = *state;
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = "abi-%p.json";
	cfg.ring_bytes = 4095;
	assert_int_equal(rtr__session_config(s, &cfg), -EINVAL);
	rtr_config_init(&cfg);
	cfg.path = "abi-%p.json";
	cfg.compress = 4;
	assert_int_equal(rtr__session_config(s, &cfg), -EINVAL);
	rtr_config_init(&cfg);
	cfg.path = "abi-%p.json";
	cfg.stop_timeout_ms = 3600001;
	assert_int_equal(rtr__session_config(s, &cfg), -EINVAL);
	cfg.stop_timeout_ms = 3600000;
	assert_int_equal(rtr__session_config(s, &cfg), 0);
}

#define GUARD 0xa5

static void stats_get_writes_exactly_size_bytes(void **state)
{
	unsigned char buf[sizeof(struct rtr_stats) + 64];
	const size_t sizes[] = {0,
				1,
				offsetof(struct rtr_stats, threads),
				sizeof(uint64_t) * 3 + 5,
				offsetof(struct rtr_stats, size) + 4,
				sizeof(struct rtr_stats)};

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		memset(buf, GUARD, sizeof(buf));
		rtr_stats_get_sized((struct rtr_stats *)(void *)buf, sizes[k]);
		for (size_t i = sizes[k]; i < sizeof(buf); i++)
			assert_int_equal(buf[i], GUARD);
		/* stopped, never started: every counter written is 0 */
		for (size_t i = 0; i < sizes[k] && i < offsetof(struct rtr_stats, io_method); i++)
			assert_int_equal(buf[i], 0);
	}
}

static void stats_get_sets_size_and_zeroes_a_newer_tail(void **state)
{
	unsigned char buf[sizeof(struct rtr_stats) + 64];
	struct rtr_stats st;

	(void)state;
	memset(&st, GUARD, sizeof(st));
	rtr_stats_get(&st); /* the macro: no size set by the caller */
	assert_int_equal(st.size, sizeof(st));
	assert_int_equal(st.version, RTR_STATS_VERSION);
	assert_int_equal(st.running, 0);

	memset(&st, GUARD, sizeof(st));
	(rtr_stats_get)(&st); /* the exported function: the first layout */
	assert_int_equal(st.size, offsetof(struct rtr_stats, version) + 4);
	assert_int_equal(st.version, RTR_STATS_VERSION);

	/* a newer header's bigger struct: ours written, the rest zeroed, nothing past */
	memset(buf, GUARD, sizeof(buf));
	rtr_stats_get_sized((struct rtr_stats *)(void *)buf, sizeof(struct rtr_stats) + 32);
	memcpy(&st, buf, sizeof(st));
	assert_int_equal(st.size, sizeof(st));
	for (size_t i = sizeof(st); i < sizeof(st) + 32; i++)
		assert_int_equal(buf[i], 0);
	for (size_t i = sizeof(st) + 32; i < sizeof(buf); i++)
		assert_int_equal(buf[i], GUARD);
}

static void track_desc_of_any_size_makes_the_track(void **state)
{
	(void)state;
	struct rtr_track_desc zero = {.process = "ABI", .lane = "lane"}; /* size 0 */
	struct rtr_track_desc sized = RTR_TRACK_DESC_INIT(.process = "ABI", .lane = "lane");
	struct rtr_track_desc other =
		RTR_TRACK_DESC_INIT(.process = "ABI", .lane = "other", .lane_sort_index = 3);
	struct rtr_track_desc none = RTR_TRACK_DESC_INIT();

	assert_int_equal(sized.size, sizeof(struct rtr_track_desc));
	assert_int_equal(sized.version, RTR_TRACK_DESC_VERSION);
	assert_int_equal(zero.size, 0);
	struct rtr_track *t = rtr_track_create(&zero);
	assert_non_null(t);
	assert_ptr_equal(rtr_track_create(&sized), t);
	struct rtr_track *o = rtr_track_create(&other);
	assert_non_null(o);
	assert_ptr_not_equal(o, t);
	assert_null(rtr_track_create(&none)); /* no names */

	/* a newer caller's bigger desc: the fields we know are read, the rest ignored */
	struct {
		struct rtr_track_desc d;
		uint64_t newer[4];
	} big;
	memset(&big, 0xff, sizeof(big));
	big.d = sized;
	big.d.size = sizeof(big);
	big.d.version = RTR_TRACK_DESC_VERSION + 1;
	assert_ptr_equal(rtr_track_create(&big.d), t);

	/* an unset (smaller than any layout) size reads the first layout */
	sized.size = 3;
	assert_ptr_equal(rtr_track_create(&sized), t);
}

static void version_matches_the_header(void **state)
{
	char want[32];

	(void)state;
	assert_string_equal(rtr_version(), RTR_VERSION_STRING);
	assert_int_equal(rtr_version_number(), RTR_VERSION_NUMBER);
	snprintf(want, sizeof(want), "%d.%d.%d", RTR_VERSION_MAJOR, RTR_VERSION_MINOR,
		 RTR_VERSION_PATCH);
	assert_string_equal(rtr_version(), want);
}

extern __thread struct rtr__ring *rtr__tls_ring_v1 __attribute__((tls_model("initial-exec")));
extern int rtr__active_v1;

/* The inline code links against names that carry RTR__ABI. */
static void fast_path_symbols_carry_the_abi_number(void **state)
{
	(void)state;
	assert_string_equal(XSTR(rtr__tls_ring), "rtr__tls_ring_v" XSTR(RTR__ABI));
	assert_string_equal(XSTR(rtr__active), "rtr__active_v" XSTR(RTR__ABI));
	assert_int_equal(RTR__ABI, 1);
	/* the names resolve at link time, by their versioned spelling */
	assert_ptr_equal(&rtr__tls_ring_v1, &rtr__tls_ring);
	assert_ptr_equal(&rtr__active_v1, &rtr__active);
}

/* A documentation page, whole, as a string (static: one page at a time). */
static const char *read_page(const char *path)
{
	static char text[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		fail_msg("cannot open %s", path);
	n = fread(text, 1, sizeof(text) - 1, f);
	if (!feof(f))
		fail_msg("%s is larger than %zu bytes", path, sizeof(text) - 1);
	fclose(f);
	text[n] = '\0';
	return text;
}

static int is_option(const char *name)
{
	for (size_t j = 0; rtr__config_option_env(j) != NULL; j++)
		if (strcmp(rtr__config_option_env(j), name) == 0)
			return 1;
	return 0;
}

/* Every RINGTRACE_* word of a page is a variable of the option table, or one of the
 * public macros that share the prefix. */
static void page_names_only_options(const char *path)
{
	static const char *const macros[] = {"RINGTRACE_",
					     "RINGTRACE_DISABLE",
					     "RINGTRACE_SCOPE",
					     "RINGTRACE_INSTANT",
					     "RINGTRACE_BENCHMARK_MAIN",
					     "RINGTRACE_BENCHMARK_PROFILER_MANAGER"};
	const char *text = read_page(path);

	for (const char *p = text; (p = strstr(p, "RINGTRACE_")) != NULL; p++) {
		char name[64];
		size_t k = 0;
		int macro = 0;

		while (k < sizeof(name) - 1 && ((p[k] >= 'A' && p[k] <= 'Z') || p[k] == '_' ||
						(p[k] >= '0' && p[k] <= '9')))
			name[k] = p[k], k++;
		name[k] = '\0';
		for (size_t m = 0; m < sizeof(macros) / sizeof(macros[0]); m++)
			macro |= strcmp(name, macros[m]) == 0;
		if (!macro && !is_option(name))
			fail_msg("%s names %s, which is not an option", path, name);
	}
}

/* Every page of a directory: page_names_only_options() on each *.md. */
static void pages_name_only_options(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	int n = 0;

	if (d == NULL)
		fail_msg("cannot open %s", dir);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len < 4 || strcmp(e->d_name + len - 3, ".md") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		page_names_only_options(path);
		n++;
	}
	closedir(d);
	assert_true(n > 0);
}

/* Every RINGTRACE_* variable of the option table is in docs/configuration.md, spelled
 * out, and no page of the documentation (README.md, docs/, docs/commands/) names one
 * that is not. */
static void configuration_page_lists_every_option(void **state)
{
	char path[4096];
	size_t i = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/configuration.md", RTR_SOURCE_DIR);
	const char *text = read_page(path);
	for (const char *env; (env = rtr__config_option_env(i)) != NULL; i++) {
		const char *p = text;
		size_t n = strlen(env);

		/* the whole name, not the prefix of a longer one */
		while ((p = strstr(p, env)) != NULL &&
		       (p[n] == '_' || (p[n] >= 'A' && p[n] <= 'Z')))
			p += n;
		if (p == NULL)
			fail_msg("%s is not in docs/configuration.md", env);
	}
	assert_true(i >= 11);
	snprintf(path, sizeof(path), "%s/README.md", RTR_SOURCE_DIR);
	page_names_only_options(path);
	snprintf(path, sizeof(path), "%s/docs", RTR_SOURCE_DIR);
	pages_name_only_options(path);
	snprintf(path, sizeof(path), "%s/docs/commands", RTR_SOURCE_DIR);
	pages_name_only_options(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(old_config_is_a_prefix),
		cmocka_unit_test_setup_teardown(older_config_gets_defaults_past_its_size, setup,
						teardown),
		cmocka_unit_test_setup_teardown(older_config_gets_environment_past_its_size, setup,
						teardown),
		cmocka_unit_test_setup_teardown(config_size_zero_is_the_first_layout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(config_out_of_range_in_code_is_einval, setup,
						teardown),
		cmocka_unit_test(stats_get_writes_exactly_size_bytes),
		cmocka_unit_test(stats_get_sets_size_and_zeroes_a_newer_tail),
		cmocka_unit_test(track_desc_of_any_size_makes_the_track),
		cmocka_unit_test(version_matches_the_header),
		cmocka_unit_test(fast_path_symbols_carry_the_abi_number),
		cmocka_unit_test(configuration_page_lists_every_option),
	};
	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
