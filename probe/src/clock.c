/*
 * The probe's clocks (part of the core, core.h): CLOCK_MONOTONIC through
 * the CPU's counter where the kernel trusts it, for callback timing,
 * message gaps and links. The hot reads are inline in core.h (rp_clock_ns);
 * here are the calibration, the anchor's renewal and the gap clock.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

/*
 * clock_gettime costs ~32 ns here even through the vDSO; two per callback
 * would be most of the budget (docs/PERFORMANCE.md). The CPU's own counter
 * (x86 TSC, arm64 CNTVCT) costs a third of that. Ticks become CLOCK_MONOTONIC
 * ns through a per-thread anchor (a tick count and the monotonic time read
 * together) and a process-wide rate measured from the clock itself: the
 * first reading 20 ms after an anchor calibrates it, and every thread
 * re-anchors about once a second (one clock_gettime), so NTP slew and rate
 * error never build up. Where the kernel does not trust the counter (its
 * clocksource is not tsc), or before calibration, every reading is a
 * clock_gettime.
 */
#define REANCHOR_TICKS (UINT64_C(1) << 30) /* ~0.3-1 s of TSC, much longer of CNTVCT: capped by REANCHOR_NS too */
#define REANCHOR_NS UINT64_C(1000000000)
#define CALIBRATE_NS UINT64_C(20000000)
/* A clock_gettime read between two counter reads further apart than this was
 * preempted (or met cold caches): its pairing is off by up to half the gap,
 * so it never calibrates the rate (a preemption of a few µs once made a 5 ms
 * calibration 826 ppm fast). 4,096 ticks: 1.4-4 µs of a 1-3 GHz TSC, at
 * most 100-200 ppm over 20 ms at the worst. */
#define PAIR_MAX_TICKS 4096u

bool g_ticks_usable;        /* set once by rp_clock_init */
static bool g_rate_fixed;  /* the counter states its own frequency (arm64): never recalibrated */

__thread struct rp_tls_line rp_tls_line;
__thread struct rp_open_callback rp_tls_stack[RP_STACK_MAX];

void rp_clock_init(void)
{
#if defined(__x86_64__) && defined(RP_BENCH_TRUST_TICKS)
    g_ticks_usable = true; /* the benchmarks' build only (Makefile: TICKS_LIB): the TSC's path on a kvm-clock VM */
#elif defined(__x86_64__)
    char buf[16] = {0};
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        g_ticks_usable = n >= 3 && strncmp(buf, "tsc", 3) == 0;
        close(fd);
    }
#elif defined(__aarch64__)
    /* The generic timer is architecturally monotonic, shared by all cores, and
     * says its frequency: the rate is exact, no calibration (and none under an
     * emulator whose clock reads are slow and uneven). */
    uint64_t freq;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
    if (freq > 0) {
        atomic_store_explicit(&g_hot.ns_per_tick_q32, (uint64_t)(((unsigned __int128)1000000000u << 32) / freq),
                              memory_order_relaxed);
        g_rate_fixed = g_ticks_usable = true;
    }
#endif
}

/* A clock_gettime reading; it calibrates the tick rate and renews this thread's anchor when due. */
RP_COLD uint64_t rp_clock_slow(uint64_t t)
{
    uint64_t mono = rp_mono_ns();
    if (!g_ticks_usable)
        return mono;
    bool clean = false; /* arm64's counter states its own rate: its pairings never calibrate */
    if (!g_rate_fixed) {
        uint64_t t2 = rp_ticks();
        clean = t2 >= t && t2 - t <= PAIR_MAX_TICKS;
        if (t2 >= t)
            t += (t2 - t) / 2; /* the counter when the clock was read, within half the pair's gap */
    }
    uint64_t rate = atomic_load_explicit(&g_hot.ns_per_tick_q32, memory_order_relaxed);
    if (rp_tls_line.anchor.tick != 0 && t > rp_tls_line.anchor.tick && mono > rp_tls_line.anchor.mono) {
        uint64_t dm = mono - rp_tls_line.anchor.mono;
        if (rate == 0 && (dm < CALIBRATE_NS || !clean))
            return mono; /* too soon, or a pairing too loose to calibrate from: keep the anchor */
        if (dm >= CALIBRATE_NS && !g_rate_fixed && clean && rp_tls_line.anchor_clean) {
            rate = (uint64_t)(((unsigned __int128)dm << 32) / (t - rp_tls_line.anchor.tick));
            atomic_store_explicit(&g_hot.ns_per_tick_q32, rate, memory_order_relaxed);
        }
    } else if (!clean && !g_rate_fixed && rate == 0) {
        return mono; /* the first anchor of an uncalibrated clock must be one it can calibrate from */
    }
    /* Calibrated, an anchor only offsets readings by its pairing's error (both ends of a
     * callback share it), so a loose pairing still anchors; it just never calibrates. */
    rp_tls_line.anchor_clean = clean;
    uint64_t span = rate != 0 ? (uint64_t)(((unsigned __int128)REANCHOR_NS << 32) / rate) : REANCHOR_TICKS;
    rp_tls_line.anchor.tick = t;
    rp_tls_line.anchor.mono = mono;
    rp_tls_line.anchor.limit = span < REANCHOR_TICKS ? span : REANCHOR_TICKS;
    return mono;
}

/*
 * A message gap's clock (design note 0026): its reading is compared with
 * another thread's (the topic's previous message may have come from any
 * thread), so the counter serves only through an anchor whose pairing was
 * clean (within PAIR_MAX_TICKS): a loose pairing offsets this thread's
 * readings by up to half its pair's gap, which the two ends of one callback
 * share but two threads do not. A loose anchor that is still valid is left
 * to the callbacks it times, and the gap reads clock_gettime (so on arm64,
 * whose pairings are never judged, too); a missing or expired one is renewed
 * here as now_ns would (a publisher's thread may time no callback at all).
 */
RP_HOT uint64_t rp_gap_clock_ns(void)
{
    if (!g_ticks_usable)
        return rp_mono_ns() | RP_CLOCK_ANCHORED; /* what now_ns returns too */
    uint64_t t = rp_ticks();
    uint64_t ns = rp_from_anchor(t);
    if (LIKELY(ns != 0))
        return LIKELY(rp_tls_line.anchor_clean) ? ns | RP_CLOCK_ANCHORED : rp_mono_ns() & ~RP_CLOCK_ANCHORED;
    return rp_clock_slow(t) | RP_CLOCK_ANCHORED; /* what now_ns would have returned */
}
