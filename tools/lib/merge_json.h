/* SPDX-License-Identifier: MIT */
/*
 * Event text helpers of `ringtrace merge` and `ringtrace split`: walking the top-level
 * members of an event's compact JSON (trace_event.json), writing an event again with
 * some of its fields replaced, and the numbers and marker lines both tools compose.
 *
 * Why rewrite text instead of rebuilding events from the typed fields: an event may
 * hold keys the reader does not type ("tts", "id2", "bind_id", ...), and a merge or
 * a split must carry them through unchanged. The reader's compact JSON has every key
 * in file order, no blanks and strings escaped by json_put_string(), so a member is
 * found with a short scan and every other byte is copied as it is.
 *
 * Thread safety: no global state.
 */
#ifndef RTR_TOOLS_MERGE_JSON_H
#define RTR_TOOLS_MERGE_JSON_H

#include "json.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One top-level member of a compact JSON object. */
struct json_member {
	const char *key; /* the key's text between its quotes, escaped as written */
	size_t key_len;
	const char *value; /* the value's text */
	size_t value_len;
};

/*
 * The member at *pos of the compact object json[0 .. len) (*pos = 0 to begin). Returns
 * 1 with *m set and *pos moved past it, or 0 at the end of the object (or at text that
 * is not a compact object: the reader never makes that).
 */
int json_next_member(const char *json, size_t len, size_t *pos, struct json_member *m);

/*
 * The element at *pos of the compact array json[0 .. len) (*pos = 0 to begin): 1 with
 * *value and *value_len its text and *pos moved past it, or 0 at the end of the array
 * (or at text that is not a compact array).
 */
int json_next_element(const char *json, size_t len, size_t *pos, const char **value,
		      size_t *value_len);

/* Is the member's key the plain ASCII key? */
bool json_member_is(const struct json_member *m, const char *key);

/* Replacements for event_rewrite(). A field not asked for is copied as it is. */
struct event_edit {
	bool set_ts;
	int64_t ts_ns; /* written as microseconds with at most three decimals */
	bool set_dur;
	int64_t dur_ns; /* the same, or a double's text where ts_ns + dur_ns needs it */
	bool set_pid;
	int64_t pid;
	const char *id; /* the new value text of "id", or NULL */
	size_t id_len;
	const char *args; /* the new value text of "args", or NULL */
	size_t args_len;
	bool duplicates; /* a known key may come twice (trace_event.duplicates) */
	const char *ph;	 /* the new value text of "ph" ("\"X\""), or NULL */
	bool add_dur;	 /* append "dur" (dur_ns at ts_ns) to an event that has none */
};

/*
 * Append the event json[0 .. len) to out with the fields of e replaced (every
 * occurrence of a key seen twice, when e->duplicates says there may be one). Fields
 * the event does not have are not added, but for "dur" with add_dur. 0, or -1 when
 * out of memory.
 */
int event_rewrite(struct buf *out, const char *json, size_t len, const struct event_edit *e);

/*
 * Append the object obj[0 .. len) (compact, "{...}") with the members members[0 ..
 * mlen) ("\"k\":v,\"k2\":v2", no braces) added at its end. 0 or -1.
 */
int json_object_extend(struct buf *out, const char *obj, size_t len, const char *members,
		       size_t mlen);

/* Append "\"key\":" (key plain ASCII). 0 or -1. */
int buf_put_key(struct buf *b, const char *key);

/* Append a value of the reader as JSON: a string escaped, anything else as its text. */
int buf_put_value(struct buf *b, const struct trace_value *v);

/* An event's args, rebuilt from the reader's top-level args with the value of `key`
 * replaced by value_json (or appended when absent): "{...}". 0 or -1. */
int args_with(struct buf *out, const struct trace_event *ev, const char *key,
	      const char *value_json, size_t value_len);

/*
 * An unsigned integer from a value: a JSON integer, or a string of decimal digits
 * (the recorder writes its 64-bit origins as strings, since they exceed 2^53). 0 or
 * -1.
 */
int value_u64(const struct trace_value *v, uint64_t *out);

/* An id as the viewers read it: a JSON integer >= 0, or a "0x..." hex string. 0 or -1. */
int value_id_u64(const struct trace_value *v, uint64_t *out);

/* Is the event the recorder's marker of that name (RTR__MARK_START, RTR__MARK_END of
 * common/names.h)? */
bool is_marker(const struct trace_event *ev, const char *name);

/*
 * Append an E event that ends the open B whose name and cat are given (NULL: the B
 * had none), at ts_ns on thread (pid, tid). Compact, no trailing comma. 0 or -1.
 */
int put_end_event(struct buf *b, char phase, const char *cat, size_t cat_len, const char *name,
		  size_t name_len, const char *id, size_t id_len, int64_t ts_ns, int64_t pid,
		  int64_t tid);

#endif /* RTR_TOOLS_MERGE_JSON_H */
