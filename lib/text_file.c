/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text_file.h"

int lrx_text_file_read(const char *path, size_t max, char **out, size_t *len,
		       char *why, size_t why_len)
{
	struct stat st;
	char *buf = NULL;
	int rc = 0;

	*out = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, why_len, "%s", strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s",
			 S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		rc = -EINVAL;
	} else if ((size_t)st.st_size > max) {
		*len = (size_t)st.st_size;
		rc = -EFBIG;
	} else if ((buf = malloc(max + 2)) == NULL) {
		rc = -ENOMEM;
	}
	while (rc == 0) { /* to max + 1 bytes: a file that grew is too large */
		ssize_t n = read(fd, buf + *len, max + 1 - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		else if (n == 0)
			break;
		else if ((*len += (size_t)n) > max)
			rc = -EFBIG;
	}
	close(fd);
	if (rc == -EFBIG)
		snprintf(why, why_len, "larger");
	else if (rc < 0 && rc != -EINVAL)
		snprintf(why, why_len, "%s", strerror(-rc));
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[*len] = '\0';
	*out = buf;
	return 0;
}
