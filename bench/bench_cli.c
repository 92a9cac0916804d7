/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI's start-to-exit time: runs a command N times (fork, exec, wait, stdout to /dev/null)
 * and prints the median, min and max wall time in milliseconds.
 * Usage: bench_cli N PROGRAM [ARGS...] */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "clock.h"
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_cli N PROGRAM [ARGS...]\n");
        return 1;
    }
    int n = atoi(argv[1]);
    if (n < 1)
        n = 1;
    double *t = malloc(sizeof *t * (size_t)n);
    if (!t)
        return 1;
    for (int i = 0; i < n; i++) {
        double t0 = now();
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        t[i] = (now() - t0) * 1e3;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "bench_cli: %s failed\n", argv[2]);
            free(t);
            return 1;
        }
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("runs %d  median_ms %.3f  min_ms %.3f  max_ms %.3f\n", n, t[n / 2], t[0], t[n - 1]);
    free(t);
    return 0;
}
