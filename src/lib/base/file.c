/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a file the caller named: opened once, checked on the descriptor, bounded. */
/* realpath is X/Open */
#define _XOPEN_SOURCE 700
#include "../internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
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

/* Removes the temporary file, keeping errno for the message. */
static void drop_temp(int fd, const char *tmp)
{
    int e = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = e;
}

/* Opens a new file next to target, named ".<name>.dpas-XXXXXX" with six letters, created
 * exclusively (O_EXCL, as mkstemp does) with mode 0666 so that the umask applies as it would to
 * the file itself. tmp receives its name (malloc'd). -1 and errno on failure. */
static int open_temp(const char *target, char **tmp)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const char *slash = strrchr(target, '/');
    size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
    const char *name = target + dirlen;
    size_t cap = dirlen + strlen(name) + 16;
    char *t = malloc(cap);
    if (!t) {
        errno = ENOMEM;
        return -1;
    }
    for (int attempt = 0; attempt < 64; attempt++) {
        /* the clock, the process and the attempt: names that differ; O_EXCL makes them safe */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = ((uint64_t)ts.tv_nsec * 2654435761u) ^ ((uint64_t)ts.tv_sec << 30) ^
                     ((uint64_t)getpid() << 12) ^ ((uint64_t)attempt * 0x9E3779B97F4A7C15u);
        unsigned char r[6];
        for (size_t i = 0; i < sizeof r; i++)
            r[i] = (unsigned char)(x >> (8 * i + 3));
        char suffix[7];
        for (size_t i = 0; i < sizeof r; i++)
            suffix[i] = letters[r[i] % (sizeof letters - 1)];
        suffix[6] = '\0';
        snprintf(t, cap, "%.*s.%s.dpas-%s", (int)dirlen, target, name, suffix);
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) {
            if (fd < 0) {
                int e = errno;
                free(t);
                errno = e;
            } else
                *tmp = t;
            return fd;
        }
    }
    free(t);
    errno = EEXIST;
    return -1;
}

/* One output staged: its content written whole to a temporary file beside the target, not yet
 * renamed over it. */
typedef struct staged {
    char *tmp, *target; /* target: the path itself, or what its link names */
} staged;

static int stage(const char *path, const char *field, const void *data, size_t len, staged *out,
                 dpas_error *err)
{
    char q[160];
    struct stat st;
    out->tmp = out->target = NULL;
    if (!path || !*path)
        return dpas__fail(err, DPAS_EINVAL, field, "%s: the output path is empty", field);
    dpas_quote(path, q, sizeof q);
    /* Judged by stat, before anything is created: a FIFO (with a reader or without), a device, a
     * socket or a directory is refused without being opened, so nothing blocks and nothing is
     * written into it. A link is followed: the file it names is the one replaced, the link kept. */
    char *target = NULL;
    int exists = stat(path, &st) == 0;
    const char *why = NULL;
    if (!exists && errno != ENOENT)
        why = strerror(errno);
    else if (exists && !S_ISREG(st.st_mode))
        why = kind_of(st.st_mode);
    else if (exists && !(target = realpath(path, NULL)))
        why = strerror(errno);
    if (why)
        return dpas__fail(err, DPAS_EIO, field, "%s: cannot write %s: %s", field, q, why);
    if (!target && !(target = strdup(path)))
        return dpas__fail(err, DPAS_ENOMEM, field, "out of memory");
    /* The content goes to a temporary file in the same folder and replaces the old file by
     * rename, which is atomic: a write that fails part way (a full disk, a file-size limit)
     * leaves the old file byte for byte as it was, and a reader never sees half a plot. */
    char *tmp = NULL;
    int fd = open_temp(target, &tmp);
    if (fd < 0) {
        int e = errno;
        free(target);
        return dpas__fail(err, DPAS_EIO, field, "%s: cannot write %s: %s", field, q,
                          e == EISDIR ? "it is a directory" : strerror(e));
    }
    if (exists) { /* the replacement keeps the old file's mode (and owner, where we may) */
        if (fchmod(fd, st.st_mode & 07777) != 0)
            why = strerror(errno);
        if (!why && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
            fchown(fd, st.st_uid, st.st_gid) != 0) {
            /* not ours to give away: the new file is ours, as any rewrite by us would make it */
        }
    }
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
    if (!why && fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        why = strerror(errno);
    if (close(fd) != 0 && !why)
        why = strerror(errno);
    if (why) {
        drop_temp(-1, tmp);
        free(tmp);
        free(target);
        return dpas__fail(err, DPAS_EIO, field, "%s: cannot write %s: %s", field, q, why);
    }
    out->tmp = tmp, out->target = target;
    return 0;
}

static void unstage(staged *s)
{
    if (s->tmp)
        drop_temp(-1, s->tmp);
    free(s->tmp), free(s->target);
    s->tmp = s->target = NULL;
}

/* The file a path would write: an existing file by its device and inode (stat follows links:
 * link.csv naming p.svg is p.svg), a new one by its folder's device and inode and its own name
 * (a/../p.svg is p.svg). 0 when it cannot tell (the staging then says why). */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    const char *name; /* a new file's name in its folder; NULL for an existing file */
} file_id;

