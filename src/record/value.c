/* SPDX-License-Identifier: MIT */
/*
 * A VALUE argument as JSON text, for the JSON format and for the writer's measure of
 * a slice's arguments in JSON bytes (writer/slices.c), whatever the format.
 */
#include "record/value.h"

#include "common/jsontext.h"

static char *put_lit(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

static char *put_string(char *p, const char *s, uint32_t len)
{
	*p++ = '"';
	p = rtr__jsontext_escape(p, s, len);
	*p++ = '"';
	return p;
}

/* The next item at `in`, `depth` arrays and objects inside the value. */
static char *put_item(char *p, struct rtr__value_in *in, unsigned depth)
{
	struct rtr__value_item it;
	int64_t i64;
	double f64;

	if (!rtr__value_next(in, &it))
		return put_lit(p, "null", 4);
	switch (it.tag) {
	case RTR_VALUE_FALSE:
		return put_lit(p, "false", 5);
	case RTR_VALUE_TRUE:
		return put_lit(p, "true", 4);
	case RTR_VALUE_I64:
		memcpy(&i64, &it.bits, sizeof(i64));
		return rtr__jsontext_i64(p, i64);
	case RTR_VALUE_U64:
		return rtr__jsontext_u64(p, it.bits);
	case RTR_VALUE_F64:
		memcpy(&f64, &it.bits, sizeof(f64));
		return rtr__jsontext_f64(p, f64);
	case RTR_VALUE_STR:
		return put_string(p, it.str, it.n);
	case RTR_VALUE_ARRAY:
	case RTR_VALUE_OBJECT:
		break;
	default:
		return put_lit(p, "null", 4);
	}
	if (depth >= RTR_VALUE_MAX_DEPTH) {
		in->at = in->end; /* the value ends here */
		return put_lit(p, "null", 4);
	}
	bool object = it.tag == RTR_VALUE_OBJECT;
	*p++ = object ? '{' : '[';
	for (uint32_t k = 0; k < it.n && rtr__value_more(in); k++) {
		const char *key;
		uint32_t key_len;
		if (object && !rtr__value_key(in, &key, &key_len))
			break;
		if (k > 0)
			*p++ = ',';
		if (object) {
			p = put_string(p, key, key_len);
			*p++ = ':';
		}
		p = put_item(p, in, depth + 1);
	}
	*p++ = object ? '}' : ']';
	return p;
}

char *rtr__value_json(char *p, const char *bytes, size_t len)
{
	struct rtr__value_in in = {bytes, bytes + len};

	return put_item(p, &in, 0);
}
