/* SPDX-License-Identifier: MIT */
/*
 * JSON the tool writes, read back with yajl's tree API (a parser that is not the
 * tool's own) for the tool tests: a document parsed, a member of an object as the
 * type the test wants, a row of a table found by its key, two documents compared.
 *
 * Functions fail the running cmocka test when the JSON is not what they read: a
 * member missing or of another type is a failed test, never a NULL or a 0 to
 * compare. Not thread-safe: for a test's main thread.
 */
#ifndef RTR_TESTS_JSON_TREE_H
#define RTR_TESTS_JSON_TREE_H

#include <stddef.h>
#include <yajl/yajl_tree.h>

/* text parsed as strict JSON; what names it in the failure ("stats --json").
 * yajl_tree_free() it. */
yajl_val jt_parse(const char *text, const char *what);

/* The file at path parsed as strict JSON. yajl_tree_free() it. */
yajl_val jt_parse_file(const char *path);

/* The member key of the object v. */
yajl_val jt_at(yajl_val v, const char *key);

/* The member key of v as an integer, a number, a string, an array. */
long long jt_int(yajl_val v, const char *key);
double jt_double(yajl_val v, const char *key);
const char *jt_str(yajl_val v, const char *key);
yajl_val jt_array(yajl_val v, const char *key);

/* The same as a string, or NULL when it is null (a row without a name). */
const char *jt_str_or_null(yajl_val v, const char *key);

/* The element of the array rows whose "key" is the string key; *place (may be NULL)
 * its index. */
yajl_val jt_row(yajl_val rows, const char *key, size_t *place);
/* The same by another string field: the element whose field is value. */
yajl_val jt_row_by(yajl_val rows, const char *field, const char *value, size_t *place);

/* a and b are the same: keys in the same order, numbers as the same text. */
void jt_expect_same(yajl_val a, yajl_val b);

#endif /* RTR_TESTS_JSON_TREE_H */
