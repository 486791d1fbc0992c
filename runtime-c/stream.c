/*
 * stream: a STREAM-style "Copy" loop (c[i] = a[i] over arrays far larger
 * than the caches), the victim whose throughput `expc calibrate interference`
 * measures alone and next to membw or cachecopy. Not an anomaly.
 *
 * Runs for `run_ns` after both arrays are filled (the fill faults the pages
 * in and is not timed), or until the stop flag. The copy goes in chunks of
 * CHUNK bytes with memcpy: the same instructions in every run, and below
 * glibc's threshold for non-temporal stores, like STREAM's own loop.
 * Bytes are counted as STREAM counts them: each byte copied is read once and
 * written once, so 2 × bytes copied.
 *
 * Counters: iterations = complete copies; bytes = as in `out->bytes`.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "expk.h"

#define CHUNK (256u * 1024u)

int expk_stream_copy(const struct expk_ctx *ctx, uint64_t array_bytes, uint64_t run_ns,
                     struct expk_stream_result *out) {
    memset(out, 0, sizeof *out);
    uint64_t rounded = (array_bytes + 63u) & ~(uint64_t)63u;
    if (array_bytes == 0 || rounded < array_bytes || rounded > SIZE_MAX) {
        return EINVAL;
    }
    unsigned char *a = aligned_alloc(64, (size_t)rounded);
    unsigned char *c = aligned_alloc(64, (size_t)rounded);
    if (a == NULL || c == NULL) {
        free(a);
        free(c);
        return ENOMEM;
    }
    uint64_t state = expk_seed_state(ctx->seed);
    expk_fill_random(a, (size_t)array_bytes, &state);
    memset(c, 0, (size_t)array_bytes);

    uint64_t wall0 = expk_mono_ns();
    uint64_t cpu0 = expk_thread_cpu_ns();
    uint64_t end = expk_due(wall0, (double)run_ns);
    uint64_t offset = 0;
    while (expk_keep_busy(ctx, end)) {
        uint64_t n = array_bytes - offset < CHUNK ? array_bytes - offset : CHUNK;
        memcpy(c + offset, a + offset, (size_t)n);
        out->bytes += 2 * n;
        expk_add(&ctx->counters->bytes, 2 * n);
        offset += n;
        if (offset == array_bytes) {
            offset = 0;
            out->passes++;
            expk_add(&ctx->counters->iterations, 1);
        }
    }
    out->wall_ns = expk_mono_ns() - wall0;
    out->cpu_ns = expk_thread_cpu_ns() - cpu0;
    free(a);
    free(c);
    return 0;
}