static int identify(const char *path, file_id *id)
{
    struct stat st;
    if (!path || !*path)
        return 0;
    if (stat(path, &st) == 0) {
        *id = (file_id){st.st_dev, st.st_ino, NULL};
        return 1;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    int ok = dir && stat(dir, &st) == 0;
    free(dir);
    if (ok)
        *id = (file_id){st.st_dev, st.st_ino, slash ? slash + 1 : path};
    return ok;
}

static int same_file(const file_id *a, const file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && !a->name == !b->name &&
           (!a->name || !strcmp(a->name, b->name));
}

int dpas_write_outputs(const dpas_output *outs, size_t n, dpas_error *err)
{
    if (n > DPAS_MAX_OUTPUTS)
        return dpas__fail(err, DPAS_EINVAL, "outputs", "at most %d outputs at once, got %zu",
                          DPAS_MAX_OUTPUTS, n);
    /* two outputs that are one file (the same path, a link to the other, a/../b): the second
     * rename would leave the first's content lost and the other's in its place (a CSV in the
     * plot), so they are refused before anything is written */
    file_id ids[DPAS_MAX_OUTPUTS];
    int known[DPAS_MAX_OUTPUTS];
    for (size_t i = 0; i < n; i++) {
        known[i] = identify(outs[i].path, &ids[i]);
        for (size_t j = 0; known[i] && j < i; j++)
            if (known[j] && same_file(&ids[i], &ids[j])) {
                char q[160], r[160];
                return dpas__fail(err, DPAS_EINVAL, outs[i].field,
                                  "%s and %s name the same file (%s and %s); give two files",
                                  outs[j].field, outs[i].field,
                                  dpas_quote(outs[j].path, q, sizeof q),
                                  dpas_quote(outs[i].path, r, sizeof r));
            }
    }
    staged s[DPAS_MAX_OUTPUTS];
    int rc = 0;
    size_t k = 0;
    /* every content written whole first; only then is any renamed, so that a failure leaves
     * every old file as it was (a plot is never replaced beside a table that failed) */
    for (; k < n && !rc; k++)
        if ((rc = stage(outs[k].path, outs[k].field, outs[k].data, outs[k].len, &s[k], err)))
            break;
    if (rc) {
        for (size_t i = 0; i < k; i++)
            unstage(&s[i]);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (!rc && rename(s[i].tmp, s[i].target) != 0) {
            char q[160];
            rc = dpas__fail(err, DPAS_EIO, outs[i].field, "%s: cannot write %s: %s", outs[i].field,
                            dpas_quote(outs[i].path, q, sizeof q), strerror(errno));
        } else if (!rc) {
            free(s[i].tmp);
            s[i].tmp = NULL;
        }
        unstage(&s[i]);
    }
    return rc;
}

int dpas_write_output(const char *path, const char *field, const void *data, size_t len,
                      dpas_error *err)
{
    dpas_output o = {path, field, data, len};
    return dpas_write_outputs(&o, 1, err);
}
