/*
 * The probe's core, as its hook families see it (docs/ARCHITECTURE.md): the
 * segment, the endpoint table and its maps, the thread cache, the clock,
 * this thread's open callbacks, forwarding, and the early-fetch hints the
 * families fill. core.c and clock.c implement it and call no family; each
 * family (init.c, topics.c, callbacks.c, services.c, qos.c, links.c,
 * bytes.c, symbols.c) is one file of hooks over it. Hidden symbols: none of
 * this is exported from the library.
 */
#ifndef ROS2_PULSE_CORE_H
#define ROS2_PULSE_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "handle_map.h"
#include "ros2_pulse/segment.h"
#include "segment_writer.h"

#define RP_HIDDEN __attribute__((visibility("hidden")))
#define EXPORT __attribute__((visibility("default"))) /* an interposed or wrapped function */
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
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

/* This thread's link state (links.c), read by the hooks before they call into links.c. */
struct rp_link_tls {
    uint32_t armed;   /* the depth of the open callback whose frame has an input, RP_LINK_ARMED_PY, or 0 */
    uint32_t take_ep; /* the endpoint of this thread's last take not yet claimed by a callback_start; 0 none */
    int64_t take_source_ns;
    uint32_t counted_ep; /* a publish the fast path counted while armed, for its slow half to link (index + 1); 0 none */
};

/*
 * What every message's hook reads of this thread, in one cache line and
 * behind one TLS offset: each message finds its thread's lines cold too, and
 * the publish path read four (the cache's growth pointer, the early-fetch
 * endpoint, the link state: each its own line, each its own GOT load) where
 * it now reads two, this and its cache set (issue 45).
 */
struct rp_tls_hot {
    struct rp_tls_set *big;        /* the grown thread cache, NULL until this thread grows (core.c) */
    uint32_t big_shift;            /* 64 - log2(the grown cache's sets) */
    /* The endpoint whose hint this thread's last early fetch read
     * (rp_prefetch_callback): its callback runs next or now. 0 once a timed
     * outermost callback ended or an rclpy take was counted, until the next
     * early fetch. */
    uint32_t hinted_ep;
    uint32_t bytes_serialized;     /* inside rcl_publish/take_serialized_message: its rcl_publish or rmw_take is not typed (bytes.c) */
    struct rp_link_tls link;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct rp_tls_hot) <= 64, "rp_tls_hot fits one cache line");
extern __thread struct rp_tls_hot rp_tls_hot RP_HIDDEN;

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

/*
 * The hint of endpoint ep when this thread's early fetch just read it (its
 * line is warm), else NULL: a callback with no hook before it (intra-process,
 * a service) and a publish outside a callback neither read nor write hints,
 * so a hint never costs them a line.
 */
