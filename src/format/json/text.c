/* SPDX-License-Identifier: MIT */
/*
 * The JSON format's text of an event: its head, `{"ph":..,"cat":..,"name":..,"ts":`,
 * and its arguments, `"key":value,...`, for every line that carries them
 * (events.c, lines.c). Strings come from the intern cache, already escaped; a head
 * and an argument's key come whole from the head cache when they can (text.h).
 */
#include "format/json/text.h"

#include "record/value.h"

#include <string.h>

/* The phase letter of each event type (RTR__EV_*). */
static const char phase[] = {
	[RTR__EV_SPAN] = 'X',	     [RTR__EV_BEGIN] = 'B',	    [RTR__EV_END] = 'E',
	[RTR__EV_INSTANT] = 'i',     [RTR__EV_COUNTER] = 'C',	    [RTR__EV_COUNTERS] = 'C',
	[RTR__EV_FLOW_START] = 's',  [RTR__EV_FLOW_STEP] = 't',	    [RTR__EV_FLOW_END] = 'f',
	[RTR__EV_ASYNC_BEGIN] = 'b', [RTR__EV_ASYNC_INSTANT] = 'n', [RTR__EV_ASYNC_END] = 'e',
	[RTR__EV_MEM_ALLOC] = 'i',   [RTR__EV_MEM_FREE] = 'i',	    [RTR__EV_STACK] = 'i',
	[RTR__EV_THREAD_NAME] = 'M', [RTR__EV_PROCESS_LABEL] = 'M', [RTR__EV_PROCESS_SORT] = 'M',
	[RTR__EV_THREAD_SORT] = 'M',
};

char *rtr__json_f64_bits(char *p, uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return rtr__jsontext_f64(p, d);
}

/* `n` int64 values, unaligned at `src`, as a JSON array. */
static char *put_i64_list(char *p, const char *src, uint64_t n)
{
	*p++ = '[';
	for (uint64_t k = 0; k < n; k++) {
		int64_t x;
		memcpy(&x, src + k * sizeof(x), sizeof(x));
		if (k > 0)
			*p++ = ',';
		p = rtr__jsontext_i64(p, x);
	}
	*p++ = ']';
	return p;
}

/* An argument's `"key":` the head cache does not hold: written, and kept there. */
char *rtr__json_arg_key_fresh(struct rtr__writer *w, char *p, const char *key)
{
	struct rtr__json *j = json_of(w);
	char *start = p;

	*p++ = '"';
	if (key != NULL)
		p = put_static(j, p, key);
	p = PUT_LIT(p, "\":");
	keep_head(j, start, p, KEY_ARG_KEY, (uintptr_t)key, 0);
	return p;
}

/* A blob's value: a copied string, an array of integers or of lists or of strings, a
 * value of any shape. */
static char *put_blob(char *p, uint8_t type, uint64_t val, const char *str)
{
	switch (type) {
	case RTR_ARG_TYPE_STR_COPY:
		if (val == UINT64_MAX)
			return PUT_LIT(p, "null");
		*p++ = '"';
		p = rtr__jsontext_escape(p, str, val);
		*p++ = '"';
		return p;
	case RTR_ARG_TYPE_I64_ARRAY:
		return put_i64_list(p, str, val);
	case RTR_ARG_TYPE_I64_LISTS: {
		const char *vals = str + val * sizeof(uint32_t);
		*p++ = '[';
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len;
			memcpy(&len, str + k * sizeof(len), sizeof(len));
			if (k > 0)
				*p++ = ',';
			p = put_i64_list(p, vals, len);
			vals += (size_t)len * sizeof(int64_t);
		}
		*p++ = ']';
		return p;
	}
	case RTR_ARG_TYPE_STR_ARRAY:
		*p++ = '[';
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len;
			memcpy(&len, str, sizeof(len));
			str += sizeof(len);
			if (k > 0)
				*p++ = ',';
			if (len == UINT32_MAX) {
				p = PUT_LIT(p, "null");
				continue;
			}
			*p++ = '"';
			p = rtr__jsontext_escape(p, str, len);
			*p++ = '"';
			str += len;
		}
		*p++ = ']';
		return p;
	case RTR_ARG_TYPE_VALUE:
		return rtr__value_json(p, str, val);
	default:
		return PUT_LIT(p, "null");
	}
}

