/*
 * What probe.c shares with the other hook families (callbacks.c): the
 * segment, the clock, forwarding, and the timer table. Hidden symbols: none
 * of this is exported from the library.
 */
#ifndef ROS2_PULSE_PROBE_INTERNAL_H
#define ROS2_PULSE_PROBE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "ros2_pulse/segment.h"
#include "segment_writer.h"

#define RP_HIDDEN __attribute__((visibility("hidden")))
#define RP_UNRESOLVED ((void *)1)
/* A path a message takes rarely (a cache miss, a first use, a re-anchor): out
 * of line and in .text.unlikely, so the hot paths' code spans fewer cache
 * lines (on a busy machine most lines a message touches are misses, code as
 * much as data: PERFORMANCE §15). */
#define RP_COLD __attribute__((cold, noinline))
#define RP_HOT __attribute__((hot)) /* in .text.hot, next to the other hooks' hot code */

/* This process's segment; valid once rp_lanes() is non-NULL (an acquire load publishes it). */
extern struct rp_segment g_seg RP_HIDDEN;

/*
 * What every message reads of the process, in one cache line: between two
 * messages a ROS process makes syscalls and runs its own code, so each message
 * finds our data cold, and fewer lines touched is fewer misses
 * (docs/design/0003; the lanes and the timing rate joined it on 2026-12-04,
 * PERFORMANCE §14).
 */
struct rp_hot {
    _Atomic uint32_t gen; /* bumped by every mapping change; tags thread-cache entries */
    void *_Atomic real_rcl_publish;
    void *_Atomic real_rclcpp_intra_publish;
    void *_Atomic real_callback_start;
    void *_Atomic real_rmw_take;
    /* the lanes, NULL until the segment exists (and again in a fork child until it makes its own) */
    _Atomic(_Atomic uint64_t *) lanes;
    _Atomic uint64_t ns_per_tick_q32; /* callbacks.c's timing clock; 0: not calibrated yet */
    void *_Atomic real_callback_end;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct rp_hot) == 64, "g_hot is one cache line");
extern struct rp_hot g_hot RP_HIDDEN;

static inline _Atomic uint64_t *rp_lanes(void) { return atomic_load_explicit(&g_hot.lanes, memory_order_acquire); }

/* This thread's private lane index, claiming a lane on first use; -1 on the shared lane or without a segment. */
int32_t rp_private_lane(void) RP_HIDDEN;

/* The rp_gap bucket of a gap (or latency) of d ns (segment.h). */
static inline uint32_t rp_gap_bucket(uint64_t d)
{
    uint64_t u = d >> 10; /* ~microseconds; see rp_gap in segment.h */
    if (u < 16)
        return (uint32_t)u;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(u);
    uint32_t b = (e - 3) * 16 + (uint32_t)((u >> (e - RP_GAP_SUB_BITS)) & 15);
    return b < RP_GAP_BUCKETS ? b : RP_GAP_BUCKETS - 1;
}

/*
 * One message's gap at CLOCK_MONOTONIC now (segment.h, ABI 1.7): last_mono_ns
 * moves forward by compare-exchange, so each predecessor timestamp is
 * consumed by exactly one message and the gaps telescope (their sum is last
 * minus first: no sum to add); a racer whose clock read is older than the
 * last counts no gap. last_mono_ns is never reset, so a stall is seen
 * whenever it ends.
 */
static inline uint32_t rp_record_gap_at(struct rp_gap *g, uint64_t now)
{
    uint64_t prev = atomic_load_explicit(&g->last_mono_ns, memory_order_relaxed);
    do {
        if (now <= prev)
            return RP_GAP_BUCKETS;
    } while (!atomic_compare_exchange_weak_explicit(&g->last_mono_ns, &prev, now, memory_order_relaxed,
                                                    memory_order_relaxed));
    if (prev == 0) {
        atomic_store_explicit(&g->first_mono_ns, now, memory_order_relaxed); /* where the sum starts */
        return RP_GAP_BUCKETS;
    }
    uint32_t b = rp_gap_bucket(now - prev);
    atomic_fetch_add_explicit(&g->buckets[b], 1, memory_order_relaxed);
    return b;
}

/* The rp_timing bucket of a duration of d ns (segment.h). */
static inline uint32_t rp_time_bucket(uint64_t d)
{
    uint64_t u = d >> 10; /* ~microseconds */
    if (u < 8)
        return (uint32_t)u;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(u);
    uint32_t b = (e - 2) * 8 + (uint32_t)((u >> (e - RP_TIME_SUB_BITS)) & 7);
    return b < RP_TIME_BUCKETS ? b : RP_TIME_BUCKETS - 1;
}

