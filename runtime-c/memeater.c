/*
 * memeater: allocate `step_bytes` and fill it with pseudo-random values, then
 * every `interval_ns` grow the block by another `step_bytes` with realloc and
 * fill the new part, until it reaches `limit_bytes` (the last step is cut to
 * fit); then hold the memory until told to stop.
 *
 * Steps are due at start + k × interval (absolute), so a slow fill or a late
 * wake-up delays one step, not all that follow. Filling with random values
 * touches every page, so each step shows in the resident set, and no
 * zero-page or compression trick can make it cheaper.
 *
 * Counters: iterations = allocation steps (the first one included);
 * bytes = bytes filled, i.e. the current size of the block.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "expk.h"

int expk_memeater(const struct expk_ctx *ctx, uint64_t step_bytes, uint64_t interval_ns, uint64_t limit_bytes) {
    if (step_bytes == 0 || interval_ns == 0 || limit_bytes == 0) {
        return EINVAL;
    }
    if (limit_bytes > SIZE_MAX) {
        return ENOMEM;
    }
    uint64_t state = expk_seed_state(ctx->seed);
    uint64_t start = expk_mono_ns();
    uint64_t size = step_bytes < limit_bytes ? step_bytes : limit_bytes;
    unsigned char *block = malloc((size_t)size);
    if (block == NULL) {
        return ENOMEM;
    }
    expk_fill_random(block, (size_t)size, &state);
    expk_add(&ctx->counters->iterations, 1);
    expk_add(&ctx->counters->bytes, size);

    for (uint64_t k = 1; size < limit_bytes; k++) {
        if (expk_sleep_until(ctx, expk_due(start, (double)k * (double)interval_ns))) {
            free(block);
            return 0;
        }
        uint64_t grown = limit_bytes - size > step_bytes ? size + step_bytes : limit_bytes;
        unsigned char *bigger = realloc(block, (size_t)grown);
        if (bigger == NULL) {
            free(block);
            return ENOMEM;
        }
        block = bigger;
        expk_fill_random(block + size, (size_t)(grown - size), &state);
        expk_add(&ctx->counters->iterations, 1);
        expk_add(&ctx->counters->bytes, grown - size);
        size = grown;
    }
    expk_hold(ctx);
    free(block);
    return 0;
}
