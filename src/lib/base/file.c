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