static inline struct rp_ep_hint *rp_warm_hint(uint64_t ep)
{
    return ep == rp_tls_hot.hinted_ep ? rp_ep_hint(ep) : NULL;
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

/* A gap record's first line and the line of bucket b, for writing. */
static inline void rp_prefetch_gap_lines(const struct rp_gap *g, uint32_t b)
{
    __builtin_prefetch(g, 1, 3);
    __builtin_prefetch(&g->buckets[b], 1, 3);
}

/* callbacks.c: the callback open on this thread (the timed one, else the one
 * fetched early, rp_tls_hot.hinted_ep != 0) publishes on publisher impl pub, endpoint
 * pub_ep (index + 1), whose last gap fell in bucket gap_bucket: kept in its
 * hint for its next message. Returns the endpoint whose hint it wrote
 * (rp_tls_hot.hinted_ep), or 0 when none was warm. */
uint32_t rp_hint_publisher(uintptr_t pub, uint64_t pub_ep, uint32_t gap_bucket) RP_HIDDEN;

/* Counts one event in counter slot of endpoint ep (index + 1) in this thread's lane. */
void rp_count_endpoint(uint64_t ep, unsigned slot) RP_HIDDEN;

/* clock.c: chooses the timing clock (once, in process_init: it reads sysfs). */
void rp_clock_init(void) RP_HIDDEN;

/*
 * clock.c: CLOCK_MONOTONIC ns for a message gap, from the CPU's counter
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

#define RP_LINK_ARMED_PY UINT32_MAX /* an rclpy take is open on this thread (rule 4) */
#define RP_LINK_INTRA_TAKE UINT32_MAX /* take_ep: a ring buffer's dequeue, for the intra-process callback_start next (rule 5) */

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
    if (is_intra ? rp_tls_hot.link.take_ep == RP_LINK_INTRA_TAKE : rp_tls_hot.link.take_ep == ep)
        in = (struct rp_link_input){(uint32_t)ep, 0, rp_tls_hot.link.take_source_ns};
    rp_tls_hot.link.take_ep = 0;
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

/* A publish on publisher endpoint pub_ep (index + 1) while rp_tls_hot.link.armed. */
void rp_link_publish(uint64_t pub_ep, unsigned counter_slot) RP_HIDDEN;


/*
 * This thread waits (rcl_wait) or dispatches another entity (a timer call, a
 * service's or client's take): an rclpy take's handling is over. rclpy's
 * executor runs every entity one wait made ready before it waits again, so
 * the wait alone does not end a take's turn (the robot graph's rclpy
 * monitors, a subscription and a timer ready together, showed it).
 */
static inline void rp_link_handled(void)
{
    if (rp_tls_hot.link.armed == RP_LINK_ARMED_PY)
        rp_tls_hot.link.armed = 0;
}

/* ---------------------------------------------------------------- bytes.c (design note 0033) */

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

/* A message of endpoint ep whose size is known (a serialized publish or
 * take), recorded before the message is counted: a reader that sees the
 * count sees its size too (bytes.c). */
void rp_bytes_exact(uint64_t ep, uint64_t size) RP_HIDDEN;

/* Takes back a serialized publish sized before its call failed. */
void rp_bytes_exact_undo(uint64_t ep, uint64_t size) RP_HIDDEN;

/* A serialized take counted at the rmw_take fired inside it (rclpy raw,
 * Jazzy+): sized from the caller's message before that count. */
void rp_bytes_serialized_take(uint64_t ep) RP_HIDDEN;

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
#define UNRESOLVED RP_UNRESOLVED
#define FORWARD RP_FORWARD
#define FORWARD_THROUGH RP_FORWARD_THROUGH

/* ---------------------------------------------------------------- the endpoint table (table.c) */

/* handle -> value maps (process-private); written under the init lock only */
extern struct rp_map g_pubs RP_HIDDEN;        /* rcl publisher impl -> endpoint + 1 */
extern struct rp_map g_subs RP_HIDDEN;        /* rcl subscription impl -> endpoint + 1 */
extern struct rp_map g_rmw_subs RP_HIDDEN;    /* rmw subscription handle -> endpoint + 1 (rmw_take) */
extern struct rp_map g_rclcpp_subs RP_HIDDEN; /* rclcpp (or intra-process) subscription -> rcl subscription impl */
extern struct rp_map g_callbacks RP_HIDDEN;   /* callback -> owner | CB_TAG_* */
extern struct rp_map g_timers RP_HIDDEN;      /* rcl timer impl -> endpoint + 1 */
extern struct rp_map g_timer_periods RP_HIDDEN; /* rcl timer impl -> period ns + 1, until an rclcpp timer claims it */
extern struct rp_map g_services RP_HIDDEN;    /* rcl service impl -> endpoint + 1 */
extern struct rp_map g_clients RP_HIDDEN;     /* rcl client impl -> endpoint + 1 */

enum { CB_TAG_SUB = 1, CB_TAG_TIMER = 2, CB_TAG_SERVICE = 3, CB_TAG_MASK = 3 };

/* The tracetools ABI this process's libtracetools has (RP_DISTRO_*). */
extern uint32_t g_distro RP_HIDDEN;
/* The probe's configuration, from the environment once per process. */
extern struct rp_config g_cfg RP_HIDDEN;

static inline uintptr_t rp_impl_of(const void *rcl_handle)
{
    /*
     * rcl publisher/subscription/timer/service structs hold one impl pointer,
     * and rcl sometimes publishes through a copy of the struct (/rosout), so
     * the impl is the identity. rcl has just used the handle, so it is valid.
     */
    const void *impl = *(const void *const *)rcl_handle;
    return impl != NULL ? (uintptr_t)impl : (uintptr_t)rcl_handle;
}

/*
 * Init-time work: takes the probe's mutex and makes the segment on first use;
 * true when it exists. rp_unlock releases the mutex whatever it said.
 * INIT_BEGIN/INIT_END bracket an init hook's map changes and publish them to
 * every thread's cache (a generation bump) at the end.
 */
bool rp_init_lock(void) RP_HIDDEN;
void rp_unlock(void) RP_HIDDEN;
/* The mutex alone: the segment is not made. */
void rp_lock(void) RP_HIDDEN;
#define INIT_BEGIN() if (rp_init_lock()) {
#define INIT_END()                                                                                 \
    rp_mappings_changed();                                                                         \
    }                                                                                              \
    rp_unlock()

/* Under the init lock: a map entry (a full map counts a dropped handle). */
void rp_map_put_locked(struct rp_map *m, uintptr_t key, uint64_t value) RP_HIDDEN;
/* Under the init lock: an endpoint for key in map; a re-used key retires the endpoint it named before. */
void rp_add_endpoint_locked(struct rp_map *map, uintptr_t key, uint16_t kind, const char *name, uint64_t aux,
                            uintptr_t node) RP_HIDDEN;
