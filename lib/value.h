/* SPDX-License-Identifier: BSD-3-Clause
 * The value layer: one grammar for every value listrx reads (config files,
 * --set and the command line, stage keys, net_synth devargs), as DPDK PMDs
 * read every devarg through rte_kvargs with one handler per kind of value.
 *
 * A table of keys (struct lrx_value_key) names each key, its default, its
 * help and its type, and where its parsed value goes in a typed struct: a
 * value is checked once, when it is read, into that struct, and what uses
 * the struct does not parse again. On a bad value the parsers say what is
 * valid, always in the same words (lrx_value_valid), and the caller puts
 * where it came from in front.
 *
 * Grammar:
 *  - integer: decimal digits only, no sign, blank or leading zero (010 and
 *    0x10 are refused: a reader cannot tell what they mean), in min..max;
 *    hexadecimal digits where a rule file writes 0x (lrx_value_hex);
 *  - number: decimal notation (1.5, 2e3), finite, in min..max;
 *  - yes/no: yes|no, true|false, on|off, 1|0 (any case);
 *  - choice: one of a list of words, exactly;
 *  - list: items separated by single ',' (or '+', which a devarg needs as
 *    ',' separates devargs), blanks around an item ignored, no empty item;
 *  - port set: any | none | a list of ports and ranges (53,8000-8100);
 *  - MAC: six hex bytes separated by ':';
 *  - address: IPv4 or IPv6 (inet_pton), optionally /prefix-length.
 */
#ifndef LISTRX_VALUE_H
#define LISTRX_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lrx_value_kind {
	LRX_VALUE_UINT,     /* uint8/16/32/64_t (size): integer in min..max */
	LRX_VALUE_DOUBLE,   /* double: number in fmin..fmax */
	LRX_VALUE_BOOL,     /* bool: yes/no */
	LRX_VALUE_CHOICE,   /* unsigned integer (size): index in choices[] */
	LRX_VALUE_FLAGS,    /* uint32_t: OR of the listed flags' bits */
	LRX_VALUE_STRING,   /* char[size]: any text shorter than size */
	LRX_VALUE_PORTS,    /* struct lrx_port_set */
	LRX_VALUE_CUSTOM,   /* parse(): a value made of the ones above */
};

/* A named bit of a FLAGS value ("all" and "none" are flags like any other). */
struct lrx_value_flag {
	const char *name;
	uint32_t bits;
};

struct lrx_value_type {
	enum lrx_value_kind kind;
	size_t size;                         /* bytes of the field */
	uint64_t min, max;                   /* UINT */
	double fmin, fmax;                   /* DOUBLE */
	const char *const *choices;          /* CHOICE: NULL terminated */
	const struct lrx_value_flag *flags;  /* FLAGS: NULL-name terminated */
	/* CUSTOM: parses text into out (size bytes), returns 0 or -EINVAL;
	 * valid says what is valid. */
	int (*parse)(const char *text, void *out);
	const char *valid;                   /* "any, or a list of ..." */
};

/* A key of a table: name, default (text, parsed as any value; NULL
 * leaves the field as it is), help, type, and the field's offset in the
 * struct the table fills. Tables end with a NULL name. */
struct lrx_value_key {
	const char *name;
	const char *def;
	const char *help;
	struct lrx_value_type type;
	size_t offset;
};

#define LRX_VALUE_BOOL_VALID "yes/no, true/false, on/off or 1/0"

#define LRX_PORT_SET_WORDS (65536 / 64)
/* any | none | ports and ranges: a bit per port */
struct lrx_port_set {
	bool any;
	uint64_t bits[LRX_PORT_SET_WORDS];
};

static inline bool lrx_port_set_has(const struct lrx_port_set *s, uint16_t port)
{
	return s->any || (s->bits[port >> 6] >> (port & 63) & 1);
}

/* ---- primitives: 0 or -EINVAL ------------------------------------------- */
int lrx_value_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* Hexadecimal digits only (rule files' marks and handles after their
 * 0x), in min..max. */
