/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a file the caller named: opened once, checked on the descriptor, bounded. */
#include "../internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int dpas__read_file(const char *path, const char *what, size_t max, char **text, size_t *len,
                    dpas_error *err)
{
    struct stat st;
    *text = NULL;
    /* Opened once, without blocking (a FIFO with no writer, a device), then judged by its
     * descriptor: nothing can change between the check and the read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return dpas__fail(err, DPAS_EIO, "file", "cannot read %s%s: %s", what, path,
                          strerror(errno));
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "it is a directory";
    else if (!S_ISREG(st.st_mode)) /* a FIFO or a device could block or never end */
        why = "not a regular file";
    else if ((uint64_t)st.st_size > max)
        why = "too large";
    if (why && strcmp(why, "too large")) {
        close(fd);
        return dpas__fail(err, DPAS_EIO, "file", "cannot read %s%s: %s", what, path, why);
    }
    char *buf = why ? NULL : malloc(max + 1);
    size_t n = 0;
    int bad = 0;
    while (buf && n <= max) { /* up to one byte past the limit, to see a file that grew */
        ssize_t r = read(fd, buf + n, max + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            bad = r < 0;
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    if (why || n > max) {
        free(buf);
        return dpas__fail(err, DPAS_EINVAL, "file", "%s%s is larger than %zu MiB (the limit)", what,
                          path, max >> 20);
    }
    if (!buf)
        return dpas__fail(err, DPAS_ENOMEM, "file", "out of memory");
    if (bad) {
        free(buf);
        return dpas__fail(err, DPAS_EIO, "file", "cannot read %s%s: %s", what, path,
                          strerror(errno));
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* Why a descriptor that is not a regular file is refused, in a reader's words. */
static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "it is a directory"
           : S_ISFIFO(m) ? "not a regular file (a FIFO)"
           : S_ISCHR(m)  ? "not a regular file (a character device)"
           : S_ISBLK(m)  ? "not a regular file (a block device)"
           : S_ISSOCK(m) ? "not a regular file (a socket)"
                         : "not a regular file";
}

int dpas_write_output(const char *path, const char *field, const void *data, size_t len,
                      dpas_error *err)
{
    char q[160];
    struct stat st;
    if (!path || !*path)
        return dpas__fail(err, DPAS_EINVAL, field, "%s: the output path is empty", field);
    dpas_quote(path, q, sizeof q);
    /* O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of waiting for one, and
     * one with a reader opens and is refused below; O_NOCTTY: a terminal never becomes ours */
    int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        const char *why = e == ENXIO    ? "not a regular file (a FIFO or a socket with no reader)"
                          : e == EISDIR ? "it is a directory"
                                        : strerror(e);
        return dpas__fail(err, DPAS_EIO, field, "%s: cannot write %s: %s", field, q, why);
    }
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = kind_of(st.st_mode);
    else if (ftruncate(fd, 0) != 0 || fcntl(fd, F_SETFL, 0) != 0)
        why = strerror(errno);
    const char *p = data;
    size_t left = why ? 0 : len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            why = w < 0 ? strerror(errno) : "nothing was written";
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) != 0 && !why)
        why = strerror(errno);
    if (why)
        return dpas__fail(err, DPAS_EIO, field, "%s: cannot write %s: %s", field, q, why);
    return 0;
}
