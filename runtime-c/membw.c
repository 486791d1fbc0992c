/*
 * membw: memory-bandwidth contention. Two square matrices of 16-byte cells,
 * together `buffer_bytes`: `dst` is written as the transpose of `src`, over
 * and over. The writes are non-temporal stores (SSE2 `_mm_stream_si128`, part
 * of every x86_64 CPU): they go to memory through write-combining buffers
 * instead of through the caches, so every byte written is a byte of DRAM
 * bandwidth, and the caches are left to whoever else runs.
 *
 * The transpose goes in tiles of TILE × TILE cells: a tile's source rows
 * (TILE segments of TILE cells, 64 KiB) stay in L1/L2 while its destination
 * rows are written, each as TILE contiguous cells, i.e. whole cache lines
 * the write-combining buffers can send out in one go. A naive transpose that
 * walks a source column would pay a TLB miss for every cell and reach a
 * fraction of the bandwidth (HPAS's membw instead streams 8-byte stores down
 * columns, which costs one partial-line memory transaction per store).
 *
 * On other architectures the stores are plain 16-byte copies (documented
 * fallback: still bandwidth-bound for matrices far larger than the caches,
 * but they do go through the cache).
 *
 * `rate` (0..1) is the busy fraction of every `period_ns`.
 *
 * Counters: iterations = complete transposes; bytes = bytes written to dst.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#include "expk.h"

#ifdef __x86_64__
#include <emmintrin.h>
#endif

#define TILE 64u

typedef struct {
    uint64_t lo, hi;
} cell;

#ifdef __x86_64__
static inline void store_cell(cell *dst, const cell *src) {
    _mm_stream_si128((__m128i *)dst, _mm_load_si128((const __m128i *)src));
}
static void store_fence(void) { _mm_sfence(); } /* make the streamed rows globally visible */
#else
static inline void store_cell(cell *dst, const cell *src) { *dst = *src; }
static void store_fence(void) { atomic_thread_fence(memory_order_release); }
#endif

/* Matrices start on 2 MiB boundaries and ask for transparent huge pages: the
 * tiles' reads span TILE rows far apart, and huge pages keep those in the TLB. */
#define HUGE_PAGE (2u << 20)

static cell *alloc_matrix(size_t bytes) {
    size_t rounded = (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    if (rounded < bytes) {
        return NULL;
    }
    void *p = aligned_alloc(HUGE_PAGE, rounded);
#ifdef MADV_HUGEPAGE
    if (p != NULL) {
        (void)madvise(p, rounded, MADV_HUGEPAGE); /* a hint: without it, only slower */
    }
#endif
    return p;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Destination rows row0 .. row0 + TILE - 1, tile by tile: dst[i][j] = src[j][i]. */
static void transpose_band(cell *restrict dst, const cell *restrict src, uint64_t n, uint64_t row0) {
    uint64_t row_end = min_u64(row0 + TILE, n);
    for (uint64_t col0 = 0; col0 < n; col0 += TILE) {
        uint64_t col_end = min_u64(col0 + TILE, n);
        for (uint64_t i = row0; i < row_end; i++) {
            cell *out = &dst[i * n];
            for (uint64_t j = col0; j < col_end; j++) {
                store_cell(&out[j], &src[j * n + i]);
            }
        }
    }
}

/* floor(sqrt(x)) without libm: Newton's method on integers. */
static uint64_t isqrt(uint64_t x) {
    if (x < 2) {
        return x;
    }
    uint64_t r = x / 2 + 1;
    uint64_t next = (r + x / r) / 2;
    while (next < r) {
        r = next;
        next = (r + x / r) / 2;
    }
    return r;
}

int expk_membw(const struct expk_ctx *ctx, uint64_t buffer_bytes, double rate, uint64_t period_ns) {
    /* n × n cells per matrix, two matrices within buffer_bytes. */
    uint64_t n = isqrt(buffer_bytes / 2 / sizeof(cell));
    if (n < 2) {
        return EINVAL;
    }
    size_t matrix = (size_t)(n * n * sizeof(cell));
    cell *src = alloc_matrix(matrix);
    cell *dst = alloc_matrix(matrix);
    if (src == NULL || dst == NULL) {
        free(src);
        free(dst);
        return ENOMEM;
    }
    uint64_t state = expk_seed_state(ctx->seed);
    /* Fault the pages in now, not inside the timed loop; a fill longer than
     * the window ends with it. Not counted: the counters are dst's streamed bytes. */
    if (expk_fill_random_until_stopped(ctx, src, matrix, &state, NULL) ||
        expk_fill_random_until_stopped(ctx, dst, matrix, &state, NULL)) {
        free(src);
        free(dst);
        return 0;
    }

    if (!(rate > 0.0)) {
        expk_hold(ctx);
        free(src);
        free(dst);
        return 0;
    }

    struct expk_duty duty;
    expk_duty_init(&duty, rate, period_ns);
    uint64_t row = 0;
    for (;;) {
        uint64_t busy_end = expk_duty_busy_end(&duty);
        do {
            /* One band of TILE rows between looks at the clock: n × TILE × 16 bytes. */
            transpose_band(dst, src, n, row);
            uint64_t rows = min_u64(TILE, n - row);
            expk_add(&ctx->counters->bytes, rows * n * sizeof(cell));
            row += rows;
            if (row == n) {
                row = 0;
                store_fence();
                expk_add(&ctx->counters->iterations, 1);
            }
        } while (expk_keep_busy(ctx, busy_end));
        store_fence();
        if (expk_duty_rest(ctx, &duty)) {
            break;
        }
    }
    free(src);
    free(dst);
    return 0;
}
