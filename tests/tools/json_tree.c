/* SPDX-License-Identifier: MIT */
/*
 * JSON read back with yajl's tree API for the tool tests (see json_tree.h).
 */
#include "json_tree.h"
#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

yajl_val jt_parse(const char *text, const char *what)
{
	char err[256];
	yajl_val v = yajl_tree_parse(text, err, sizeof(err));

	/* Its start: enough to see what the tool wrote instead. */
	if (v == NULL)
		fail_msg("%s is not strict JSON: %s\n%.2000s", what, err, text);
	return v;
}

yajl_val jt_parse_file(const char *path)
{
	char *text = tu_read_file(path, NULL);
	yajl_val v = jt_parse(text, path);

	free(text);
	return v;
}

yajl_val jt_at(yajl_val v, const char *key)
{
	const char *path[] = {key, NULL};
	yajl_val r = yajl_tree_get(v, path, yajl_t_any);

	if (r == NULL)
		fail_msg("no \"%s\" in the JSON object", key);
	return r;
}

long long jt_int(yajl_val v, const char *key)
{
	yajl_val n = jt_at(v, key);

	if (!YAJL_IS_INTEGER(n))
		fail_msg("\"%s\" is not an integer", key);
	return YAJL_GET_INTEGER(n);
}

double jt_double(yajl_val v, const char *key)
{
	yajl_val n = jt_at(v, key);

	if (!YAJL_IS_NUMBER(n))
		fail_msg("\"%s\" is not a number", key);
	return YAJL_GET_DOUBLE(n);
}

const char *jt_str(yajl_val v, const char *key)
{
	yajl_val s = jt_at(v, key);

	if (!YAJL_IS_STRING(s))
		fail_msg("\"%s\" is not a string", key);
	return YAJL_GET_STRING(s);
}

const char *jt_str_or_null(yajl_val v, const char *key)
{
	return YAJL_IS_NULL(jt_at(v, key)) ? NULL : jt_str(v, key);
}

yajl_val jt_array(yajl_val v, const char *key)
{
	yajl_val a = jt_at(v, key);

	if (!YAJL_IS_ARRAY(a))
		fail_msg("\"%s\" is not an array", key);
	return a;
}

yajl_val jt_row_by(yajl_val rows, const char *field, const char *value, size_t *place)
{
	for (size_t i = 0; i < rows->u.array.len; i++) {
		const char *k = jt_str_or_null(rows->u.array.values[i], field);

		if (k != NULL && strcmp(k, value) == 0) {
			if (place != NULL)
				*place = i;
			return rows->u.array.values[i];
		}
	}
	fail_msg("no row with %s \"%s\"", field, value);
	return NULL;
}

yajl_val jt_row(yajl_val rows, const char *key, size_t *place)
{
	return jt_row_by(rows, "key", key, place);
}

void jt_expect_same(yajl_val a, yajl_val b)
{
	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case yajl_t_string:
		assert_string_equal(a->u.string, b->u.string);
		break;
	case yajl_t_number:
		assert_string_equal(a->u.number.r, b->u.number.r);
		break;
	case yajl_t_object:
		assert_int_equal(a->u.object.len, b->u.object.len);
		for (size_t i = 0; i < a->u.object.len; i++) {
			assert_string_equal(a->u.object.keys[i], b->u.object.keys[i]);
			jt_expect_same(a->u.object.values[i], b->u.object.values[i]);
		}
		break;
	case yajl_t_array:
		assert_int_equal(a->u.array.len, b->u.array.len);
		for (size_t i = 0; i < a->u.array.len; i++)
			jt_expect_same(a->u.array.values[i], b->u.array.values[i]);
		break;
	default:
		break;
	}
}