/* Under the init lock: marks an endpoint (index) retired and queues its slot for reuse. */
void rp_retire_locked(uint32_t ep) RP_HIDDEN;
/* Under the init lock: endpoint (index) belongs to rcl node handle node (now, or once the node is announced). */
void rp_link_node_locked(uint32_t ep, uintptr_t node) RP_HIDDEN;
/* Under the init lock: a node announced by rcl_node_init, and the endpoints that waited for it. */
void rp_add_node_locked(uintptr_t node, const char *ns, const char *name) RP_HIDDEN;

/* The endpoint (index + 1) a callback counts for, through its owner's chain; 0: none (yet). */
uint64_t rp_callback_endpoint(uintptr_t cb) RP_HIDDEN;

/* ---------------------------------------------------------------- the thread cache (core.c)
 *
 * handle -> this endpoint's counters in this thread's lane, generation-tagged.
 * The lookup is inline where a family's hook uses it; a miss is resolved by
 * the family (what a slot holds is its concern) and installed by the core.
 */
enum { KEY_PUB = 1, KEY_CALLBACK = 2, KEY_TAKE = 3 };

struct rp_tls_slot {
    uintptr_t key;
    uint32_t gen;
    /* KEY_PUB, KEY_CALLBACK: the bucket of this thread's last gap on it (prefetch_gap's guess of the next);
     * KEY_TAKE of an rclcpp subscription: its endpoint (index + 1), whose callback_start comes next */
    uint32_t gap_hint;
    uintptr_t counters; /* this endpoint's counters in this thread's lane (| SHARED_LANE_BIT); 0 = ignore */
    struct rp_gap *gap; /* its gap histogram when gap tracking is on, else NULL */
};

struct rp_tls_set {
    struct rp_tls_slot way[2];
} __attribute__((aligned(64))); /* a lookup touches one cache line */

#define RP_TLS_SETS 128u
extern __thread struct rp_tls_set rp_tls_cache[RP_TLS_SETS] RP_HIDDEN;
/* Not in rp_tls_hot: a callback's start reads it after a possible call, and
 * one TLS base kept across a call costs a saved register (issue 45). */
extern __thread _Atomic uint64_t *rp_tls_lane RP_HIDDEN; /* this thread's lane, NULL until claimed */
extern __thread bool rp_tls_lane_shared RP_HIDDEN;       /* ... and it is the shared one */

/*
 * The two ways of key's set, in whichever cache this thread has.
 *
 * Multiplicative hashing spreads handles allocated at a stride over all sets
 * (an arithmetic progression lands at near-even spacing). Its blind spot is
 * keys whose distance is a convergent of the multiplier (for the golden
 * ratio: Fibonacci numbers; simgraph once allocated three rows 46,368 bytes
 * apart): they share a set. The grown cache uses another multiplier, so a
 * thread that thrashed on that grows out of it too. (Folding high bits in
 * instead broke the progressions' even spacing: 2-7 % misses, not 0.)
 */
