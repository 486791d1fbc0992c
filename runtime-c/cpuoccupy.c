/*
 * cpuoccupy: hold the calling thread's core at `utilization` (0..1) with
 * arithmetic on pseudo-random values that stays in registers (no cache or
 * memory footprint to speak of).
 *
 * Closed loop on the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID) against
 * wall time (CLOCK_MONOTONIC), in periods of `period_ns`: each period the
 * thread computes until it has run `utilization × period` of CPU time plus
 * what it still owes, then sleeps to the period's end. Time the scheduler gives
 * to other processes is not CPU time of this thread, so it is never counted as
 * work done. What the thread could not get within a period is carried over,
 * but at most one period's worth, so a starved thread does not burst once the
 * competition goes away; a surplus (overshoot) is carried over the same way.
 *
 * Counters: iterations = pseudo-random values processed; bytes, files = 0.
 */
#define _GNU_SOURCE
#include "expk.h"

/* Values per batch: about 2 µs of work between looks at the clocks, so the
 * overshoot past a budget is negligible while clock reads stay a small cost. */
#define BATCH 1024u

/* A dependent chain of floating-point operations on fresh random values. */
static double burn(uint64_t *state, double acc) {
    for (unsigned i = 0; i < BATCH; i++) {
        uint64_t x = expk_next(state);
        acc = acc * 0.5 + (double)(x >> 11) * 0x1.0p-53;
    }
    return acc;
}

int expk_cpuoccupy(const struct expk_ctx *ctx, double utilization, uint64_t period_ns) {
    uint64_t state = expk_seed_state(ctx->seed);
    /* volatile: the result must look used, or the compiler could drop the work. */
    volatile double sink = 0.0;
    double acc = 0.0;

    if (!(utilization > 0.0)) { /* also catches NaN */
        return expk_hold(ctx);
    }
    if (utilization >= 1.0) {
        while (!expk_stopped(ctx)) {
            acc = burn(&state, acc);
            expk_add(&ctx->counters->iterations, BATCH);
        }
        sink = acc;
        return 0;
    }
    if (period_ns == 0) {
        return EINVAL;
    }

    const double period = (double)period_ns;
    const double cap = period; /* carried-over debt or surplus: at most one period */
    double debt = 0.0;         /* CPU ns owed (> 0) or run ahead (< 0) */
    uint64_t wall = expk_mono_ns();
    uint64_t cpu = expk_thread_cpu_ns();
    uint64_t period_end = wall + period_ns;

    while (!expk_stopped(ctx)) {
        double budget = utilization * period + debt;
        if (budget > 0.0) {
            uint64_t goal = cpu + (uint64_t)budget;
            do {
                acc = burn(&state, acc);
                expk_add(&ctx->counters->iterations, BATCH);
            } while (expk_thread_cpu_ns() < goal && expk_mono_ns() < period_end && !expk_stop_flag(ctx));
        }
        if (expk_sleep_until(ctx, period_end)) {
            break;
        }
        /* Settle the period against what really elapsed: wall time includes a
         * late wake-up, CPU time excludes time stolen by other processes. */
        uint64_t now_wall = expk_mono_ns();
        uint64_t now_cpu = expk_thread_cpu_ns();
        debt += utilization * (double)(now_wall - wall) - (double)(now_cpu - cpu);
        if (debt > cap) {
            debt = cap;
        } else if (debt < -cap) {
            debt = -cap;
        }
        wall = now_wall;
        cpu = now_cpu;
        period_end += period_ns;
        if (period_end <= now_wall) {
            period_end = now_wall + period_ns; /* starved for a whole period: restart the grid */
        }
    }
    sink = acc;
    (void)sink;
    return 0;
}
