/* SPDX-License-Identifier: MIT */
/*
 * Event text helpers of merge and split (see merge_json.h).
 */
#include "merge_json.h"

#include <string.h>

/* Index just past the string that starts with the quote at s[i]. A byte loop: the
 * strings of an event are short, shorter than memchr's setup pays for. */
static size_t skip_string(const char *s, size_t i, size_t len)
{
	for (i++; i < len; i++) {
		if (s[i] == '"')
			return i + 1;
		if (s[i] == '\\')
			i++; /* the escaped byte, a quote included */
	}
	return len;
}

/* Index just past the value that starts at s[i]. */
static size_t skip_value(const char *s, size_t i, size_t len)
{
	unsigned depth = 0;

	if (i >= len)
		return len;
	if (s[i] == '"')
		return skip_string(s, i, len);
	if (s[i] != '{' && s[i] != '[') {
		/* A number or a literal: compact text ends it at ',' or the closing brace. */
		while (i < len && s[i] != ',' && s[i] != '}' && s[i] != ']')
			i++;
		return i;
	}
	while (i < len) {
		char c = s[i];

		if (c == '"') {
			i = skip_string(s, i, len);
			continue;
		}
		if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return len;
}

int json_next_member(const char *json, size_t len, size_t *pos, struct json_member *m)
{
	size_t i = *pos, k;

	if (i == 0) {
		if (len == 0 || json[0] != '{')
			return 0;
		i = 1;
	}
	if (i < len && json[i] == ',')
		i++;
	if (i >= len || json[i] != '"')
		return 0;
	k = skip_string(json, i, len);
	if (k >= len || json[k] != ':')
		return 0;
	m->key = json + i + 1;
	m->key_len = k - i - 2;
	m->value = json + k + 1;
	i = skip_value(json, k + 1, len);
	m->value_len = (size_t)(json + i - m->value);
	*pos = i;
	return 1;
}

int json_next_element(const char *json, size_t len, size_t *pos, const char **value,
		      size_t *value_len)
{
	size_t i = *pos;

	if (i == 0) {
		if (len == 0 || json[0] != '[')
			return 0;
		i = 1;
	}
	if (i < len && json[i] == ',')
		i++;
	if (i >= len || json[i] == ']')
		return 0;
	*value = json + i;
	i = skip_value(json, i, len);
	*value_len = (size_t)(json + i - *value);
	*pos = i;
	return 1;
}

bool json_member_is(const struct json_member *m, const char *key)
{
	size_t n = strlen(key);

	return m->key_len == n && memcmp(m->key, key, n) == 0;
}

int event_rewrite(struct buf *out, const char *json, size_t len, const struct event_edit *e)
{
	struct json_member m;
	size_t pos = 0, from = 0;
	unsigned left = e->set_ts + e->set_dur + e->set_pid + (e->id != NULL) + (e->args != NULL) +
			(e->ph != NULL);

	/*
	 * Copy runs of untouched members in one piece: from is where the text not yet
	 * copied begins, and each replaced member copies up to its value first. Once
	 * every field asked for is replaced, the rest is copied unread (unless a key
	 * may come twice).
	 */
	while ((left > 0 || e->duplicates) && json_next_member(json, len, &pos, &m)) {
		const char *key = m.key;
		size_t before = (size_t)(m.value - json);
		int err = 0;

		if (m.key_len == 2 && key[0] == 't' && key[1] == 's' && e->set_ts) {
			err = buf_put(out, json + from, before - from) || buf_put_us(out, e->ts_ns);
		} else if (m.key_len == 3 && memcmp(key, "dur", 3) == 0 && e->set_dur) {
			err = buf_put(out, json + from, before - from) ||
			      buf_put_dur(out, e->ts_ns, e->dur_ns);
		} else if (m.key_len == 3 && memcmp(key, "pid", 3) == 0 && e->set_pid) {
			err = buf_put(out, json + from, before - from) || buf_put_i64(out, e->pid);
		} else if (m.key_len == 2 && key[0] == 'i' && key[1] == 'd' && e->id != NULL) {
			err = buf_put(out, json + from, before - from) ||
			      buf_put(out, e->id, e->id_len);
		} else if (m.key_len == 4 && memcmp(key, "args", 4) == 0 && e->args != NULL) {
			err = buf_put(out, json + from, before - from) ||
			      buf_put(out, e->args, e->args_len);
		} else if (m.key_len == 2 && key[0] == 'p' && key[1] == 'h' && e->ph != NULL) {
			err = buf_put(out, json + from, before - from) || buf_puts(out, e->ph);
		} else {
			continue;
		}
		if (err)
			return -1;
		from = pos;
		left -= left > 0;
	}
	if (e->add_dur && len > 2 && json[len - 1] == '}')
		return buf_put(out, json + from, len - 1 - from) || buf_put(out, ",\"dur\":", 7) ||
		       buf_put_dur(out, e->ts_ns, e->dur_ns) || buf_putc(out, '}');
	return buf_put(out, json + from, len - from);
}

int json_object_extend(struct buf *out, const char *obj, size_t len, const char *members,
		       size_t mlen)
{
	if (len < 2 || obj[0] != '{' || obj[len - 1] != '}')
		return buf_putc(out, '{') || buf_put(out, members, mlen) || buf_putc(out, '}');
	if (mlen == 0)
		return buf_put(out, obj, len);
	return buf_put(out, obj, len - 1) || (len > 2 && buf_putc(out, ',')) ||
	       buf_put(out, members, mlen) || buf_putc(out, '}');
}

int buf_put_key(struct buf *b, const char *key)
{
	return buf_putc(b, '"') || buf_puts(b, key) || buf_put(b, "\":", 2);
}

int buf_put_value(struct buf *b, const struct trace_value *v)
{
	if (v->type == TRACE_STRING)
		return json_put_string(b, v->text, v->len) < 0 ? -1 : 0;
	if (v->type == TRACE_ABSENT)
		return buf_puts(b, "null");
	return buf_put(b, v->text, v->len);
}

int args_with(struct buf *out, const struct trace_event *ev, const char *key,
	      const char *value_json, size_t value_len)
{
	size_t klen = strlen(key);
	bool done = false;

	if (buf_putc(out, '{'))
		return -1;
	for (size_t i = 0; i < ev->nargs; i++) {
		const struct trace_arg *a = &ev->arg[i];
		bool mine = a->key_len == klen && memcmp(a->key, key, klen) == 0;

		if (i > 0 && buf_putc(out, ','))
			return -1;
		if (json_put_string(out, a->key, a->key_len) < 0 || buf_putc(out, ':'))
			return -1;
		if (mine ? buf_put(out, value_json, value_len) : buf_put_value(out, &a->value))
			return -1;
		done |= mine;
	}
	if (!done && ((ev->nargs > 0 && buf_putc(out, ',')) || buf_put_key(out, key) ||
		      buf_put(out, value_json, value_len)))
		return -1;
	return buf_putc(out, '}');
}

int value_u64(const struct trace_value *v, uint64_t *out)
{
	uint64_t n = 0;

	if ((v->type != TRACE_NUMBER && v->type != TRACE_STRING) || v->len == 0 || v->len > 20)
		return -1;
	for (size_t i = 0; i < v->len; i++) {
		unsigned d = (unsigned)(v->text[i] - '0');

		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*out = n;
	return 0;
}

int value_id_u64(const struct trace_value *v, uint64_t *out)
{
	uint64_t n = 0;

	if (v->type == TRACE_NUMBER)
		return value_u64(v, out);
	if (v->type != TRACE_STRING || v->len < 3 || v->len > 18 || v->text[0] != '0' ||
	    (v->text[1] != 'x' && v->text[1] != 'X'))
		return -1;
	for (size_t i = 2; i < v->len; i++) {
		char c = v->text[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		n = n << 4 | d;
	}
	*out = n;
	return 0;
}

bool is_marker(const struct trace_event *ev, const char *name)
{
	return ev->phase == 'i' && trace_value_is(&ev->name, name);
}

int put_end_event(struct buf *b, char phase, const char *cat, size_t cat_len, const char *name,
		  size_t name_len, const char *id, size_t id_len, int64_t ts_ns, int64_t pid,
		  int64_t tid)
{
	char head[] = "{\"ph\":\"E\"";

	head[7] = phase;
	if (buf_puts(b, head))
		return -1;
	if (cat != NULL && (buf_puts(b, ",\"cat\":") || json_put_string(b, cat, cat_len) < 0))
		return -1;
	if (name != NULL && (buf_puts(b, ",\"name\":") || json_put_string(b, name, name_len) < 0))
		return -1;
	if (id != NULL && (buf_puts(b, ",\"id\":") || buf_put(b, id, id_len)))
		return -1;
	return buf_puts(b, ",\"ts\":") || buf_put_us(b, ts_ns) || buf_puts(b, ",\"pid\":") ||
	       buf_put_i64(b, pid) || buf_puts(b, ",\"tid\":") || buf_put_i64(b, tid) ||
	       buf_putc(b, '}');
}
