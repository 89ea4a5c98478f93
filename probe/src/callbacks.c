/*
 * Callback and timer timing (ABI 1.4, design note 0018): how long each
 * callback runs, how late each timer is called, and how busy each thread is.
 *
 * callback_start (counted in probe.c) hands its endpoint here; this file
 * keeps a small per-thread stack of the callbacks open on the thread, so a
 * callback_end pairs with its own start however callbacks nest (a spin
 * inside a callback), and a start whose end never comes (an exception, a
 * deferred service response on Humble and Jazzy) is found abandoned rather
 * than timed. One read of the CPU's counter at the start, one at the end
 * (the clock below); nothing here touches the publish path.
 *
 * Timers: rcl_timer_call (rclcpp on Humble, rclpy) and
 * rcl_timer_call_with_info (Jazzy+) are wrapped to see each call against the
 * timer's own schedule, from rcl itself: the info's expected and actual call
 * times, or the time until the next call just before a plain call.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe_internal.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define STACK_MAX 16u

/* ---------------------------------------------------------------- the timing clock
 *
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

static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

static bool g_ticks_usable;         /* set once by rp_timing_clock_init */
static bool g_rate_fixed;           /* the counter states its own frequency (arm64): never recalibrated */

struct open_callback {
    const void *callback;
    uint64_t start_ns;
    struct rp_timing *timing;
    struct rp_link_input in; /* the message it was started for (links.c); in.ep 0: none */
};

/*
 * What a callback's start and end, a wait and a timer call read of this
 * thread, in one cache line (each message finds it cold; PERFORMANCE §14).
 */
static __thread struct tls_callbacks {
    struct {
        uint64_t tick, mono, limit; /* limit: ticks after which the anchor is renewed */
    } anchor;
    uint32_t depth;                 /* callbacks open in stack[] */
    bool in_timer_call;             /* Jazzy's rcl_timer_call calls rcl_timer_call_with_info */
    bool anchor_clean;              /* the anchor's pairing may calibrate the rate (PAIR_MAX_TICKS) */
    _Atomic uint64_t *stack_lanes;  /* the segment stack[] belongs to */
    struct rp_thread *thread;       /* this thread's RP_SECTION_THREADS record, NULL on the shared lane */
    _Atomic uint64_t *thread_lanes; /* the segment thread belongs to */
} tls_cb __attribute__((aligned(64)));
_Static_assert(sizeof(struct tls_callbacks) <= 64, "tls_cb fits one cache line");

