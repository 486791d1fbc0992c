/*
 * iometadata: file-system metadata load. Worker `worker` repeats, in `dir`:
 * create a file (open with O_CREAT | O_EXCL, close), open it again, write one
 * byte, close it; after every 10th file it deletes the last ten. Iterations
 * are paced to `rate_per_s` per worker on an absolute schedule (start + k /
 * rate), or run back to back when `rate_per_s` is not positive.
 *
 * Files are named `m<worker>-<k>`, so workers sharing `dir` never collide.
 * On a clean stop the worker deletes the files it still has; whatever a kill
 * leaves behind, the parent removes with the directory.
 *
 * Counters: iterations = files created, written and closed; bytes = bytes
 * written; files = files created.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "expk.h"

#define DELETE_EVERY 10u

static int file_path(char *out, size_t cap, const char *dir, uint32_t worker, uint64_t k) {
    int n = snprintf(out, cap, "%s/m%u-%llu", dir, (unsigned)worker, (unsigned long long)k);
    return n < 0 || (size_t)n >= cap ? ENAMETOOLONG : 0;
}

/* Deletes files first..last-1; a file already gone is not an error. */
static int delete_files(const char *dir, uint32_t worker, uint64_t first, uint64_t last) {
    char path[PATH_MAX];
    for (uint64_t k = first; k < last; k++) {
        int err = file_path(path, sizeof path, dir, worker, k);
        if (err != 0) {
            return err;
        }
        if (unlink(path) != 0 && errno != ENOENT) {
            return errno;
        }
    }
    return 0;
}

/* One iteration: create, open, write a byte, close. */
static int touch_file(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return errno;
    }
    if (close(fd) != 0) {
        return errno;
    }
    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno;
    }
    ssize_t written;
    do {
        written = write(fd, "x", 1);
    } while (written < 0 && errno == EINTR);
    int err = written == 1 ? 0 : (written < 0 ? errno : EIO);
    if (close(fd) != 0 && err == 0) {
        err = errno;
    }
    return err;
}

int expk_iometadata(const struct expk_ctx *ctx, const char *dir, uint32_t worker, double rate_per_s) {
    char path[PATH_MAX];
    const int paced = rate_per_s > 0.0;
    const double interval_ns = paced ? (double)EXPK_NS_PER_S / rate_per_s : 0.0;
    uint64_t start = expk_mono_ns();
    uint64_t k = 0;
    int err = 0;

    for (;;) {
        if (paced ? expk_sleep_until(ctx, expk_due(start, (double)k * interval_ns)) : expk_stopped(ctx)) {
            break;
        }
        err = file_path(path, sizeof path, dir, worker, k);
        if (err == 0) {
            err = touch_file(path);
        }
        if (err != 0) {
            break;
        }
        k++;
        expk_add(&ctx->counters->iterations, 1);
        expk_add(&ctx->counters->bytes, 1);
        expk_add(&ctx->counters->files, 1);
        if (k % DELETE_EVERY == 0) {
            err = delete_files(dir, worker, k - DELETE_EVERY, k);
            if (err != 0) {
                break;
            }
        }
    }
    /* Files since the last batch delete; on failure too, but the first error wins. */
    uint64_t first = k - k % DELETE_EVERY;
    int cleanup = delete_files(dir, worker, first, k + 1);
    return err != 0 ? err : cleanup;
}
