/*
 * Topics, per message (a family of hooks over core.h): publish (rcl and
 * rclcpp's intra-process), take, callback_start's count, and the rcl
 * publishes tracetools may miss (loaned, serialized). No lock, no
 * allocation, no syscall on a thread-cache hit: the handle's slot in this
 * thread's cache (core.h) gives its counter in this thread's lane, and one
 * plain increment counts it. A miss is resolved here (what a slot holds is
 * this family's concern) and installed by the core.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"
#include "segment_writer.h"

#include <time.h>

RP_COLD static struct rp_tls_slot *resolve_slow(uintptr_t handle, unsigned kind, uint32_t gen, struct rp_tls_slot *set)
{
    bool counted = true;
    uint64_t ep = 0;
    switch (kind) {
    case KEY_PUB: ep = rp_map_get(&g_pubs, handle); break;
    case KEY_CALLBACK:
        ep = rp_callback_endpoint(handle);
        if (ep != 0 && rp_ep_hint(ep) != NULL)
            atomic_store_explicit(&rp_ep_hint(ep)->callback, (const void *)handle, memory_order_relaxed);
        break;
    case KEY_TAKE:
        /*
         * rmw_take counts only subscriptions no rclcpp object delivers for
         * (rclpy, plain rcl): rclcpp's are counted at callback_start, and
         * rclcpp also takes, then drops, the DDS copy of its own process's
         * intra-process publishes. Unknown handles are the rmw's discovery
         * readers. Either way: cached as "ignore".
         */
        ep = rp_map_get(&g_rmw_subs, handle);
        if (ep != 0 && (atomic_load_explicit(&g_seg.endpoints[ep - 1].flags, memory_order_acquire) & RP_EP_RCLCPP))
            counted = false; /* ... but its latency is measured here, for every client library */
        break;
    }
    uintptr_t counters = 0;
    struct rp_gap *gap = NULL;
    uint32_t next_ep = 0;
    if (ep != 0) {
        _Atomic uint64_t *lane = rp_thread_lane();
        if (lane != NULL) {
            if (counted)
                counters = (uintptr_t)(lane + (ep - 1) * RP_COUNTERS_PER_ENDPOINT) | (rp_tls_lane_shared ? SHARED_LANE_BIT : 0) |
                           (kind == KEY_PUB && rp_bytes_sampled(ep) ? SIZED_BIT : 0);
            else
                next_ep = (uint32_t)ep;
            if (kind != KEY_TAKE)
                gap = g_seg.gaps != NULL ? &g_seg.gaps[ep - 1] : NULL; /* rp_thread_lane() published g_seg */
            else if (g_seg.gaps != NULL || g_seg.latency != NULL || g_seg.links != NULL || rp_bytes_sampled(ep))
                gap = (struct rp_gap *)(uintptr_t)ep; /* a take slot holds the endpoint: its opt-in work may apply */
        }
    }
    /*
     * Tag with the generation read before the lookups: any mapping change
     * after that read bumped the generation, so this entry can only be
     * re-resolved too often, never served stale.
     */
    return rp_cache_install(set, (struct rp_tls_slot){handle ^ kind, gen, next_ep, counters, gap});
}

/* Where a callback's gap went, for its next message's early fetch (only
 * when that fetch ran: rp_warm_hint). */
static inline void hint_gap(struct rp_gap *g, uint32_t b)
{
    struct rp_ep_hint *h = rp_warm_hint((uint64_t)(g - g_seg.gaps) + 1);
    if (h != NULL)
        rp_hint_bucket(&h->gap_bucket, g->buckets, b);
}

/* One clock read, one compare-exchange and one add (rp_record_gap_at).
 * Returns the rp_gap_clock_ns reading, or 0 when it read none. */