void rp_timing_clock_init(void)
{
#if defined(__x86_64__)
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
RP_COLD static uint64_t now_slow(uint64_t t)
{
    uint64_t mono = rp_mono_ns();
    if (!g_ticks_usable)
        return mono;
    bool clean = false; /* arm64's counter states its own rate: its pairings never calibrate */
    if (!g_rate_fixed) {
        uint64_t t2 = ticks();
        clean = t2 >= t && t2 - t <= PAIR_MAX_TICKS;
        if (t2 >= t)
            t += (t2 - t) / 2; /* the counter when the clock was read, within half the pair's gap */
    }
    uint64_t rate = atomic_load_explicit(&g_hot.ns_per_tick_q32, memory_order_relaxed);
    if (tls_cb.anchor.tick != 0 && t > tls_cb.anchor.tick && mono > tls_cb.anchor.mono) {
        uint64_t dm = mono - tls_cb.anchor.mono;
        if (rate == 0 && (dm < CALIBRATE_NS || !clean))
            return mono; /* too soon, or a pairing too loose to calibrate from: keep the anchor */
        if (dm >= CALIBRATE_NS && !g_rate_fixed && clean && tls_cb.anchor_clean) {
            rate = (uint64_t)(((unsigned __int128)dm << 32) / (t - tls_cb.anchor.tick));
            atomic_store_explicit(&g_hot.ns_per_tick_q32, rate, memory_order_relaxed);
        }
    } else if (!clean && !g_rate_fixed && rate == 0) {
        return mono; /* the first anchor of an uncalibrated clock must be one it can calibrate from */
    }
    /* Calibrated, an anchor only offsets readings by its pairing's error (both ends of a
     * callback share it), so a loose pairing still anchors; it just never calibrates. */
    tls_cb.anchor_clean = clean;
    uint64_t span = rate != 0 ? (uint64_t)(((unsigned __int128)REANCHOR_NS << 32) / rate) : REANCHOR_TICKS;
    tls_cb.anchor.tick = t;
    tls_cb.anchor.mono = mono;
    tls_cb.anchor.limit = span < REANCHOR_TICKS ? span : REANCHOR_TICKS;
    return mono;
}

/* Counter value t in CLOCK_MONOTONIC ns through this thread's anchor; 0 when
 * the anchor cannot serve it (rate not calibrated, no anchor, or expired). */
static inline uint64_t from_anchor(uint64_t t)
{
    uint64_t rate = atomic_load_explicit(&g_hot.ns_per_tick_q32, memory_order_relaxed);
    uint64_t dt = t - tls_cb.anchor.tick;
    if (LIKELY(rate != 0 && tls_cb.anchor.tick != 0 && t >= tls_cb.anchor.tick && dt < tls_cb.anchor.limit))
        return tls_cb.anchor.mono + (uint64_t)(((unsigned __int128)dt * rate) >> 32);
    return 0;
}

/* CLOCK_MONOTONIC ns, from the tick counter when it is calibrated. */
static inline uint64_t now_ns(void)
{
    if (!g_ticks_usable) /* e.g. kvm-clock: the counter is never read, so skip it and the anchor */
        return rp_mono_ns();
    uint64_t t = ticks();
    uint64_t ns = from_anchor(t);
    return LIKELY(ns != 0) ? ns : now_slow(t);
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
    uint64_t t = ticks();
    uint64_t ns = from_anchor(t);
    if (LIKELY(ns != 0))
        return LIKELY(tls_cb.anchor_clean) ? ns | RP_CLOCK_ANCHORED : rp_mono_ns() & ~RP_CLOCK_ANCHORED;
    return now_slow(t) | RP_CLOCK_ANCHORED; /* what now_ns would have returned */
}

/* The callbacks open on this thread, outermost first; valid for the segment mapped at tls_cb.stack_lanes. */
static __thread struct open_callback tls_stack[STACK_MAX];

uint64_t rp_now_ns(void) { return now_ns(); }

/* The open callbacks are now the first d: a link input armed deeper is closed. */
static inline void set_depth(uint32_t d)
{
    tls_cb.depth = d;
    if (UNLIKELY(rp_link_tls.armed > d) && rp_link_tls.armed != RP_LINK_ARMED_PY)
        rp_link_tls.armed = 0;
}

struct rp_link_input *rp_innermost_input(uint64_t *start_ns)
{
    if (tls_cb.depth == 0 || tls_cb.stack_lanes != rp_lanes())
        return NULL;
    *start_ns = tls_stack[tls_cb.depth - 1].start_ns;
    return &tls_stack[tls_cb.depth - 1].in;
}


/* ---------------------------------------------------------------- thread records (single writer: seqlock) */

/* seq goes odd. The record's stores that follow are release stores (plain
 * moves on x86 and arm64's stlr): none can be seen before this one. */
static inline void seq_begin(struct rp_thread *r)
{
    atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline void seq_end(struct rp_thread *r)
{
    atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1, memory_order_release);
}

/* Claims this thread's record in the segment at lanes (tid and name written). */
RP_COLD static struct rp_thread *claim_thread_record(_Atomic uint64_t *lanes)
{
    tls_cb.thread_lanes = lanes;
    tls_cb.thread = NULL;
    int32_t lane = rp_private_lane();
    if (lane < 0 || g_seg.threads == NULL)
        return NULL;
    struct rp_thread *r = &g_seg.threads[lane];
    char name[16] = {0};
    pthread_getname_np(pthread_self(), name, sizeof name);
    seq_begin(r);
    r->tid = (int32_t)syscall(SYS_gettid);
    memcpy(r->name, name, sizeof name);
    /* a previous holder that exited inside a callback or a wait left it open: it is over */
    atomic_store_explicit(&r->open_ns, 0, memory_order_release);
    atomic_store_explicit(&r->wait_open_ns, 0, memory_order_release);
    seq_end(r);
    tls_cb.thread = r;
    return r;
}

/* This thread's record, claimed on first use in this segment. */
static inline struct rp_thread *thread_record(_Atomic uint64_t *lanes)
{
    if (LIKELY(tls_cb.thread_lanes == lanes))
        return tls_cb.thread;
    return claim_thread_record(lanes);
}

RP_HOT static void thread_open(_Atomic uint64_t *lanes, uint64_t now, uint32_t endpoint)
{
    struct rp_thread *r = thread_record(lanes);
    if (r == NULL)
        return;
    seq_begin(r);
    r->endpoint_index = endpoint; /* the slot, not its node: no load of the endpoint record here */
    atomic_store_explicit(&r->open_ns, now, memory_order_release);
    seq_end(r);
}

/* The outermost callback ended at end_ns (an abandoned one: at its start, so it adds nothing). */
RP_HOT static void thread_close(_Atomic uint64_t *lanes, uint64_t end_ns)
{
    struct rp_thread *r = thread_record(lanes);
    if (r == NULL)
        return;
    uint64_t open = atomic_load_explicit(&r->open_ns, memory_order_relaxed);
    seq_begin(r);
    if (open != 0 && end_ns > open)
        atomic_store_explicit(&r->busy_ns, atomic_load_explicit(&r->busy_ns, memory_order_relaxed) + (end_ns - open),
                              memory_order_release);
    atomic_store_explicit(&r->open_ns, 0, memory_order_release);
    atomic_store_explicit(&r->callbacks, atomic_load_explicit(&r->callbacks, memory_order_relaxed) + 1,
                          memory_order_release);
    seq_end(r);
}

/* ---------------------------------------------------------------- callbacks */

/* Entries from..depth-1 never saw their end: counted as abandoned, not timed. */
RP_COLD static void abandon_from(_Atomic uint64_t *lanes, uint32_t from)
{
    for (uint32_t k = from; k < tls_cb.depth; k++)
        atomic_fetch_add_explicit(&tls_stack[k].timing->unended, 1, memory_order_relaxed);
    if (from == 0 && tls_cb.depth > 0)
        thread_close(lanes, tls_stack[0].start_ns);
    set_depth(from);
}

/* The hint of the endpoint whose timing record t is, when warm (rp_warm_hint), else NULL. */
static inline struct rp_ep_hint *warm_hint_of(const struct rp_timing *t)
{
    return rp_warm_hint((uint64_t)(t - g_seg.timing) + 1);
}

RP_HOT uint32_t rp_hint_publisher(uintptr_t pub, uint64_t pub_ep, uint32_t gap_bucket)
{
    struct rp_ep_hint *h;
    if (tls_cb.depth > 0 && tls_cb.stack_lanes == rp_lanes())
        h = warm_hint_of(tls_stack[tls_cb.depth - 1].timing); /* the timed callback open on this thread */
    else /* no timed callback (timing off, or rclpy's, which fire no callback_start): the one fetched early */
        h = rp_ep_hint(rp_hinted_ep);
    if (h == NULL)
        return 0;
    if (atomic_load_explicit(&h->publisher, memory_order_relaxed) != pub)
        atomic_store_explicit(&h->publisher, pub, memory_order_relaxed);
    if (atomic_load_explicit(&h->publisher_ep, memory_order_relaxed) != pub_ep)
        atomic_store_explicit(&h->publisher_ep, (uint32_t)pub_ep, memory_order_relaxed);
    if (g_seg.gaps != NULL)
        rp_hint_bucket(&h->publisher_gap_bucket, g_seg.gaps[pub_ep - 1].buckets, gap_bucket);
    return rp_hinted_ep;
}

RP_HOT void rp_timing_start(const void *callback, uint64_t ep, uint64_t gap_now, bool is_intra)
{
    _Atomic uint64_t *lanes = rp_lanes();
    if (UNLIKELY(lanes != tls_cb.stack_lanes)) { /* first use, or a fork child's new segment */
        tls_cb.stack_lanes = lanes;
        set_depth(0);
    }
    if (lanes == NULL)
        return;
    /* The same callback still open on this thread cannot be nested in itself: it was abandoned. */
    for (uint32_t i = tls_cb.depth; i-- > 0;) {
        if (tls_stack[i].callback == callback) {
            abandon_from(lanes, i);
            break;
        }
    }
    if (tls_cb.depth == STACK_MAX)
        return; /* nested deeper than anything real: this one is counted, not timed */
    /* the gap's reading when it came from this thread's anchor (as now_ns would): one counter read, not two */
    uint64_t now = (gap_now & RP_CLOCK_ANCHORED) ? gap_now & ~RP_CLOCK_ANCHORED : now_ns();
    if (tls_cb.depth == 0)
        thread_open(lanes, now, (uint32_t)(ep - 1));
    struct rp_timing *t = &g_seg.timing[ep - 1];
    struct rp_link_input in = {0, 0, 0};
    if (UNLIKELY(rp_link_tls.take_ep != 0)) { /* links on, and a take before this start */
        in = rp_link_start(ep, is_intra);
        if (in.ep != 0)
            rp_link_input_seen(in.ep, in.source_ns);
    }
    if (UNLIKELY(in.ep == 0 && g_seg.links != NULL)) /* links on: a timer samples its node's latest inputs */
        in = rp_link_sampled_start(ep);
    if (in.ep != 0)
        rp_link_tls.armed = tls_cb.depth + 1;
    tls_stack[tls_cb.depth++] = (struct open_callback){callback, now, t, in};
    /* timing_end's lines (the sum and the period, the likely duration's
     * bucket), fetched again while the callback runs: between two messages a
     * process's lines go cold, and a miss at the end would queue behind
     * nothing else (docs/PERFORMANCE.md §13). */
    __builtin_prefetch(t, 1, 3);
    const struct rp_ep_hint *h = rp_warm_hint(ep);
    __builtin_prefetch(&t->buckets[h != NULL ? atomic_load_explicit(&h->time_bucket, memory_order_relaxed) : 16], 1,
                       3); /* no warm hint: the durations of 16-31 µs (the record's second line) */
}

RP_HOT static void timing_end(const void *callback)
{
    _Atomic uint64_t *lanes = rp_lanes();
    if (lanes != tls_cb.stack_lanes || lanes == NULL) {
        set_depth(0); /* the segment changed under the open callbacks (fork): they are not ours */
        return;
    }
    for (uint32_t i = tls_cb.depth; i-- > 0;) {
        if (tls_stack[i].callback != callback)
            continue;
        uint64_t now = now_ns();
        if (UNLIKELY(i + 1 < tls_cb.depth))
            abandon_from(lanes, i + 1); /* nested ones that never ended */
        struct rp_timing *t = tls_stack[i].timing;
        uint64_t d = now > tls_stack[i].start_ns ? now - tls_stack[i].start_ns : 0;
        uint32_t b = rp_time_bucket(d);
        atomic_fetch_add_explicit(&t->sum_ns, d, memory_order_relaxed);
        atomic_fetch_add_explicit(&t->buckets[b], 1, memory_order_relaxed);
        if (t->period_ns != 0 && d > t->period_ns)
            atomic_fetch_add_explicit(&t->overruns, 1, memory_order_relaxed);
        struct rp_ep_hint *h = warm_hint_of(t);
        if (h != NULL)
            rp_hint_bucket(&h->time_bucket, t->buckets, b);
        set_depth(i);
        if (i == 0) {
            thread_close(lanes, now);
            rp_hinted_ep = 0; /* a publish before the next early fetch is made outside any callback */
        }
        return;
    }
    /* not open here: a callback we do not count, or one nested too deep */
}

EXPORT RP_HOT void ros_trace_callback_end(const void *callback)
{
    if (tls_cb.depth > 0 && callback != NULL)
        timing_end(callback);
    RP_FORWARD_THROUGH(g_hot.real_callback_end, callback_end, (const void *), (callback));
}

/* ---------------------------------------------------------------- rcl_wait
 *
 * An executor thread is idle inside rcl_wait and working everywhere else:
 * the one measure of busy that rclpy's threads have (their callbacks fire no
 * tracepoint). Two counter reads per wait, none per message.
 */
EXPORT RP_HOT rp_rcl_ret_t rcl_wait(void *wait_set, int64_t timeout)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    void *fn = rp_real(&real_fn, "rcl_wait", "librcl.so");
    if (fn == NULL)
        return RP_RCL_RET_ERROR; /* no librcl in this process */
    rp_link_handled();
    _Atomic uint64_t *lanes = rp_lanes();
    struct rp_thread *r = lanes != NULL && g_seg.threads != NULL ? thread_record(lanes) : NULL;
    if (r == NULL)
        return ((rp_rcl_wait_fn)fn)(wait_set, timeout);
    uint64_t t0 = now_ns();
    seq_begin(r);
    atomic_store_explicit(&r->wait_open_ns, t0, memory_order_release);
    seq_end(r);
    rp_rcl_ret_t ret = ((rp_rcl_wait_fn)fn)(wait_set, timeout);
    uint64_t t1 = now_ns();
    if (rp_lanes() != lanes) /* forked while waiting (a child of a wait?): not ours any more */
        return ret;
    seq_begin(r);
    atomic_store_explicit(&r->wait_ns, atomic_load_explicit(&r->wait_ns, memory_order_relaxed) + (t1 > t0 ? t1 - t0 : 0),
                          memory_order_release);
    atomic_store_explicit(&r->wait_open_ns, 0, memory_order_release);
    atomic_store_explicit(&r->waits, atomic_load_explicit(&r->waits, memory_order_relaxed) + 1, memory_order_release);
    seq_end(r);
    return ret;
}

