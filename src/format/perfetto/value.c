/* SPDX-License-Identifier: MIT */
/*
 * A VALUE argument as a debug annotation's value: numbers, booleans and strings as
 * its fields, an array as array_values and an object as dict_entries, nested
 * annotations each (named by the key in an object). Null has no value, as a NULL
 * string has none (events.c). The bytes are read as record/value.h says: never
 * trusted, cut where they end.
 */
#include "record/value.h"
#include "format/perfetto/pb.h"
#include "format/perfetto/pf.h"

/* The next item at `in` into the open annotation, `depth` arrays and objects in. */
static char *put_item(char *p, struct rtr__value_in *in, unsigned depth)
{
	struct rtr__value_item it;

	if (!rtr__value_next(in, &it))
		return p;
	switch (it.tag) {
	case RTR_VALUE_FALSE:
	case RTR_VALUE_TRUE:
		return pb_uint(p, RTR__PF_ANN_BOOL, it.tag == RTR_VALUE_TRUE);
	case RTR_VALUE_I64:
		return pb_uint(p, RTR__PF_ANN_INT, it.bits);
	case RTR_VALUE_U64:
		return pb_uint(p, RTR__PF_ANN_UINT, it.bits);
	case RTR_VALUE_F64:
		return pb_fixed64(p, RTR__PF_ANN_DOUBLE, it.bits);
	case RTR_VALUE_STR:
		return pb_string(p, RTR__PF_ANN_STRING, it.str, it.n);
	case RTR_VALUE_ARRAY:
	case RTR_VALUE_OBJECT:
		break;
	default:
		return p; /* null */
	}
	if (depth >= RTR_VALUE_MAX_DEPTH) {
		in->at = in->end; /* the value ends here */
		return p;
	}
	bool object = it.tag == RTR_VALUE_OBJECT;
	for (uint32_t k = 0; k < it.n && rtr__value_more(in); k++) {
		const char *key;
		uint32_t key_len;
		char *len_at;
		if (object && !rtr__value_key(in, &key, &key_len))
			break;
		p = pb_open(p, object ? RTR__PF_ANN_DICT_ENTRIES : RTR__PF_ANN_ARRAY_VALUES,
			    &len_at);
		if (object)
			p = pb_string(p, RTR__PF_ANN_NAME, key, key_len);
		p = put_item(p, in, depth + 1);
		p = pb_close(len_at, p);
	}
	return p;
}

char *rtr__pf_put_value(char *p, const char *bytes, size_t len)
{
	struct rtr__value_in in = {bytes, bytes + len};

	return put_item(p, &in, 0);
}
