/*
 * expk.h: the interface between exp-anomaly (Rust) and the C anomaly kernels.
 *
 * Every kernel is one function that runs on the calling thread until the stop
 * flag is set or the deadline passes, and adds what it did to a counters
 * struct that the Rust side reads while the kernel runs. A kernel returns 0
 * when it stopped as asked, or a positive errno value when it could not go on;
 * it never prints, exits, raises signals or starts threads. Threads, CPU
 * pinning, signals and error messages belong to the caller.
 *
 * The static inline helpers below are shared by the kernels; they are not
 * part of the FFI surface.
 */
#ifndef EXPK_H
#define EXPK_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* What a kernel did so far. Laid out exactly like the Rust side's
 * `#[repr(C)] struct KernelCounters { AtomicU64 × 3 }`: a lock-free
 * _Atomic uint64_t has the size and alignment of uint64_t on the 64-bit
 * targets we build for. Updated with relaxed atomics: readers want recent
 * totals, not ordering. */
struct expk_counters {
    _Atomic uint64_t iterations; /* kernel-specific unit of work, see each kernel */
    _Atomic uint64_t bytes;      /* bytes touched or written */
    _Atomic uint64_t files;      /* files created */
};

/* Everything every kernel needs besides its own knobs. */
struct expk_ctx {
    const _Atomic uint32_t *stop;   /* nonzero: stop as soon as possible */
    uint64_t deadline_ns;           /* CLOCK_MONOTONIC; 0 means no deadline */
    struct expk_counters *counters; /* this thread's counters */
    uint64_t seed;                  /* seeds the kernel's pseudo-random values */
};

/* Result of the STREAM-style copy benchmark (not an anomaly: it is the victim
 * that `expc calibrate interference` measures). */
struct expk_stream_result {
    uint64_t bytes;   /* bytes moved, counted as STREAM does: read + written */
    uint64_t wall_ns; /* timed part only (after the arrays were filled) */
    uint64_t cpu_ns;  /* this thread's CPU time over the same part */
    uint64_t passes;  /* complete copies of the array */
};

/* The kernels. Each documents its counters in its own file. */
int expk_cpuoccupy(const struct expk_ctx *ctx, double utilization, uint64_t period_ns);
int expk_cachecopy(const struct expk_ctx *ctx, uint64_t array_bytes, double rate, uint64_t period_ns);
int expk_membw(const struct expk_ctx *ctx, uint64_t buffer_bytes, double rate, uint64_t period_ns);
int expk_memeater(const struct expk_ctx *ctx, uint64_t step_bytes, uint64_t interval_ns, uint64_t limit_bytes);
int expk_memleak(const struct expk_ctx *ctx, uint64_t size_bytes, double rate_per_s, uint64_t limit_bytes);
int expk_iometadata(const struct expk_ctx *ctx, const char *dir, uint32_t worker, double rate_per_s);
int expk_iobandwidth(const struct expk_ctx *ctx, const char *dir, uint32_t worker, uint64_t file_bytes,
                     uint64_t bandwidth_bit_per_s);
int expk_stream_copy(const struct expk_ctx *ctx, uint64_t array_bytes, uint64_t run_ns,
                     struct expk_stream_result *out);

/* ---- shared helpers ------------------------------------------------------ */

#define EXPK_NS_PER_S 1000000000ull

/* Longest a kernel sleeps before it looks at the stop flag again: bounds how
 * long a SIGTERM takes to end a sleeping kernel, while keeping an idle
 * kernel's wake-ups (each costs CPU time on the core it holds) rare. */
#define EXPK_POLL_NS 50000000ull