/* name in the next object, else in lib if already loaded (Python loads libraries RTLD_LOCAL). */
void *rp_resolve_real(const char *name, const char *lib) RP_HIDDEN;

/* The real function behind a wrapper: resolved once into *slot (RP_UNRESOLVED
 * until then), NULL when no loaded object has it. */
static inline void *rp_real(void *_Atomic *slot, const char *name, const char *lib)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    if (__builtin_expect(fn == RP_UNRESOLVED, 0)) {
        fn = rp_resolve_real(name, lib);
        atomic_store_explicit(slot, fn, memory_order_release);
    }
    return fn;
}

/*
 * The endpoint of rcl timer impl (index + 1), or 0. With create, a timer no
 * rclcpp object claimed (rclpy, plain rcl) gets its endpoint now, named by
 * no node: its calls are its fires.
 */
uint64_t rp_timer_endpoint(uintptr_t impl, bool create) RP_HIDDEN;

/*
 * Stores what the publisher (or subscription) whose rcl handle this is turned
 * out to be (qos.c, after rcl_*_init returned), for the endpoint its
 * tracepoint made. Init-time only; takes the probe mutex.
 */
uint64_t rp_describe_endpoint(bool publisher, const void *rcl_handle, struct rp_qos *facts) RP_HIDDEN;

/* The endpoint (index + 1) of an rcl publisher or subscription handle, or 0: one lock-free map lookup. */
uint64_t rp_endpoint_of(bool publisher, const void *rcl_handle) RP_HIDDEN;

/* A mapping the threads' caches resolve from changed (bytes.c learnt a type): they resolve again. */
void rp_mappings_changed(void) RP_HIDDEN;

/*
 * The endpoint (index + 1) of an rcl service (client false) or client
 * handle, or 0: one lock-free map lookup, for services.c's wrappers.
 */
uint64_t rp_call_endpoint(const void *rcl_handle, bool client) RP_HIDDEN;

/* Names the endpoint callback belongs to by its function (rclcpp_callback_register), once. */
void rp_name_callback(const void *callback, const char *symbol) RP_HIDDEN;

/*
 * Per endpoint, what the hook before its callback_start (rmw_take, a timer
 * call) needs to fetch that callback's lines early (design note 0003): the
 * callback last resolved to it, and the buckets its last gap, duration and
 * lateness fell in (each histogram's likely line). Hints only, shared by every
 * thread: a stale one costs a useless prefetch, never a count. A bucket hint
 * is stored only when the bucket's cache line changes, so a steady endpoint
 * writes nothing here.
 */
struct rp_ep_hint {
    const void *_Atomic callback;
    _Atomic uintptr_t publisher;     /* the rcl publisher the callback last published on (its impl) ... */
    _Atomic uint32_t publisher_ep;   /* ... and its endpoint (index + 1); 0: none yet */
    _Atomic uint16_t gap_bucket;     /* rp_gap.buckets, of the callback's gaps */
    _Atomic uint16_t time_bucket;    /* rp_timing.buckets */
    _Atomic uint16_t late_bucket;    /* rp_timing.late_buckets */
    _Atomic uint16_t publisher_gap_bucket; /* rp_gap.buckets of that publisher's gaps */
    _Atomic uint32_t link;           /* links.c: the link its callback last published on (index + 1) | g_hot.gen << 16 */
};
_Static_assert(sizeof(struct rp_ep_hint) == 32, "two hints a cache line");
_Static_assert(RP_TIME_BUCKETS <= 65536 && RP_GAP_BUCKETS <= 65536, "bucket hints fit their fields");
extern struct rp_ep_hint *g_ep_hints RP_HIDDEN; /* [g_ep_hints_len], NULL when its allocation failed */
extern uint32_t g_ep_hints_len RP_HIDDEN;

/* The hint of endpoint ep (index + 1), or NULL. */
static inline struct rp_ep_hint *rp_ep_hint(uint64_t ep)
{
    return ep - 1 < g_ep_hints_len ? &g_ep_hints[ep - 1] : NULL;
}

/* The endpoint whose hint this thread's last early fetch read
 * (rp_prefetch_callback): its callback runs next or now. 0 once a timed
 * outermost callback ended or an rclpy take was counted, until the next
 * early fetch. */
extern __thread uint32_t rp_hinted_ep RP_HIDDEN;