static inline struct rp_tls_slot *rp_tls_ways(uintptr_t key)
{
    if (__builtin_expect(rp_tls_hot.big == NULL, 1))
        return rp_tls_cache[((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 57].way;
    return rp_tls_hot.big[((uint64_t)key * UINT64_C(0xBF58476D1CE4E5B9)) >> rp_tls_hot.big_shift].way;
}

/*
 * A cached counter pointer carries the lane kind in its low bit (counters are
 * 8-byte aligned): 0 = this thread's private lane, 1 = the shared lane.
 */
#define SHARED_LANE_BIT ((uintptr_t)1)
/* A KEY_PUB slot of a publisher whose messages vary in size, sampled when bytes are on (bytes.c): the fast path leaves it to count_publish */
#define SIZED_BIT ((uintptr_t)2)
#define TAG_BITS (SHARED_LANE_BIT | SIZED_BIT)

static inline void rp_bump(uintptr_t tagged)
{
#ifdef RP_FAULT_DROP_EVERY
    /* The tests' own test: a deliberately broken build (make's fault probe,
     * never shipped) loses one count in RP_FAULT_DROP_EVERY, and the
     * accuracy tests must fail with it (internal/integration). */
    static _Atomic uint64_t fault_n;
    if (atomic_fetch_add_explicit(&fault_n, 1, memory_order_relaxed) % RP_FAULT_DROP_EVERY == 0)
        return;
#endif
    _Atomic uint64_t *c = (_Atomic uint64_t *)(tagged & ~TAG_BITS);
    if (__builtin_expect(tagged & SHARED_LANE_BIT, 0))
        atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
    else /* single writer: a plain increment, published with a relaxed store */
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline uint64_t rp_read_counter(uintptr_t tagged)
{
    return atomic_load_explicit((_Atomic uint64_t *)(tagged & ~TAG_BITS), memory_order_relaxed);
}

/* This thread's lane, claiming one on first use (and making the segment); NULL without a segment. */
_Atomic uint64_t *rp_thread_lane(void) RP_HIDDEN;

/*
 * A miss resolved: slot goes to way 0 of set (the set of slot.key), the
 * previous entry to way 1. A thread that keeps evicting live entries grows
 * its cache first (then slot goes to its set there). Returns the set.
 */
struct rp_tls_slot *rp_cache_install(struct rp_tls_slot *set, struct rp_tls_slot slot) RP_HIDDEN;

/* ---------------------------------------------------------------- this thread's line (clock.c)
 *
 * What a callback's start and end, a wait and a timer call read of this
 * thread, in one cache line (each message finds it cold; PERFORMANCE §14):
 * the clock's anchor and callbacks.c's open-callback state.
 */
struct rp_tls_line {
    struct {
        uint64_t tick, mono, limit; /* limit: ticks after which the anchor is renewed */
    } anchor;
    uint32_t depth;                 /* callbacks open in rp_tls_stack[] */
    bool in_timer_call;             /* Jazzy's rcl_timer_call calls rcl_timer_call_with_info */
    bool anchor_clean;              /* the anchor's pairing may calibrate the rate (PAIR_MAX_TICKS) */
    _Atomic uint64_t *stack_lanes;  /* the segment rp_tls_stack[] belongs to */
    struct rp_thread *thread;       /* this thread's RP_SECTION_THREADS record, NULL on the shared lane */
    _Atomic uint64_t *thread_lanes; /* the segment thread belongs to */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct rp_tls_line) <= 64, "rp_tls_line fits one cache line");
extern __thread struct rp_tls_line rp_tls_line RP_HIDDEN;

/* The tick clock (clock.c has why): usable at all, and its rate never recalibrated. */
extern bool g_ticks_usable RP_HIDDEN;

static inline uint64_t rp_ticks(void)
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

/* A clock_gettime reading; it calibrates the tick rate and renews this thread's anchor when due. */
uint64_t rp_clock_slow(uint64_t t) RP_HIDDEN;

/* Counter value t in CLOCK_MONOTONIC ns through this thread's anchor; 0 when
 * the anchor cannot serve it (rate not calibrated, no anchor, or expired). */
static inline uint64_t rp_from_anchor(uint64_t t)
{
    uint64_t rate = atomic_load_explicit(&g_hot.ns_per_tick_q32, memory_order_relaxed);
    uint64_t dt = t - rp_tls_line.anchor.tick;
    if (__builtin_expect(rate != 0 && rp_tls_line.anchor.tick != 0 && t >= rp_tls_line.anchor.tick &&
                             dt < rp_tls_line.anchor.limit,
                         1))
        return rp_tls_line.anchor.mono + (uint64_t)(((unsigned __int128)dt * rate) >> 32);
    return 0;
}

/* CLOCK_MONOTONIC ns, from the tick counter when it is calibrated. */
static inline uint64_t rp_clock_ns(void)
{
    if (!g_ticks_usable) /* e.g. kvm-clock: the counter is never read, so skip it and the anchor */
        return rp_mono_ns();
    uint64_t t = rp_ticks();
    uint64_t ns = rp_from_anchor(t);
    return __builtin_expect(ns != 0, 1) ? ns : rp_clock_slow(t);
}

/* ---------------------------------------------------------------- this thread's open callbacks (clock.c)
 *
 * The callbacks open on this thread, outermost first, pushed and popped by
 * callbacks.c and read by links.c; valid for the segment mapped at
 * rp_tls_line.stack_lanes.
 */
#define RP_STACK_MAX 16u
struct rp_open_callback {
    const void *callback;
    uint64_t start_ns;
    struct rp_timing *timing;
    struct rp_link_input in; /* the message it was started for (links.c); in.ep 0: none */
};
extern __thread struct rp_open_callback rp_tls_stack[RP_STACK_MAX] RP_HIDDEN;

/* The innermost open callback's frame input and start, or NULL. */
static inline struct rp_link_input *rp_innermost_input(uint64_t *start_ns)
{
    if (rp_tls_line.depth == 0 || rp_tls_line.stack_lanes != rp_lanes())
        return NULL;
    *start_ns = rp_tls_stack[rp_tls_line.depth - 1].start_ns;
    return &rp_tls_stack[rp_tls_line.depth - 1].in;
}

#endif