RP_HOT static uint64_t record_gap(struct rp_gap *g, unsigned kind, unsigned counter_slot, uint32_t *hint)
{
    if (kind == KEY_PUB) {
        if (counter_slot == RP_SLOT_INTRA) {
            if (!(atomic_load_explicit(&g->flags, memory_order_relaxed) & RP_GAP_INTRA_PUBLISHER))
                atomic_fetch_or_explicit(&g->flags, RP_GAP_INTRA_PUBLISHER, memory_order_relaxed);
        } else if (atomic_load_explicit(&g->flags, memory_order_relaxed) & RP_GAP_INTRA_PUBLISHER) {
            return 0; /* the rcl_publish of a message already timed by rclcpp_intra_publish */
        }
    }
    uint64_t now = rp_gap_clock_ns();
    uint32_t b = rp_record_gap_at(g, now);
    if (b < RP_GAP_BUCKETS) {
        if (hint != NULL)
            *hint = b;
        if (kind == KEY_CALLBACK)
            hint_gap(g, b);
    }
    return now;
}

/*
 * An endpoint whose last gap on this thread was long (32 µs or more) meets
 * its gap record cold: its first line and its likely bucket's are fetched
 * together, before the counter's line. Flat out (short gaps, hot lines) the
 * prefetches would only cost.
 */
#define COLD_GAP_BUCKET 32u
static inline void prefetch_gap(const struct rp_tls_slot *hit)
{
    if (hit->gap_hint >= COLD_GAP_BUCKET) /* record_gap stores only real buckets */
        rp_prefetch_gap_lines(hit->gap, hit->gap_hint);
}

/* One realtime read: how old the message was when taken (same host: exact). */
static void record_latency(struct rp_gap *g, int64_t source_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (now <= source_ns) /* clocks of two hosts disagree: no sample rather than a false one */
        return;
    uint64_t d = (uint64_t)(now - source_ns);
    atomic_store_explicit(&g->last_mono_ns, (uint64_t)now, memory_order_relaxed);
    atomic_fetch_add_explicit(&g->sum_ns, d, memory_order_relaxed);
    atomic_fetch_add_explicit(&g->buckets[rp_gap_bucket(d)], 1, memory_order_relaxed);
}

/* The opt-in work of a take: gap tracking when counted here, latency for all, the input a callback links from, a size sample. */
static void take_extras(uintptr_t ep, bool counted, int64_t source_ns, const void *message)
{
    if (g_seg.bytes != NULL && rp_tls_hot.bytes_serialized == 0 && rp_bytes_sampled(ep)) /* a serialized take's message is not typed */
        rp_bytes_message(ep, message);
    if (counted && g_seg.gaps != NULL)
        record_gap(&g_seg.gaps[ep - 1], KEY_TAKE, RP_SLOT_INTER, NULL);
    if (g_seg.latency != NULL && source_ns > 0)
        record_latency(&g_seg.latency[ep - 1], source_ns);
    if (g_seg.links != NULL)
        rp_link_take(ep, source_ns, counted);
}

/* The thread-cache slot of (handle, kind), resolved on a miss. */
static inline struct rp_tls_slot *lookup(uintptr_t handle, unsigned kind)
{
    uint32_t gen = atomic_load_explicit(&g_hot.gen, memory_order_acquire);
    uintptr_t key = handle ^ kind;
    struct rp_tls_slot *set = rp_tls_ways(key);
    if (LIKELY(set[0].key == key && set[0].gen == gen))
        return &set[0];
    if (set[1].key == key && set[1].gen == gen)
        return &set[1];
    return resolve_slow(handle, kind, gen, set);
}

/* Counts one message of a resolved endpoint (hit->counters != 0), and its gap
 * when tracked; returns the gap's clock reading (record_gap), or 0. */
static inline uint64_t count_hit(struct rp_tls_slot *hit, unsigned kind, unsigned counter_slot)
{
    if (UNLIKELY(hit->gap != NULL))
        prefetch_gap(hit);
    rp_bump(hit->counters + counter_slot * sizeof(uint64_t));
    if (UNLIKELY(hit->gap != NULL)) /* gap tracking off: no clock read at all */
        return record_gap(hit->gap, kind, counter_slot, &hit->gap_hint);
    return 0;
}