int lrx_value_hex(const char *text, uint64_t min, uint64_t max, uint64_t *out);
int lrx_value_double(const char *text, double min, double max, double *out);
int lrx_value_bool(const char *text, bool *out);
int lrx_value_choice(const char *text, const char *const *choices, unsigned *out);
int lrx_value_flags(const char *text, const struct lrx_value_flag *flags, uint32_t *out);
int lrx_value_ports(const char *text, struct lrx_port_set *out);
int lrx_value_mac(const char *text, uint8_t mac[6]);
/* An address of family af (AF_INET: 4 bytes, AF_INET6: 16) into addr,
 * with "/N" when prefix_len is not NULL (N in 0..32 or 0..128; absent: the
 * whole address). */
int lrx_value_addr(const char *text, int af, void *addr, unsigned *prefix_len);
/* The next item of a list at *p into item (NUL terminated); *p moves past
 * it. Returns 1 for an item, 0 at the end, -EINVAL for an empty item or
 * one that does not fit. */
int lrx_value_list_next(const char **p, char *item, size_t len);

/* ---- typed values ------------------------------------------------------- */
/* Parses text as t into out. Returns 0 or -EINVAL. */
int lrx_value_parse(const struct lrx_value_type *t, const char *text, void *out);
/* What t accepts, as the messages say it after "must be ": "an integer
 * in 1..512". A CUSTOM type's valid says it the same way. */
void lrx_value_valid(const struct lrx_value_type *t, char *buf, size_t len);

/* ---- tables -------------------------------------------------------------- */
const struct lrx_value_key *lrx_value_key_find(const struct lrx_value_key *keys,
					       const char *name);
/* Parses text into k's field of dst; on -EINVAL, what is valid in valid. */
int lrx_value_key_set(const struct lrx_value_key *k, void *dst, const char *text,
		      char *valid, size_t len);
/* Every key's default into dst. Returns 0, or -EINVAL naming the key whose
 * default is not valid (a bug of the table; tests check every table). */
int lrx_value_keys_default(const struct lrx_value_key *keys, void *dst,
			   const char **bad_key);
/* "a, b, c": the names of keys. */
void lrx_value_key_names(const struct lrx_value_key *keys, char *buf, size_t len);

/* Table entries (C): key NAME of struct T's field F. */
#define LRX_KEY_(T, F, NAME, DEF, HELP, ...)                                   \
	{ .name = NAME, .def = DEF, .help = HELP, .offset = offsetof(T, F),    \
	  .type = { .size = sizeof(((T *)0)->F), __VA_ARGS__ } }
#define LRX_KEY_UINT(T, F, NAME, DEF, MIN, MAX, HELP)                          \
	LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_UINT, .min = MIN, .max = MAX)
#define LRX_KEY_DOUBLE(T, F, NAME, DEF, MIN, MAX, HELP)                        \
	LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_DOUBLE, .fmin = MIN, .fmax = MAX)
#define LRX_KEY_BOOL(T, F, NAME, DEF, HELP) LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_BOOL)
#define LRX_KEY_CHOICE(T, F, NAME, DEF, CHOICES, HELP)                         \
	LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_CHOICE, .choices = CHOICES)
#define LRX_KEY_FLAGS(T, F, NAME, DEF, FLAGS, HELP)                            \
	LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_FLAGS, .flags = FLAGS)
#define LRX_KEY_STRING(T, F, NAME, DEF, HELP) LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_STRING)
#define LRX_KEY_PORTS(T, F, NAME, DEF, HELP) LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_PORTS)
#define LRX_KEY_CUSTOM(T, F, NAME, DEF, PARSE, VALID, HELP)                    \
	LRX_KEY_(T, F, NAME, DEF, HELP, .kind = LRX_VALUE_CUSTOM, .parse = PARSE, .valid = VALID)

#ifdef __cplusplus
}
#endif

#endif