/* ---------------------------------------------------------------- callback names
 *
 * rclcpp names each callback's function once, at registration. Humble calls
 * the tracepoint directly; from Iron on rclcpp asks
 * ros_trace_enabled_rclcpp_callback_register() first and computes the name
 * (dladdr and demangling, one malloc) only when it says yes. The probe says
 * yes, takes the name, and forwards to the real ros_trace_do_ only when the
 * real enabled function said yes (an LTTng session is listening).
 */
static __thread bool tls_register_traced; /* what the real enabled function answered */

EXPORT void ros_trace_rclcpp_callback_register(const void *callback, const char *function_symbol)
{
    rp_name_callback(callback, function_symbol);
    RP_FORWARD(rclcpp_callback_register, (const void *, const char *), (callback, function_symbol));
}

EXPORT bool ros_trace_enabled_rclcpp_callback_register(void)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    void *fn = rp_real(&real_fn, "ros_trace_enabled_rclcpp_callback_register", "libtracetools.so");
    tls_register_traced = fn != NULL && ((bool (*)(void))fn)();
    return true;
}

EXPORT void ros_trace_do_rclcpp_callback_register(const void *callback, const char *function_symbol)
{
    rp_name_callback(callback, function_symbol);
    if (!tls_register_traced)
        return;
    tls_register_traced = false;
    static void *_Atomic real_fn = RP_UNRESOLVED;
    void *fn = rp_real(&real_fn, "ros_trace_do_rclcpp_callback_register", "libtracetools.so");
    if (fn != NULL)
        ((void (*)(const void *, const char *))fn)(callback, function_symbol);
}