/* Endpoint (index + 1) of a resolved slot: its counters' offset in this thread's lane. */
static inline uint64_t slot_endpoint(const struct rp_tls_slot *hit)
{
    return ((hit->counters & ~TAG_BITS) - (uintptr_t)rp_tls_lane) / (RP_COUNTERS_PER_ENDPOINT * sizeof(uint64_t)) + 1;
}

/*
 * A publish: counted, and named to the callback it is made from (if any) for
 * that callback's next early fetch. The whole path, for what the fast path
 * below leaves: a cache miss, gap tracking, a hint to write.
 */
static __attribute__((noinline)) void count_publish(uintptr_t handle, unsigned counter_slot, const void *message)
{
    struct rp_tls_slot *hit = lookup(handle, KEY_PUB);
    if (hit->counters != 0) {
        /* a random one in RP_BYTES_EVERY of the publishes is sized (bytes.c), before
         * it counts: a publisher's first message is never counted without a size */
        if (UNLIKELY(hit->counters & SIZED_BIT) && counter_slot == RP_SLOT_INTER && rp_tls_hot.bytes_serialized == 0)
            rp_bytes_message(slot_endpoint(hit), message);
        count_hit(hit, KEY_PUB, counter_slot);
        if (rp_tls_hot.link.armed != 0)
            rp_link_publish(slot_endpoint(hit), counter_slot);
        if (rp_tls_hot.hinted_ep != 0) { /* else no callback fetched early runs on this thread: none reads hints */
            uint32_t named = rp_hint_publisher(handle, slot_endpoint(hit), hit->gap_hint);
            if (hit->gap == NULL)
                hit->gap_hint = named; /* without gaps the field is free: the hint this thread has written */
        }
    } else if (hit->gap == NULL) {
        hit->gap_hint = rp_tls_hot.hinted_ep; /* an ignored publisher names nothing: the fast path may take it */
    }
}

/*
 * The usual publish, inline in its hook and calling nothing, so the hook
 * saves no registers and forwards by a jump (issue 45: the probe's own
 * instructions a publish): a hit in this thread's cache, no gap
 * tracking, and either no callback fetched early on this thread or one whose
 * hint this publisher already named from this thread (a KEY_PUB slot without
 * gaps keeps that endpoint in gap_hint). False: the slow half must do it
 * (count_publish), or only link it (rp_link_publish) when this counted it
 * inside a callback with an input: the second lookup of a linked publish
 * was a fifth of what links cost a timer's publish (issue 47).
 */
static inline bool count_publish_fast(uintptr_t handle, unsigned counter_slot)
{
    uint32_t gen = atomic_load_explicit(&g_hot.gen, memory_order_acquire);
    uintptr_t key = handle ^ KEY_PUB;
    struct rp_tls_slot *hit = rp_tls_ways(key);
    if (UNLIKELY(hit->key != key) && (++hit)->key != key)
        return false;
    if (UNLIKELY(hit->gen != gen || hit->gap != NULL || (hit->counters & SIZED_BIT)))
        return false;
    if (UNLIKELY(rp_tls_hot.hinted_ep != 0 && rp_tls_hot.hinted_ep != hit->gap_hint))
        return false;
    if (LIKELY(hit->counters != 0)) {
        rp_bump(hit->counters + counter_slot * sizeof(uint64_t));
        if (UNLIKELY(rp_tls_hot.link.armed != 0)) { /* links on, inside a callback with an input: the slow half links it */
            rp_tls_hot.link.counted_ep = (uint32_t)slot_endpoint(hit);
            return false;
        }
    }
    return true;
}

/* rmw_take: counted for subscriptions no rclcpp object delivers for; the
 * latency of every subscription when latency tracking is on. */
