/*
 * Callback and timer timing (ABI 1.4, design note 0018): how long each
 * callback runs, how late each timer is called, and how busy each thread is.
 *
 * callback_start (counted in topics.c) hands its endpoint here; this file
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

#include "core.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"

/* The open callbacks are now the first d: a link input armed deeper is closed. */
static inline void set_depth(uint32_t d)
{
    rp_tls_line.depth = d;
    if (UNLIKELY(rp_tls_hot.link.armed > d) && rp_tls_hot.link.armed != RP_LINK_ARMED_PY)
        rp_tls_hot.link.armed = 0;
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
    rp_tls_line.thread_lanes = lanes;
    rp_tls_line.thread = NULL;
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
    rp_tls_line.thread = r;
    return r;
}

/* This thread's record, claimed on first use in this segment. */
static inline struct rp_thread *thread_record(_Atomic uint64_t *lanes)
{
    if (LIKELY(rp_tls_line.thread_lanes == lanes))
        return rp_tls_line.thread;
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

/* A histogram's bucket b counted its first: mark it, so readers read the
 * used buckets only (ABI 1.10). Once per bucket of a record: out of line. */
RP_COLD static void mark_bucket(_Atomic uint64_t *used, uint32_t b)
{
    atomic_fetch_or_explicit(&used[b >> 6], UINT64_C(1) << (b & 63), memory_order_release);
}

/* Entries from..depth-1 never saw their end: counted as abandoned, not timed. */
RP_COLD static void abandon_from(_Atomic uint64_t *lanes, uint32_t from)
{
    for (uint32_t k = from; k < rp_tls_line.depth; k++)
        atomic_fetch_add_explicit(&rp_tls_stack[k].timing->unended, 1, memory_order_relaxed);
    if (from == 0 && rp_tls_line.depth > 0)
        thread_close(lanes, rp_tls_stack[0].start_ns);
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
    if (rp_tls_line.depth > 0 && rp_tls_line.stack_lanes == rp_lanes())
        h = warm_hint_of(rp_tls_stack[rp_tls_line.depth - 1].timing); /* the timed callback open on this thread */
    else /* no timed callback (timing off, or rclpy's, which fire no callback_start): the one fetched early */
        h = rp_ep_hint(rp_tls_hot.hinted_ep);
    if (h == NULL)
        return 0;
    if (atomic_load_explicit(&h->publisher, memory_order_relaxed) != pub)
        atomic_store_explicit(&h->publisher, pub, memory_order_relaxed);
    if (atomic_load_explicit(&h->publisher_ep, memory_order_relaxed) != pub_ep)
        atomic_store_explicit(&h->publisher_ep, (uint32_t)pub_ep, memory_order_relaxed);
    if (g_seg.gaps != NULL)
        rp_hint_bucket(&h->publisher_gap_bucket, g_seg.gaps[pub_ep - 1].buckets, gap_bucket);
    return rp_tls_hot.hinted_ep;
}

/* Links on (ROS_PULSE_LINKS=1): the input a starting callback's publishes
 * link from, the thread armed for it. Out of line: with links off (the
 * default) a start spans none of its lines (design note 0038). */
static __attribute__((noinline)) struct rp_link_input link_frame(uint64_t ep, bool is_intra)
{
    struct rp_link_input in = {0, 0, 0};
    if (rp_tls_hot.link.take_ep != 0) { /* a take before this start */
        in = rp_link_start(ep, is_intra);
        if (in.ep != 0)
            rp_link_input_seen(in.ep, in.source_ns);
    }
    if (in.ep == 0) /* a timer samples its node's latest inputs */
        in = rp_link_sampled_start(ep);
    if (in.ep != 0)
        rp_tls_hot.link.armed = rp_tls_line.depth + 1;
    return in;
}

RP_HOT void rp_timing_start(const void *callback, uint64_t ep, uint64_t gap_now, bool is_intra)
{
    _Atomic uint64_t *lanes = rp_lanes();
    if (UNLIKELY(lanes != rp_tls_line.stack_lanes)) { /* first use, or a fork child's new segment */
        rp_tls_line.stack_lanes = lanes;
        set_depth(0);
    }
    if (lanes == NULL)
        return;
    /* The same callback still open on this thread cannot be nested in itself: it was abandoned. */
    for (uint32_t i = rp_tls_line.depth; i-- > 0;) {
        if (rp_tls_stack[i].callback == callback) {
            abandon_from(lanes, i);
            break;
        }
    }
    if (rp_tls_line.depth == RP_STACK_MAX)
        return; /* nested deeper than anything real: this one is counted, not timed */
    /* the gap's reading when it came from this thread's anchor (as now_ns would): one counter read, not two */
    uint64_t now = (gap_now & RP_CLOCK_ANCHORED) ? gap_now & ~RP_CLOCK_ANCHORED : rp_clock_ns();
    if (rp_tls_line.depth == 0)
        thread_open(lanes, now, (uint32_t)(ep - 1));
    struct rp_timing *t = &g_seg.timing[ep - 1];
    struct rp_link_input in = {0, 0, 0};
    if (UNLIKELY(g_seg.links != NULL)) /* links on (a take arms one only then) */
        in = link_frame(ep, is_intra);
    rp_tls_stack[rp_tls_line.depth++] = (struct rp_open_callback){callback, now, t, in};
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
    if (lanes != rp_tls_line.stack_lanes || lanes == NULL) {
        set_depth(0); /* the segment changed under the open callbacks (fork): they are not ours */
        return;
    }
    for (uint32_t i = rp_tls_line.depth; i-- > 0;) {
        if (rp_tls_stack[i].callback != callback)
            continue;
        uint64_t now = rp_clock_ns();
        if (UNLIKELY(i + 1 < rp_tls_line.depth))
            abandon_from(lanes, i + 1); /* nested ones that never ended */
        struct rp_timing *t = rp_tls_stack[i].timing;
        uint64_t d = now > rp_tls_stack[i].start_ns ? now - rp_tls_stack[i].start_ns : 0;
        uint32_t b = rp_time_bucket(d);
        atomic_fetch_add_explicit(&t->sum_ns, d, memory_order_relaxed);
        if (UNLIKELY(atomic_fetch_add_explicit(&t->buckets[b], 1, memory_order_relaxed) == 0))
            mark_bucket(t->used, b);
        if (t->period_ns != 0 && d > t->period_ns)
            atomic_fetch_add_explicit(&t->overruns, 1, memory_order_relaxed);
        struct rp_ep_hint *h = warm_hint_of(t);
        if (h != NULL)
            rp_hint_bucket(&h->time_bucket, t->buckets, b);
        set_depth(i);
        if (i == 0) {
            thread_close(lanes, now);
            rp_tls_hot.hinted_ep = 0; /* a publish before the next early fetch is made outside any callback */
        }
        return;
    }
    /* not open here: a callback we do not count, or one nested too deep */
}

EXPORT RP_HOT void ros_trace_callback_end(const void *callback)
{
    if (rp_tls_line.depth > 0 && callback != NULL)
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
    uint64_t t0 = rp_clock_ns();
    seq_begin(r);
    atomic_store_explicit(&r->wait_open_ns, t0, memory_order_release);
    seq_end(r);
    rp_rcl_ret_t ret = ((rp_rcl_wait_fn)fn)(wait_set, timeout);
    uint64_t t1 = rp_clock_ns();
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
    if (UNLIKELY(atomic_fetch_add_explicit(&t->late_buckets[b], 1, memory_order_relaxed) == 0))
        mark_bucket(t->late_used, b);
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
    if (timer == NULL || rp_tls_line.in_timer_call || rp_lanes() == NULL)
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
    rp_tls_line.in_timer_call = true;
    rp_rcl_ret_t ret = real(timer);
    rp_tls_line.in_timer_call = false;
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
    if (timer == NULL || info == NULL || rp_tls_line.in_timer_call || rp_lanes() == NULL)
        return real(timer, info);
    /* A known timer's lines are fetched while rcl calls it (as in timing_start);
     * a new one gets its endpoint only from a call that succeeded. */
    uint64_t ep = rp_timer_endpoint(timer_impl(timer), false);
    if (ep != 0)
        prefetch_timer(ep);
    rp_tls_line.in_timer_call = true;
    rp_rcl_ret_t ret = real(timer, info);
    rp_tls_line.in_timer_call = false;
    if (ret == RP_RCL_RET_OK) {
        if (ep == 0)
            ep = rp_timer_endpoint(timer_impl(timer), true);
        if (ep != 0)
            timer_called(ep, info->actual_call_time - info->expected_call_time);
    }
    return ret;
}