static inline uint64_t expk_clock_ns(clockid_t clock) {
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * EXPK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline uint64_t expk_mono_ns(void) { return expk_clock_ns(CLOCK_MONOTONIC); }

/* CPU time this thread actually ran: time taken by other processes is not in it. */
static inline uint64_t expk_thread_cpu_ns(void) { return expk_clock_ns(CLOCK_THREAD_CPUTIME_ID); }

static inline int expk_stop_flag(const struct expk_ctx *ctx) {
    return atomic_load_explicit(ctx->stop, memory_order_relaxed) != 0;
}

/* Stop flag set or deadline passed. Reads the monotonic clock (vDSO, cheap). */
static inline int expk_stopped(const struct expk_ctx *ctx) {
    if (expk_stop_flag(ctx)) {
        return 1;
    }
    return ctx->deadline_ns != 0 && expk_mono_ns() >= ctx->deadline_ns;
}

/* Keep working in the busy part of a duty cycle? No once told to stop, past
 * the deadline or past `busy_end`. One clock read. */
static inline int expk_keep_busy(const struct expk_ctx *ctx, uint64_t busy_end) {
    if (expk_stop_flag(ctx)) {
        return 0;
    }
    uint64_t now = expk_mono_ns();
    if (ctx->deadline_ns != 0 && now >= ctx->deadline_ns) {
        return 0;
    }
    return now < busy_end;
}

/* Sleeps until `until_ns` (CLOCK_MONOTONIC, absolute, so delays do not add
 * up across calls) in slices of at most EXPK_POLL_NS. Returns 1 when told to
 * stop first, 0 when the time came. */
static inline int expk_sleep_until(const struct expk_ctx *ctx, uint64_t until_ns) {
    for (;;) {
        if (expk_stopped(ctx)) {
            return 1;
        }
        uint64_t now = expk_mono_ns();
        if (now >= until_ns) {
            return 0;
        }
        uint64_t wake = until_ns - now > EXPK_POLL_NS ? now + EXPK_POLL_NS : until_ns;
        struct timespec ts = {.tv_sec = (time_t)(wake / EXPK_NS_PER_S), .tv_nsec = (long)(wake % EXPK_NS_PER_S)};
        /* EINTR (a signal handler ran on this thread) just means: look again. */
        (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

/* Does nothing until told to stop: the "hold" phase of memory kernels, 0 %. */
static inline int expk_hold(const struct expk_ctx *ctx) {
    (void)expk_sleep_until(ctx, UINT64_MAX);
    return 0;
}

/* start + offset, saturating: a due time far in the future must not wrap
 * around into the past. `offset_ns` may be a product of user values. */
static inline uint64_t expk_due(uint64_t start_ns, double offset_ns) {
    if (!(offset_ns > 0.0)) {
        return start_ns;
    }
    if (offset_ns >= (double)(UINT64_MAX - start_ns)) {
        return UINT64_MAX;
    }
    return start_ns + (uint64_t)offset_ns;
}

static inline void expk_add(_Atomic uint64_t *counter, uint64_t n) {
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

/* SplitMix64: turns any seed (even 0) into a well-mixed nonzero state. */
static inline uint64_t expk_seed_state(uint64_t seed) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z != 0 ? z : 0x9e3779b97f4a7c15ull;
}

/* xorshift64*: fast, good enough to defeat compression and zero-page tricks. */
static inline uint64_t expk_next(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Fills `n` bytes with pseudo-random values (which also touches every page). */
static inline void expk_fill_random(void *buf, size_t n, uint64_t *state) {
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = expk_next(state);
        memcpy(p + i, &v, 8); /* memcpy: no alignment assumption; compiles to one store */
    }
    if (i < n) {
        uint64_t v = expk_next(state);
        memcpy(p + i, &v, n - i);
    }
}

/* expk_fill_random in slices of EXPK_FILL_SLICE bytes with a look at the stop
 * flag and deadline between them, so filling a buffer larger than the window
 * (cachecopy sized for 4 × a large L3) ends with the window instead of
 * overrunning it. Adds the bytes written to `written` unless it is NULL.
 * Returns 1 when told to stop before the buffer was full, 0 otherwise. */
#define EXPK_FILL_SLICE (1u << 20)

static inline int expk_fill_random_until_stopped(const struct expk_ctx *ctx, void *buf, size_t n, uint64_t *state,
                                                 _Atomic uint64_t *written) {
    unsigned char *p = buf;
    for (size_t done = 0; done < n;) {
        if (expk_stopped(ctx)) {
            return 1;
        }
        size_t slice = n - done < EXPK_FILL_SLICE ? n - done : EXPK_FILL_SLICE;
        expk_fill_random(p + done, slice, state);
        done += slice;
        if (written != NULL) {
            expk_add(written, slice);
        }
    }
    return 0;
}

/* A duty cycle: busy for `rate` of every `period_ns`, asleep for the rest.
 * Periods are laid on an absolute grid so sleep overshoot does not add up. */
struct expk_duty {
    double rate;
    uint64_t period_ns;
    uint64_t start_ns; /* start of the current period */
};

static inline void expk_duty_init(struct expk_duty *d, double rate, uint64_t period_ns) {
    d->rate = rate;
    d->period_ns = period_ns != 0 ? period_ns : 10000000ull;
    d->start_ns = expk_mono_ns();
}

/* End of the busy part of the current period. */
static inline uint64_t expk_duty_busy_end(const struct expk_duty *d) {
    if (d->rate >= 1.0) {
        return UINT64_MAX;
    }
    return d->start_ns + (uint64_t)(d->rate * (double)d->period_ns);
}

/* Sleeps out the rest of the period and moves to the next. Returns 1 on stop. */
static inline int expk_duty_rest(const struct expk_ctx *ctx, struct expk_duty *d) {
    if (d->rate >= 1.0) {
        return expk_stopped(ctx);
    }
    if (expk_sleep_until(ctx, d->start_ns + d->period_ns)) {
        return 1;
    }
    d->start_ns += d->period_ns;
    uint64_t now = expk_mono_ns();
    if (d->start_ns + d->period_ns <= now) {
        d->start_ns = now; /* fell a whole period behind (preempted): restart the grid */
    }
    return 0;
}

#endif
