/*
 * iobandwidth: file-system write bandwidth. Worker `worker` writes a file of
 * `file_bytes` pseudo-random bytes in `dir`, fsyncs it, then copies it to a
 * second file (fsync), that one back to the first, and so on. Writes are
 * paced to `bandwidth_bit_per_s` per worker on an absolute schedule (start +
 * bytes written × 8 / bandwidth), or unpaced when it is 0.
 *
 * Files are named `b<worker>-0` and `b<worker>-1`, so workers sharing `dir`
 * never collide; a clean stop deletes them, and the parent removes whatever
 * a kill leaves behind.
 *
 * Counters: iterations = complete files written (first file and copies);
 * bytes = bytes written; files = files created.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "expk.h"

#define BUFFER_BYTES (1u << 20)

/* Smallest pacing step: smaller writes cost more in syscalls than they smooth. */
#define MIN_STEP 4096u

struct pacer {
    uint64_t start_ns;
    uint64_t bandwidth; /* bit/s; 0: unpaced */
    uint64_t written;   /* bytes written so far */
};

/* Bytes to write before the next look at the clock: about 10 ms worth. */
static size_t pace_step(const struct pacer *p) {
    if (p->bandwidth == 0) {
        return BUFFER_BYTES;
    }
    uint64_t step = p->bandwidth / 8 / 100;
    if (step < MIN_STEP) {
        step = MIN_STEP;
    }
    return step < BUFFER_BYTES ? (size_t)step : BUFFER_BYTES;
}

/* Waits until the bytes written so far are due. Returns 1 on stop. */
static int pace_wait(const struct expk_ctx *ctx, const struct pacer *p) {
    if (p->bandwidth == 0) {
        return expk_stopped(ctx);
    }
    double due = (double)p->written * 8.0 * (double)EXPK_NS_PER_S / (double)p->bandwidth;
    return expk_sleep_until(ctx, expk_due(p->start_ns, due));
}

static int write_all(int fd, const unsigned char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Fills `buf` with the next `n` bytes of the file: fresh random data for the
 * first file, what `src` holds for a copy. */
static int next_bytes(int src, unsigned char *buf, size_t n, uint64_t *state) {
    if (src < 0) {
        expk_fill_random(buf, n, state);
        return 0;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(src, buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        if (r == 0) {
            return EIO; /* the source shrank under us */
        }
        got += (size_t)r;
    }
    return 0;
}

/* Writes one file of `file_bytes` to `dst_path`, from `src_path` or random
 * data when `src_path` is NULL. Sets *stopped when told to stop midway. */
static int write_file(const struct expk_ctx *ctx, struct pacer *pacer, const char *src_path, const char *dst_path,
                      uint64_t file_bytes, unsigned char *buf, uint64_t *state, int *stopped) {
    int src = -1;
    if (src_path != NULL) {
        src = open(src_path, O_RDONLY | O_CLOEXEC);
        if (src < 0) {
            return errno;
        }
    }
    /* O_EXCL first, to count files created rather than truncated. */
    int dst = open(dst_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int created = dst >= 0;
    if (dst < 0 && errno == EEXIST) {
        dst = open(dst_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    }
    if (dst < 0) {
        int err = errno;
        if (src >= 0) {
            close(src);
        }
        return err;
    }
    if (created) {
        expk_add(&ctx->counters->files, 1);
    }
    int err = 0;
    for (uint64_t done = 0; done < file_bytes && err == 0;) {
        if (pace_wait(ctx, pacer)) {
            *stopped = 1;
            break;
        }
        size_t n = pace_step(pacer);
        if (file_bytes - done < n) {
            n = (size_t)(file_bytes - done);
        }
        err = next_bytes(src, buf, n, state);
        if (err == 0) {
            err = write_all(dst, buf, n);
        }
        if (err == 0) {
            done += n;
            pacer->written += n;
            expk_add(&ctx->counters->bytes, n);
        }
    }
    if (err == 0 && !*stopped) {
        if (fsync(dst) != 0) {
            err = errno;
        } else {
            expk_add(&ctx->counters->iterations, 1);
        }
    }
    if (close(dst) != 0 && err == 0) {
        err = errno;
    }
    if (src >= 0) {
        close(src);
    }
    return err;
}

int expk_iobandwidth(const struct expk_ctx *ctx, const char *dir, uint32_t worker, uint64_t file_bytes,
                     uint64_t bandwidth_bit_per_s) {
    char paths[2][PATH_MAX];
    for (int i = 0; i < 2; i++) {
        int n = snprintf(paths[i], PATH_MAX, "%s/b%u-%d", dir, (unsigned)worker, i);
        if (n < 0 || n >= PATH_MAX) {
            return ENAMETOOLONG;
        }
    }
    if (file_bytes == 0) {
        return EINVAL;
    }
    unsigned char *buf = malloc(BUFFER_BYTES);
    if (buf == NULL) {
        return ENOMEM;
    }
    uint64_t state = expk_seed_state(ctx->seed);
    struct pacer pacer = {.start_ns = expk_mono_ns(), .bandwidth = bandwidth_bit_per_s, .written = 0};
    int stopped = 0;
    int err = write_file(ctx, &pacer, NULL, paths[0], file_bytes, buf, &state, &stopped);
    for (int from = 0; err == 0 && !stopped; from ^= 1) {
        err = write_file(ctx, &pacer, paths[from], paths[from ^ 1], file_bytes, buf, &state, &stopped);
    }
    free(buf);
    for (int i = 0; i < 2; i++) {
        if (unlink(paths[i]) != 0 && errno != ENOENT && err == 0) {
            err = errno;
        }
    }
    return err;
}