static inline void take(uintptr_t handle, int64_t source_ns, const void *message)
{
    const struct rp_tls_slot *hit = lookup(handle, KEY_TAKE);
    if (hit->counters != 0) {
        if (UNLIKELY(rp_tls_hot.bytes_serialized != 0)) /* an rclpy raw take: sized before it counts */
            rp_bytes_serialized_take(slot_endpoint(hit));
        rp_bump(hit->counters + RP_SLOT_INTER * sizeof(uint64_t));
        rp_tls_hot.hinted_ep = 0; /* an rclpy delivery: the callback that follows was not fetched early */
    } else if (hit->gap_hint != 0) /* rclcpp counts this message at its callback_start: fetch that line now */
        rp_prefetch_callback(hit->gap_hint);
    if (UNLIKELY(hit->gap != NULL)) /* gaps, latency and links off: no clock read at all */
        take_extras((uintptr_t)hit->gap, hit->counters != 0, source_ns, message);
}

/* ---- per-message hooks: no lock, no allocation, no syscall on a cache hit */

/*
 * The publish hooks: the fast path (count_publish_fast, the real function
 * resolved) calls nothing but the real one, by a jump; anything else goes to
 * the slow half, also by a jump, which counts and forwards. Neither path
 * saves a register (issue 45).
 */