/*
 * The hint of endpoint ep when this thread's early fetch just read it (its
 * line is warm), else NULL: a callback with no hook before it (intra-process,
 * a service) and a publish outside a callback neither read nor write hints,
 * so a hint never costs them a line.
 */
static inline struct rp_ep_hint *rp_warm_hint(uint64_t ep)
{
    return ep == rp_hinted_ep ? rp_ep_hint(ep) : NULL;
}

/* Moves a bucket hint to bucket b of the histogram at buckets (an address
 * only: nothing is read there) when b is on another cache line than the
 * hinted bucket, so a steady endpoint writes nothing. */
static inline void rp_hint_bucket(_Atomic uint16_t *hint, const _Atomic uint32_t *buckets, uint32_t b)
{
    uint32_t old = atomic_load_explicit(hint, memory_order_relaxed);
    if (((uintptr_t)(buckets + old) >> 6) != ((uintptr_t)(buckets + b) >> 6))
        atomic_store_explicit(hint, (uint16_t)b, memory_order_relaxed);
}

/*
 * Fetches what the callback_start of endpoint ep (index + 1) will touch (its
 * thread-cache set, its counters in this thread's lane, its gap record's
 * first line and likely bucket, its timing record's sum and likely bucket)
 * and what the publish it last made touches, from the hook before it
 * (rmw_take, a timer call), so those misses overlap rcl's and the callback's
 * work instead of queueing in our hooks.
 */
void rp_prefetch_callback(uint64_t ep) RP_HIDDEN;

/* callbacks.c: the callback open on this thread (the timed one, else the one
 * fetched early, rp_hinted_ep != 0) publishes on publisher impl pub, endpoint
 * pub_ep (index + 1), whose last gap fell in bucket gap_bucket: kept in its
 * hint for its next message. Returns the endpoint whose hint it wrote
 * (rp_hinted_ep), or 0 when none was warm. */
uint32_t rp_hint_publisher(uintptr_t pub, uint64_t pub_ep, uint32_t gap_bucket) RP_HIDDEN;

/* Counts one event in counter slot of endpoint ep (index + 1) in this thread's lane. */
void rp_count_endpoint(uint64_t ep, unsigned slot) RP_HIDDEN;

/* callbacks.c: chooses the timing clock (once, in process_init: it reads sysfs). */
void rp_timing_clock_init(void) RP_HIDDEN;

/*
 * callbacks.c: CLOCK_MONOTONIC ns for a message gap, from the CPU's counter
 * when this thread's anchor allows it, else from clock_gettime. The low bit
 * says whether it is the reading callback timing's now_ns would have given
 * (RP_CLOCK_ANCHORED), so a callback_start reads the clock once; a
 * nanosecond is below anything a gap measures, so it stays in the value.
 */
#define RP_CLOCK_ANCHORED UINT64_C(1)
uint64_t rp_gap_clock_ns(void) RP_HIDDEN;

/* callbacks.c: a counted callback_start of endpoint ep (index + 1) on this
 * thread; gap_now: its gap's rp_gap_clock_ns reading, or 0. */
void rp_timing_start(const void *callback, uint64_t ep, uint64_t gap_now, bool is_intra) RP_HIDDEN;

/* callbacks.c: CLOCK_MONOTONIC ns from this thread's clock (the tick counter when calibrated). */
uint64_t rp_now_ns(void) RP_HIDDEN;

/* ---------------------------------------------------------------- links.c (design note 0032)
 *
 * A callback's input: the message it was started for, kept in its frame of
 * callbacks.c's open-callback stack (so a callback that spins keeps its own).
 */
struct rp_link_input {
    uint32_t ep;             /* the subscription's endpoint (index + 1); 0: no input */
    uint32_t last_intra_out; /* the publisher whose intra-process publish was just linked: its rcl_publish twin is not */
    int64_t source_ns;       /* the message's source timestamp (the writer's CLOCK_REALTIME) */
};

/* This thread's link state, read by the hooks before they call into links.c. */
struct rp_link_tls {
    uint32_t armed;   /* the depth of the open callback whose frame has an input, RP_LINK_ARMED_PY, or 0 */
    uint32_t take_ep; /* the endpoint of this thread's last take not yet claimed by a callback_start; 0 none */
    int64_t take_source_ns;
};
#define RP_LINK_ARMED_PY UINT32_MAX /* an rclpy take is open on this thread (rule 4) */
#define RP_LINK_INTRA_TAKE UINT32_MAX /* take_ep: a ring buffer's dequeue, for the intra-process callback_start next (rule 5) */
extern __thread struct rp_link_tls rp_link_tls RP_HIDDEN;

