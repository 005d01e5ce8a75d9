/* SPDX-License-Identifier: BSD-3-Clause
 * The INI text of a config (ini.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"

/* p grown to hold n + 1 elements of size, cap doubled */
static int ini_grow(void **p, unsigned n, unsigned *cap, size_t size)
{
	if (n < *cap)
		return 0;
	unsigned want = *cap ? *cap * 2 : 8;
	void *bigger = realloc(*p, want * size);
	if (!bigger)
		return -ENOMEM;
	*p = bigger;
	*cap = want;
	return 0;
}

static struct lrx_ini_section *ini_section_add(struct lrx_ini *ini, const char *name,
					       size_t len, unsigned line)
{
	if (ini_grow((void **)&ini->sections, ini->n, &ini->cap, sizeof(*ini->sections)))
		return NULL;
	struct lrx_ini_section *s = &ini->sections[ini->n];
	*s = (struct lrx_ini_section){.name = strndup(name, len), .line = line};
	if (!s->name)
		return NULL;
	ini->n++;
	return s;
}

static struct lrx_ini_entry *ini_entry_add(struct lrx_ini_section *s, const char *key,
					   size_t key_len, const char *value, size_t len,
					   unsigned line)
{
	if (ini_grow((void **)&s->entries, s->n, &s->cap, sizeof(*s->entries)))
		return NULL;
	struct lrx_ini_entry *e = &s->entries[s->n];
	*e = (struct lrx_ini_entry){.key = strndup(key, key_len),
				    .value = strndup(value, len), .line = line};
	if (!e->key || !e->value) {
		free(e->key);
		free(e->value);
		return NULL;
	}
	s->n++;
	return e;
}

static const struct lrx_ini_section *ini_find(const struct lrx_ini *ini, const char *name,
					      size_t len)
{
	for (unsigned i = 0; i < ini->n; i++)
		if (strlen(ini->sections[i].name) == len && !memcmp(ini->sections[i].name, name, len))
			return &ini->sections[i];
	return NULL;
}

static const struct lrx_ini_entry *ini_find_key(const struct lrx_ini_section *s,
						const char *key, size_t len)
{
	for (unsigned i = 0; s && i < s->n; i++)
		if (strlen(s->entries[i].key) == len && !memcmp(s->entries[i].key, key, len))
			return &s->entries[i];
	return NULL;
}

/* [s, e) without the blanks at either end */
static void ini_trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

/* One line [s, e): 0, -ENOMEM, or -EINVAL with why it is not valid in
 * *why (*first: the line of what it repeats). */
static int ini_line(struct lrx_ini *ini, struct lrx_ini_section **in, const char *s,
		    const char *e, unsigned line, const char **why, unsigned *first)
{
	const struct lrx_ini_section *seen_section;
	const struct lrx_ini_entry *seen_key;
	const char *eq = memchr(s, '=', (size_t)(e - s));

	if (s == e)
		return 0; /* blank, or a comment */
	if (*s == '[') {
		const char *name = s + 1, *end = e - 1;
		if (e[-1] != ']' || e - s < 3)
			*why = "a section header must be [name]";
		ini_trim(&name, &end);
		if (!*why && (seen_section = ini_find(ini, name, (size_t)(end - name)))) {
			*first = seen_section->line;
			*why = "section defined twice";
		}
		if (*why)
			return -EINVAL;
		*in = ini_section_add(ini, name, (size_t)(end - name), line);
		return *in ? 0 : -ENOMEM;
	}
	if (!eq)
		*why = "expected [section] or key = value (; or # starts a comment)";
	else if (eq == s)
		*why = "a key name is missing before '='";
	else if (!*in)
		*why = "key = value before any [section]";
	if (*why)
		return -EINVAL;
	const char *k = s, *k_end = eq, *v = eq + 1, *v_end = e;
	ini_trim(&k, &k_end);
	ini_trim(&v, &v_end);
	if ((seen_key = ini_find_key(*in, k, (size_t)(k_end - k)))) {
		*first = seen_key->line;
		*why = "key set twice in this section";
		return -EINVAL;
	}
	return ini_entry_add(*in, k, (size_t)(k_end - k), v, (size_t)(v_end - v), line)
		       ? 0 : -ENOMEM;
}

int lrx_ini_parse(struct lrx_ini *ini, const char *name, const char *text, char *err,
		  size_t err_len)
{
	struct lrx_ini_section *in = NULL;
	unsigned line = 1;
	for (const char *p = text; *p; line++) {
		const char *end = strchr(p, '\n');
		const char *s = p, *e = end ? end : p + strlen(p), *why = NULL;
		unsigned first = 0;
		/* a comment: ';' or '#' at the start of the line or after a
		 * blank, to the end of the line (a ';' within a value, as
		 * map_init's, is part of it) */
		for (const char *c = s; c < e; c++)
			if ((*c == ';' || *c == '#') &&
			    (c == s || c[-1] == ' ' || c[-1] == '\t')) {
				e = c;
				break;
			}
		ini_trim(&s, &e);
		int rc = ini_line(ini, &in, s, e, line, &why, &first);
		if (rc < 0) {
			char dup[PATH_MAX + 32] = "";
			if (first)
				snprintf(dup, sizeof(dup), " (first at %s:%u)", name, first);
			snprintf(err, err_len, "%s:%u: %.*s: %s%s", name, line,
				 (int)(e - s > 80 ? 80 : e - s), s, why ? why : strerror(-rc), dup);
			return rc;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

void lrx_ini_free(struct lrx_ini *ini)
{
	for (unsigned i = 0; i < ini->n; i++) {
		for (unsigned k = 0; k < ini->sections[i].n; k++) {
			free(ini->sections[i].entries[k].key);
			free(ini->sections[i].entries[k].value);
		}
		free(ini->sections[i].entries);
		free(ini->sections[i].name);
	}
	free(ini->sections);
	*ini = (struct lrx_ini){0};
}

const struct lrx_ini_section *lrx_ini_section(const struct lrx_ini *ini, const char *name)
{
	return ini_find(ini, name, strlen(name));
}

const struct lrx_ini_entry *lrx_ini_entry(const struct lrx_ini *ini, const char *section,
					  const char *key)
{
	return ini_find_key(lrx_ini_section(ini, section), key, strlen(key));
}

const char *lrx_ini_get(const struct lrx_ini *ini, const char *section, const char *key)
{
	const struct lrx_ini_entry *e = lrx_ini_entry(ini, section, key);
	return e ? e->value : NULL;
}

int lrx_ini_set(struct lrx_ini *ini, const char *section, const char *key, const char *value)
{
	struct lrx_ini_section *s = (struct lrx_ini_section *)lrx_ini_section(ini, section);
	if (!s && !(s = ini_section_add(ini, section, strlen(section), 0)))
		return -ENOMEM;
	struct lrx_ini_entry *e = (struct lrx_ini_entry *)ini_find_key(s, key, strlen(key));
	if (!e)
		return ini_entry_add(s, key, strlen(key), value, strlen(value), 0) ? 0 : -ENOMEM;
	char *copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	free(e->value);
	e->value = copy;
	return 0;
}