#define PUBLISH_HOOK(name, counter_slot)                                                           \
    static __attribute__((noinline)) void name##_slow(const void *publisher_handle, const void *message) \
    {                                                                                              \
        if (rp_tls_hot.link.counted_ep != 0) { /* counted by the fast path: only its link is left */     \
            rp_link_publish(rp_tls_hot.link.counted_ep, counter_slot);                                    \
            rp_tls_hot.link.counted_ep = 0;                                                            \
        } else if (publisher_handle != NULL) {                                                     \
            count_publish(rp_impl_of(publisher_handle), counter_slot, message);                       \
        }                                                                                          \
        FORWARD_THROUGH(g_hot.real_##name, name, (const void *, const void *), (publisher_handle, message)); \
    }                                                                                              \
    EXPORT RP_HOT void ros_trace_##name(const void *publisher_handle, const void *message)         \
    {                                                                                              \
        void *fn = atomic_load_explicit(&g_hot.real_##name, memory_order_acquire);                 \
        if (UNLIKELY(publisher_handle == NULL || fn == UNRESOLVED ||                              \
                     !count_publish_fast(rp_impl_of(publisher_handle), counter_slot))) {              \
            name##_slow(publisher_handle, message);                                                \
            return;                                                                                \
        }                                                                                          \
        if (fn != NULL)                                                                            \
            ((void (*)(const void *, const void *))fn)(publisher_handle, message);                 \
    }

PUBLISH_HOOK(rcl_publish, RP_SLOT_INTER)
PUBLISH_HOOK(rclcpp_intra_publish, RP_SLOT_INTRA)

EXPORT RP_HOT void ros_trace_callback_start(const void *callback, const bool is_intra_process)
{
    if (LIKELY(callback != NULL)) {
        struct rp_tls_slot *hit = lookup((uintptr_t)callback, KEY_CALLBACK);
        if (hit->counters != 0) {
            uint64_t gap_now = count_hit(hit, KEY_CALLBACK, is_intra_process ? RP_SLOT_INTRA : RP_SLOT_INTER);
            if (g_seg.timing != NULL)
                rp_timing_start(callback, slot_endpoint(hit), gap_now, is_intra_process);
        }
    }
    FORWARD_THROUGH(g_hot.real_callback_start, callback_start, (const void *, const bool),
                    (callback, is_intra_process));
}

/* rclpy and plain-rcl subscriptions deliver through rmw_take only: count the
 * takes that took a message (taken == false is a spurious wakeup). */
EXPORT RP_HOT void ros_trace_rmw_take(const void *rmw_subscription_handle, const void *message,
                                      int64_t source_timestamp, const bool taken)
{
    if (LIKELY(taken && rmw_subscription_handle != NULL))
        take((uintptr_t)rmw_subscription_handle, source_timestamp, message);
    FORWARD_THROUGH(g_hot.real_rmw_take, rmw_take, (const void *, const void *, int64_t, const bool),
                    (rmw_subscription_handle, message, source_timestamp, taken));
}

/* ---- rcl publishes that tracetools may miss: loaned and serialized (design note 0012) */

enum { MODE_UNKNOWN = 0, MODE_TRACED, MODE_SILENT };
static _Atomic int g_loaned_mode, g_serialized_mode;

/*
 * Publishes through the real rcl function and counts the message unless rcl
 * fired the rcl_publish tracepoint inside it (then ros_trace_rcl_publish
 * counted it). Whether it does is learnt once per process, from the first
 * successful call on a thread with a private lane: only that thread writes
 * its lane, so the counter moved during the call iff the tracepoint fired.
 * A failed call returns before the tracepoint and teaches nothing. A thread
 * on the shared lane before the lesson falls back to the distro. Only these
 * rare calls pay; the ordinary publish path is not touched.
 */
static rp_rcl_ret_t publish_untraced(_Atomic int *mode, void *_Atomic *slot, const char *name,
                                     const void *publisher, const void *message, void *allocation)
{
    void *fn = rp_real(slot, name, "librcl.so");
    if (fn == NULL)
        return RP_RCL_RET_ERROR; /* no librcl in this process: nothing published, nothing crashed */
    rp_rcl_publish_fn real = (rp_rcl_publish_fn)fn;
    int m = atomic_load_explicit(mode, memory_order_acquire);
    if (m == MODE_TRACED || publisher == NULL)
        return real(publisher, message, allocation);
    const struct rp_tls_slot *hit = lookup(rp_impl_of(publisher), KEY_PUB);
    uintptr_t counters = hit->counters;
    struct rp_gap *gap = hit->gap;
    uintptr_t inter = counters + RP_SLOT_INTER * sizeof(uint64_t);
    uint64_t before = counters != 0 ? rp_read_counter(inter) : 0;
    rp_rcl_ret_t ret = real(publisher, message, allocation);
    if (ret != RP_RCL_RET_OK || counters == 0)
        return ret;
    if (m == MODE_UNKNOWN) {
        if (!(counters & SHARED_LANE_BIT)) {
            int learnt = rp_read_counter(inter) != before ? MODE_TRACED : MODE_SILENT;
            int expected = MODE_UNKNOWN;
            atomic_compare_exchange_strong_explicit(mode, &expected, learnt, memory_order_acq_rel,
                                                    memory_order_acquire);
            m = atomic_load_explicit(mode, memory_order_acquire);
            if (m == MODE_TRACED)
                return ret;
        } else if (g_distro != RP_DISTRO_HUMBLE) {
            return ret; /* Jazzy+ rcl fires rcl_publish in both functions */
        }
    }
    rp_bump(inter);
    if (gap != NULL)
        record_gap(gap, KEY_PUB, RP_SLOT_INTER, NULL);
    return ret;
}

EXPORT rp_rcl_ret_t rcl_publish_loaned_message(const void *publisher, void *ros_message, void *allocation)
{
    static void *_Atomic real_fn = UNRESOLVED;
    return publish_untraced(&g_loaned_mode, &real_fn, "rcl_publish_loaned_message", publisher, ros_message,
                            allocation);
}

/* A serialized message knows its size: exact bytes, and the rcl_publish
 * that Jazzy+ fires inside must not size it as a typed message. */
EXPORT rp_rcl_ret_t rcl_publish_serialized_message(const void *publisher, const void *serialized_message,
                                                   void *allocation)
{
    static void *_Atomic real_fn = UNRESOLVED;
    uint64_t ep = 0, size = 0;
    if (publisher != NULL && serialized_message != NULL && rp_lanes() != NULL && g_seg.bytes != NULL) {
        ep = rp_endpoint_of(true, publisher);
        size = ((const rp_serialized_message_t *)serialized_message)->buffer_length;
        rp_bytes_exact(ep, size); /* before the call counts it (bytes.c) */
    }
    rp_tls_hot.bytes_serialized++;
    rp_rcl_ret_t ret = publish_untraced(&g_serialized_mode, &real_fn, "rcl_publish_serialized_message", publisher,
                                        serialized_message, allocation);
    rp_tls_hot.bytes_serialized--;
    if (ret != RP_RCL_RET_OK)
        rp_bytes_exact_undo(ep, size);
    return ret;
}
