/*
 * memleak: every 1 / `rate_per_s` seconds allocate `size_bytes`, fill it with
 * pseudo-random values (touching every page) and never free it while running,
 * until `limit_bytes` have leaked (the last block is cut to fit); then hold.
 *
 * Step k is due at start + k / rate (computed from k, not by adding up
 * intervals), so neither rounding nor late wake-ups accumulate and the
 * resident set grows at the configured rate. The blocks are chained through
 * their first word so they can be freed when the kernel returns: a process
 * ends anyway, but the kernel also runs inside test processes.
 *
 * Counters: iterations = leak steps; bytes = bytes leaked (all filled).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "expk.h"

static void free_chain(void *head) {
    while (head != NULL) {
        void *next;
        memcpy(&next, head, sizeof next);
        free(head);
        head = next;
    }
}

int expk_memleak(const struct expk_ctx *ctx, uint64_t size_bytes, double rate_per_s, uint64_t limit_bytes) {
    if (size_bytes < sizeof(void *) || !(rate_per_s > 0.0) || limit_bytes == 0) {
        return EINVAL;
    }
    if (size_bytes > SIZE_MAX) {
        return ENOMEM;
    }
    const double interval_ns = (double)EXPK_NS_PER_S / rate_per_s;
    uint64_t state = expk_seed_state(ctx->seed);
    uint64_t start = expk_mono_ns();
    uint64_t leaked = 0;
    void *head = NULL;

    for (uint64_t k = 0; limit_bytes - leaked >= sizeof(void *); k++) {
        if (expk_sleep_until(ctx, expk_due(start, (double)k * interval_ns))) {
            free_chain(head);
            return 0;
        }
        uint64_t n = limit_bytes - leaked < size_bytes ? limit_bytes - leaked : size_bytes;
        unsigned char *block = malloc((size_t)n);
        if (block == NULL) {
            free_chain(head);
            return ENOMEM;
        }
        expk_fill_random(block, (size_t)n, &state);
        memcpy(block, &head, sizeof head);
        head = block;
        leaked += n;
        expk_add(&ctx->counters->iterations, 1);
        expk_add(&ctx->counters->bytes, n);
    }
    expk_hold(ctx);
    free_chain(head);
    return 0;
}