/* ---------------------------------------------------------------- timers */

static inline uintptr_t timer_impl(const void *timer)
{
    const void *impl = *(const void *const *)timer;
    return impl != NULL ? (uintptr_t)impl : (uintptr_t)timer;
}

/* What timer_called will touch of endpoint ep (its flags, its lateness sum)
 * and what its callback_start (rclcpp) or timer_called (rclpy) writes. */
static inline void prefetch_timer(uint64_t ep)
{
    __builtin_prefetch(&g_seg.endpoints[ep - 1].flags, 0, 3);
    rp_prefetch_callback(ep);
    const struct rp_ep_hint *h = rp_ep_hint(ep);
    if (g_seg.timing != NULL && h != NULL) /* the sum's line is the callback's, fetched above */
        __builtin_prefetch(&g_seg.timing[ep - 1].late_buckets[atomic_load_explicit(&h->late_bucket, memory_order_relaxed)],
                           1, 3);
}

/* One successful call of timer endpoint ep, late_ns after its scheduled time. */
RP_HOT static void timer_called(uint64_t ep, int64_t late_ns)
{
    /* rclcpp's fires are counted at callback_start; rclpy's and plain rcl's only here */
    if (!(atomic_load_explicit(&g_seg.endpoints[ep - 1].flags, memory_order_acquire) & RP_EP_RCLCPP))
        rp_count_endpoint(ep, RP_SLOT_INTER);
    if (g_seg.timing == NULL)
        return;
    struct rp_timing *t = &g_seg.timing[ep - 1];
    uint64_t late = late_ns > 0 ? (uint64_t)late_ns : 0;
    uint32_t b = rp_time_bucket(late);
    atomic_fetch_add_explicit(&t->late_sum_ns, late, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->late_buckets[b], 1, memory_order_relaxed);
    struct rp_ep_hint *h = warm_hint_of(t);
    if (h != NULL)
        rp_hint_bucket(&h->late_bucket, t->late_buckets, b);
}