char *rtr__json_code_value(struct rtr__writer *w, char *p, uint64_t ra)
{
	size_t src_len;
	const char *src = rtr__memstack_code_srcline(&w->mem, ra, &src_len);

	*p++ = '"';
	p = rtr__memstack_hex(p, ra);
	*p++ = '"';
	if (src_len > 0) {
		p = PUT_LIT(p, ",\"src\":\"");
		p = rtr__jsontext_escape(p, src, src_len);
		*p++ = '"';
	}
	return p;
}

char *rtr__json_arg_list(struct rtr__writer *w, char *p, const struct rtr__args *a, int counters)
{
	const char *str = rtr__args_blobs(a);

	for (unsigned i = 0; i < a->n; i++) {
		const char *key;
		uint64_t val = rtr__args_get(a, i, &key);
		if (i > 0)
			*p++ = ',';
		p = put_arg_key(w, p, key);
		switch (a->types[i]) {
		case RTR_ARG_TYPE_I64:
			p = rtr__jsontext_i64_inline(p, (int64_t)val);
			break;
		case RTR_ARG_TYPE_U64:
			p = RTR_UNLIKELY(key == rtr__arg_key_code) && !counters
				    ? rtr__json_code_value(w, p, val)
				    : rtr__jsontext_u64_inline(p, val);
			break;
		case RTR_ARG_TYPE_F64:
			p = rtr__json_f64_bits(p, val);
			break;
		case RTR_ARG_TYPE_BOOL:
			if (counters) /* a series takes numbers only */
				*p++ = val ? '1' : '0';
			else
				p = val ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
			break;
		case RTR_ARG_TYPE_STR:
			if (val == 0) {
				p = PUT_LIT(p, "null");
				break;
			}
			*p++ = '"';
			p = put_static(json_of(w), p, (const char *)(uintptr_t)val);
			*p++ = '"';
			break;
		default:
			p = put_blob(p, a->types[i], val, str);
			str += rtr__args_blob_bytes(a->types[i], val, str);
			break;
		}
	}
	return p;
}

static char *put_name(struct rtr__json *j, char *p, const struct rtr__event *ev)
{
	p = PUT_LIT(p, ",\"name\":\"");
	if (ev->flags & RTR__EVF_COPIED) {
		struct rtr__istr is = rtr__intern_bytes(&j->intern, ev->name, ev->name_len);
		p = put(p, is.bytes, is.len);
	} else if (ev->name != NULL) {
		p = put_static(j, p, ev->name);
	}
	*p++ = '"';
	return p;
}

static char *put_cat(struct rtr__json *j, char *p, const char *cat)
{
	if (cat == NULL)
		return p;
	p = PUT_LIT(p, ",\"cat\":\"");
	p = put_static(j, p, cat);
	*p++ = '"';
	return p;
}

char *rtr__json_encode_head(struct rtr__writer *w, char *p, const struct rtr__event *ev)
{
	struct rtr__json *j = json_of(w);

	p = PUT_LIT(p, "{\"ph\":\"");
	*p++ = phase[ev->type];
	*p++ = '"';
	switch (ev->type) {
	case RTR__EV_STACK: /* a thread-scoped instant with a stack */
		p = PUT_LIT(p, ",\"s\":\"t\"");
		break;
	case RTR__EV_INSTANT:
		p = ev->scope == RTR__SCOPE_GLOBAL    ? PUT_LIT(p, ",\"s\":\"g\"")
		    : ev->scope == RTR__SCOPE_PROCESS ? PUT_LIT(p, ",\"s\":\"p\"")
						      : PUT_LIT(p, ",\"s\":\"t\"");
		break;
	case RTR__EV_FLOW_END: /* bound to the enclosing slice */
		p = PUT_LIT(p, ",\"bp\":\"e\"");
		break;
	case RTR__EV_ASYNC_BEGIN:
	case RTR__EV_ASYNC_INSTANT:
	case RTR__EV_ASYNC_END:
		/* async events need a category to match on */
		if (ev->cat == NULL) {
			p = PUT_LIT(p, ",\"cat\":\"async\"");
			p = put_name(j, p, ev);
			return PUT_LIT(p, ",\"ts\":");
		}
		break;
	case RTR__EV_SPAN:
		if (ev->flags & RTR__EVF_CODE) { /* the instrument library's function */
			size_t len;
			const char *name = rtr__memstack_function(&w->mem, ev->x.code.addr, &len);
			p = PUT_LIT(p, ",\"cat\":\"function\",\"name\":\"");
			p = rtr__jsontext_escape(p, name, len);
			return PUT_LIT(p, "\",\"ts\":");
		}
		break;
	default:
		break;
	}
	p = put_cat(j, p, ev->cat);
	p = put_name(j, p, ev);
	return PUT_LIT(p, ",\"ts\":");
}