/* A take of a message on subscription endpoint ep (index + 1); rclpy: the
 * subscription counts at its take (no callback_start follows). */
void rp_link_take(uint64_t ep, int64_t source_ns, bool rclpy) RP_HIDDEN;

/* The input of a callback of endpoint ep starting now (callbacks.c): the take
 * just before it, when it took ep's message, or, for an intra-process
 * delivery, the ring buffer's dequeue just before it (stamped at its
 * enqueue); the take is consumed either way. */
static inline struct rp_link_input rp_link_start(uint64_t ep, bool is_intra)
{
    struct rp_link_input in = {0, 0, 0};
    if (is_intra ? rp_link_tls.take_ep == RP_LINK_INTRA_TAKE : rp_link_tls.take_ep == ep)
        in = (struct rp_link_input){(uint32_t)ep, 0, rp_link_tls.take_source_ns};
    rp_link_tls.take_ep = 0;
    return in;
}

/* A subscription callback of endpoint ep started with its message (sent at
 * source_ns): its node's timers sample it from now on (rule 3). */
void rp_link_input_seen(uint32_t ep, int64_t source_ns) RP_HIDDEN;

/* The frame input of a callback of endpoint ep that started without an
 * input: for a timer whose node's subscriptions took messages, a sampled
 * frame (its inputs in the thread's state); else none. */
#define RP_LINK_SAMPLED_FRAME UINT32_MAX /* rp_link_input.ep of a timer callback that samples (rule 3) */
struct rp_link_input rp_link_sampled_start(uint64_t ep) RP_HIDDEN;

/* A publish on publisher endpoint pub_ep (index + 1) while rp_link_tls.armed. */
void rp_link_publish(uint64_t pub_ep, unsigned counter_slot) RP_HIDDEN;

/* callbacks.c: the innermost open callback's frame input and start, or NULL. */
struct rp_link_input *rp_innermost_input(uint64_t *start_ns) RP_HIDDEN;

/*
 * This thread waits (rcl_wait) or dispatches another entity (a timer call, a
 * service's or client's take): an rclpy take's handling is over. rclpy's
 * executor runs every entity one wait made ready before it waits again, so
 * the wait alone does not end a take's turn (the robot graph's rclpy
 * monitors, a subscription and a timer ready together, showed it).
 */
static inline void rp_link_handled(void)
{
    if (rp_link_tls.armed == RP_LINK_ARMED_PY)
        rp_link_tls.armed = 0;
}

/* ---------------------------------------------------------------- bytes.c (design note 0033) */

/* Allocates the sizers (once per process; a fork child keeps its parent's) and sets the sampling interval. */
void rp_bytes_init(uint32_t endpoint_capacity, uint32_t every) RP_HIDDEN;

/* After a successful rcl_*_init: learns how big endpoint ep's (index + 1) messages are from its type support. */
void rp_bytes_learn(uint64_t ep, const void *type_support) RP_HIDDEN;

/* Whether endpoint ep's messages vary in size and are sampled. */
bool rp_bytes_sampled(uint64_t ep) RP_HIDDEN;

/* A typed message published or taken on sampled endpoint ep (index + 1):
 * sized when a random draw (one in RP_BYTES_EVERY) says so, or while the
 * endpoint has never been sized. */
void rp_bytes_message(uint64_t ep, const void *message) RP_HIDDEN;

/* Sizes one typed message of endpoint ep now. */
void rp_bytes_sample(uint64_t ep, const void *message) RP_HIDDEN;

/* A message of endpoint ep whose size is known (a serialized publish or take). */
void rp_bytes_exact(uint64_t ep, uint64_t size) RP_HIDDEN;

extern __thread uint32_t rp_bytes_serialized RP_HIDDEN; /* inside rcl_publish/take_serialized_message: its rcl_publish or rmw_take is not typed */

/* Forwards to the real ros_trace_<name>, resolved once per call site. */
#define RP_FORWARD(name, params, args)                                                             \
    do {                                                                                           \
        static void *_Atomic real_fn = RP_UNRESOLVED;                                              \
        RP_FORWARD_THROUGH(real_fn, name, params, args);                                           \
    } while (0)

#define RP_FORWARD_THROUGH(slot, name, params, args)                                               \
    do {                                                                                           \
        void *fn = rp_real(&(slot), "ros_trace_" #name, "libtracetools.so");                       \
        if (fn != NULL)                                                                            \
            ((void(*) params)fn) args;                                                             \
    } while (0)

#endif