EXPORT RP_HOT rp_rcl_ret_t rcl_timer_call(void *timer)
{
    static void *_Atomic real_fn = RP_UNRESOLVED, *_Atomic until_fn = RP_UNRESOLVED;
    rp_rcl_timer_call_fn real = (rp_rcl_timer_call_fn)rp_real(&real_fn, "rcl_timer_call", "librcl.so");
    if (real == NULL)
        return RP_RCL_RET_ERROR; /* no librcl in this process */
    rp_link_handled();
    if (timer == NULL || tls_cb.in_timer_call || rp_lanes() == NULL)
        return real(timer);
    uint64_t ep = rp_timer_endpoint(timer_impl(timer), true);
    if (ep != 0)
        prefetch_timer(ep);
    /* Lateness needs the schedule before the call: a clock read and rcl's
     * checks, ~200 instructions (issue 45), asked only when timing is on. */
    int64_t until = 0;
    bool scheduled = ep != 0 && g_seg.timing == NULL; /* counted, no lateness to measure */
    if (ep != 0 && g_seg.timing != NULL) {
        rp_rcl_timer_get_time_until_next_call_fn get_until = (rp_rcl_timer_get_time_until_next_call_fn)rp_real(
            &until_fn, "rcl_timer_get_time_until_next_call", "librcl.so");
        scheduled = get_until != NULL && get_until(timer, &until) == RP_RCL_RET_OK;
    }
    tls_cb.in_timer_call = true;
    rp_rcl_ret_t ret = real(timer);
    tls_cb.in_timer_call = false;
    if (ret == RP_RCL_RET_OK && scheduled)
        timer_called(ep, -until);
    return ret;
}

