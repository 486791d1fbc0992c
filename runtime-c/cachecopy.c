/*
 * cachecopy: two arrays of `array_bytes` each (the caller sizes them to half
 * a cache level × multiplier), copied into each other over and over, so the
 * core's cache holds them and not its other users' data. `rate` (0..1) is
 * the busy fraction of every `period_ns`.
 *
 * The copy goes in chunks of at most CHUNK bytes: short enough to look at the
 * clock often, and far below the size where glibc's memcpy switches to
 * non-temporal stores, which would bypass the very cache we want to fill.
 *
 * Counters: iterations = complete copies of one array into the other;
 * bytes = bytes written: both arrays' fill with pseudo-random values (ended
 * early if the window ends first), then every byte copied.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "expk.h"

#define CHUNK (64u * 1024u)

/* Cache-line aligned, size rounded up to whole lines (aligned_alloc wants a multiple). */
static unsigned char *alloc_lines(uint64_t bytes) {
    uint64_t rounded = (bytes + 63u) & ~(uint64_t)63u;
    if (rounded < bytes || rounded > SIZE_MAX) {
        return NULL;
    }
    return aligned_alloc(64, (size_t)rounded);
}

int expk_cachecopy(const struct expk_ctx *ctx, uint64_t array_bytes, double rate, uint64_t period_ns) {
    if (array_bytes == 0) {
        return EINVAL;
    }
    unsigned char *a = alloc_lines(array_bytes);
    unsigned char *b = alloc_lines(array_bytes);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return ENOMEM;
    }
    uint64_t state = expk_seed_state(ctx->seed);
    /* The fill is the first pass through the arrays and counts as written
     * bytes: with arrays of 4 × a large L3 it can take the whole window. */
    if (expk_fill_random_until_stopped(ctx, a, (size_t)array_bytes, &state, &ctx->counters->bytes) ||
        expk_fill_random_until_stopped(ctx, b, (size_t)array_bytes, &state, &ctx->counters->bytes)) {
        free(a);
        free(b);
        return 0;
    }

    if (!(rate > 0.0)) {
        expk_hold(ctx);
        free(a);
        free(b);
        return 0;
    }

    struct expk_duty duty;
    expk_duty_init(&duty, rate, period_ns);
    unsigned char *src = a, *dst = b;
    uint64_t offset = 0;
    for (;;) {
        uint64_t busy_end = expk_duty_busy_end(&duty);
        do {
            uint64_t n = array_bytes - offset < CHUNK ? array_bytes - offset : CHUNK;
            memcpy(dst + offset, src + offset, (size_t)n);
            expk_add(&ctx->counters->bytes, n);
            offset += n;
            if (offset == array_bytes) {
                offset = 0;
                unsigned char *t = src;
                src = dst;
                dst = t;
                expk_add(&ctx->counters->iterations, 1);
            }
        } while (expk_keep_busy(ctx, busy_end));
        if (expk_duty_rest(ctx, &duty)) {
            break;
        }
    }
    free(a);
    free(b);
    return 0;
}
