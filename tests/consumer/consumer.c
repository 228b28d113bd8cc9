/* SPDX-License-Identifier: MIT */
/* A C program built against an installed ringtrace: records to argv[1], then checks
 * that the file is closed and holds its events. Exit 0 when it does. */
#include <ringtrace.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct rtr_config cfg;
	static char text[1 << 16];

	if (argc != 2)
		return 2;
	rtr_config_init(&cfg);
	cfg.path = argv[1];
	if (rtr_start(&cfg) != 0)
		return 1;
	for (int i = 0; i < 3; i++) {
		RTR_SCOPE("consumer", "c-scope");
		rtr_instant_v("consumer", "c-instant", RTR_ARG_I64("i", i));
	}
	rtr_begin("consumer", "c-slice");
	rtr_end("consumer", "c-slice");
	if (rtr_stop() != 0)
		return 1;

	FILE *f = fopen(argv[1], "r");
	if (f == NULL)
		return 1;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (strstr(text, "\"c-scope\"") == NULL || strstr(text, "\"c-instant\"") == NULL ||
	    strstr(text, "\"c-slice\"") == NULL || n < 2 || strcmp(text + n - 2, "]\n") != 0) {
		fprintf(stderr, "consumer_c: %s lacks its events\n", argv[1]);
		return 1;
	}
	return 0;
}