EXPORT RP_HOT rp_rcl_ret_t rcl_timer_call_with_info(void *timer, rp_rcl_timer_call_info_t *info)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    rp_rcl_timer_call_with_info_fn real =
        (rp_rcl_timer_call_with_info_fn)rp_real(&real_fn, "rcl_timer_call_with_info", "librcl.so");
    if (real == NULL)
        return RP_RCL_RET_ERROR; /* before Jazzy, or no librcl */
    rp_link_handled();
    if (timer == NULL || info == NULL || tls_cb.in_timer_call || rp_lanes() == NULL)
        return real(timer, info);
    /* A known timer's lines are fetched while rcl calls it (as in timing_start);
     * a new one gets its endpoint only from a call that succeeded. */
    uint64_t ep = rp_timer_endpoint(timer_impl(timer), false);
    if (ep != 0)
        prefetch_timer(ep);
    tls_cb.in_timer_call = true;
    rp_rcl_ret_t ret = real(timer, info);
    tls_cb.in_timer_call = false;
    if (ret == RP_RCL_RET_OK) {
        if (ep == 0)
            ep = rp_timer_endpoint(timer_impl(timer), true);
        if (ep != 0)
            timer_called(ep, info->actual_call_time - info->expected_call_time);
    }
    return ret;
}
