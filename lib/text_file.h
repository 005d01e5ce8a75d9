/* SPDX-License-Identifier: BSD-3-Clause
 * The text files listrx is given (a config, a rule file), read whole.
 */
#ifndef LISTRX_TEXT_FILE_H
#define LISTRX_TEXT_FILE_H

#include <stddef.h>

/* The regular file at path, at most max bytes, into *out (NUL-terminated,
 * the caller frees it; *len its bytes). The open does not block, so a
 * FIFO cannot hang it and signals keep working; then fstat must say a
 * regular file (a directory reads as empty, a device never ends). 0, or
 * -errno with why: the open's or read's strerror, -EINVAL "is a
 * directory" or "not a regular file", -EFBIG "larger" (*len: its size).
 * A NUL byte in the text is the caller's to refuse. */
int lrx_text_file_read(const char *path, size_t max, char **out, size_t *len,
		       char *why, size_t why_len);

#endif
