/*
 * The endpoint table (part of the core): which rcl handle, rclcpp object and
 * callback is which endpoint of the segment, in lock-free maps written under
 * the probe's mutex; slot reuse once the table is full; the node an
 * endpoint belongs to, even when it was announced before its node. The init
 * hooks (init.c) fill it; every family asks it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "ros2_pulse/segment.h"
#include "segment_writer.h"

/* handle -> value maps (process-private) */
struct rp_map g_pubs;        /* rcl publisher impl -> endpoint + 1 */
struct rp_map g_subs;        /* rcl subscription impl -> endpoint + 1 */
struct rp_map g_rmw_subs;    /* rmw subscription handle -> endpoint + 1 (rmw_take) */
struct rp_map g_rclcpp_subs; /* rclcpp (or intra-process) subscription -> rcl subscription impl */
struct rp_map g_callbacks;   /* callback -> owner | CB_TAG_* */
struct rp_map g_timers;      /* rcl timer impl -> endpoint + 1 */
struct rp_map g_services;    /* rcl service impl -> endpoint + 1 */
struct rp_map g_clients;     /* rcl client impl -> endpoint + 1 */
static struct rp_map g_nodes;       /* rcl node handle -> node index + 1 */

struct rp_map g_timer_periods; /* rcl timer impl -> period ns + 1, until an rclcpp timer claims it */

/*
 * Retired endpoint slots, oldest first: once the table is full, a new entity
 * takes the slot retired longest ago instead of being dropped (ABI 1.3). A
 * process that creates and destroys entities for ever (lifecycle nodes,
 * clients, rclpy's per-call timers) never runs out. A slot that does not fit
 * the ring is simply never reused.
 */
#define RP_RETIRED_MAX 4096u
static uint32_t g_retired[RP_RETIRED_MAX];
static uint32_t g_retired_head, g_retired_count;

/* Endpoints whose node was not initialised yet (Humble creates /rosout before rcl_node_init). */
#define RP_PENDING_MAX 256
static struct {
    uintptr_t node;
    uint32_t endpoint;
} g_pending[RP_PENDING_MAX];
static uint32_t g_pending_count;

/* ---------------------------------------------------------------- resolution */

uint64_t rp_callback_endpoint(uintptr_t cb)
{
    uint64_t owner = rp_map_get(&g_callbacks, cb);
    if (owner == 0)
        return 0; /* never announced: not ours to count (no chain will ever exist) */
    uintptr_t ptr = (uintptr_t)owner & ~(uintptr_t)CB_TAG_MASK;
    uint64_t ep = 0;
    switch (owner & CB_TAG_MASK) {
    case CB_TAG_SUB: {
        uint64_t rcl_impl = rp_map_get(&g_rclcpp_subs, ptr);
        ep = rcl_impl != 0 ? rp_map_get(&g_subs, (uintptr_t)rcl_impl) : 0;
        break;
    }
    case CB_TAG_TIMER: ep = rp_map_get(&g_timers, ptr); break;
    case CB_TAG_SERVICE: ep = rp_map_get(&g_services, ptr); break;
    }
    /*
     * 0 also when the chain is not complete yet (an intra-process
     * subscription announces its callback first) or its endpoint was dropped
     * (segment full). Cached as "ignore" all the same: the init that
     * completes a chain bumps the generation, which drops this entry, and a
     * dropped endpoint must not cost a three-map walk per message forever.
     */
    return ep;
}

/* ---------------------------------------------------------------- init-time bookkeeping */

static uint32_t node_index_of(uintptr_t node)
{
    uint64_t v = node != 0 ? rp_map_get(&g_nodes, node) : 0;
    return v != 0 ? (uint32_t)(v - 1) : RP_NO_NODE;
}

void rp_link_node_locked(uint32_t ep, uintptr_t node)
{
    uint32_t idx = node_index_of(node);
    if (idx != RP_NO_NODE) {
        atomic_store_explicit(&g_seg.endpoints[ep].node_index, idx, memory_order_release);
    } else if (node != 0 && g_pending_count < RP_PENDING_MAX) {
        g_pending[g_pending_count].node = node;
        g_pending[g_pending_count].endpoint = ep;
        g_pending_count++;
    }
}

void rp_map_put_locked(struct rp_map *m, uintptr_t key, uint64_t value)
{
    if (rp_map_put(m, key, value) == UINT64_MAX)
        atomic_fetch_add_explicit(&g_seg.header->dropped_handles, 1, memory_order_relaxed);
}

/* Marks an endpoint retired (its entity is gone) and queues its slot for reuse. */
void rp_retire_locked(uint32_t ep)
{
    uint32_t was = atomic_fetch_or_explicit(&g_seg.endpoints[ep].flags, RP_EP_RETIRED, memory_order_release);
    if ((was & RP_EP_RETIRED) == 0 && g_retired_count < RP_RETIRED_MAX)
        g_retired[(g_retired_head + g_retired_count++) % RP_RETIRED_MAX] = ep;
}

/* Forgets every handle that still names slot ep, in all maps: a reused slot counts only for its new entity. */
static void forget_slot_locked(uint32_t ep)
{
    struct rp_map *maps[] = {&g_pubs, &g_subs, &g_rmw_subs, &g_timers, &g_services, &g_clients};
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++)
        rp_map_forget_value(maps[m], (uint64_t)ep + 1);
    for (uint32_t i = 0; i < g_pending_count;) {
        if (g_pending[i].endpoint == ep)
            g_pending[i] = g_pending[--g_pending_count];
        else
            i++;
    }
}

/* A fresh slot while the table has room; then the slot retired longest ago. */
static int32_t new_endpoint_locked(uint16_t kind, const char *name, uint64_t aux)
{
    bool full = atomic_load_explicit(&g_seg.header->endpoint_count, memory_order_relaxed) >=
                g_seg.header->endpoint_capacity;
    if (!full || g_retired_count == 0)
        return rp_segment_add_endpoint(&g_seg, kind, name, aux, RP_NO_NODE); /* full: counted as dropped */
    uint32_t slot = g_retired[g_retired_head];
    g_retired_head = (g_retired_head + 1) % RP_RETIRED_MAX;
    g_retired_count--;
    forget_slot_locked(slot);
    return rp_segment_reuse_endpoint(&g_seg, slot, kind, name, aux, RP_NO_NODE);
}

/* Creates an endpoint for handle in map; a re-used handle retires the endpoint it named before. */
void rp_add_endpoint_locked(struct rp_map *map, uintptr_t key, uint16_t kind, const char *name, uint64_t aux,
                            uintptr_t node)
{
    uint64_t old = rp_map_get(map, key);
    if (old != 0) {
        rp_retire_locked((uint32_t)(old - 1));
        rp_map_put_locked(map, key, 0); /* never keep counting into the retired endpoint */
    }
    int32_t ep = new_endpoint_locked(kind, name, aux);
    if (ep < 0)
        return;
    rp_map_put_locked(map, key, (uint64_t)ep + 1);
    if (node != 0)
        rp_link_node_locked((uint32_t)ep, node);
}

void rp_add_node_locked(uintptr_t node, const char *ns, const char *name)
{
    int32_t idx = rp_segment_add_node(&g_seg, ns, name);
    if (idx < 0)
        return;
    rp_map_put_locked(&g_nodes, node, (uint64_t)idx + 1);
    for (uint32_t i = 0; i < g_pending_count;) {
        if (g_pending[i].node == node) {
            atomic_store_explicit(&g_seg.endpoints[g_pending[i].endpoint].node_index, (uint32_t)idx,
                                  memory_order_release);
            g_pending[i] = g_pending[--g_pending_count];
        } else {
            i++;
        }
    }
}

uint64_t rp_describe_endpoint(bool publisher, const void *rcl_handle, struct rp_qos *facts)
{
    uint64_t ep = 0;
    /* Under the init mutex, but no map changes: the threads' caches stay valid (no g_gen bump). */
    if (rp_init_lock()) {
        ep = rp_map_get(publisher ? &g_pubs : &g_subs, rp_impl_of(rcl_handle));
        if (ep != 0) { /* else no tracepoint announced it (tracing compiled out, a full table) */
            facts->generation = atomic_load_explicit(&g_seg.endpoints[ep - 1].generation, memory_order_relaxed);
            rp_segment_set_qos(&g_seg, (uint32_t)(ep - 1), facts);
        }
    }
    rp_unlock();
    return ep;
}

/* The endpoint of a timer no rclcpp object claimed, created on its first call. */
RP_COLD static uint64_t create_timer_endpoint(uintptr_t impl)
{
    uint64_t ep = 0;
    INIT_BEGIN();
    ep = rp_map_get(&g_timers, impl);
    uint64_t period = rp_map_get(&g_timer_periods, impl);
    if (ep == 0 && period != 0) {
        rp_add_endpoint_locked(&g_timers, impl, RP_KIND_TIMER, "", period - 1, 0);
        ep = rp_map_get(&g_timers, impl);
        /* Once only: a full table must not cost every call the mutex and every
         * thread its cache (INIT_END's generation bump). A new rcl_timer_init
         * at this address tries again. */
        rp_map_put_locked(&g_timer_periods, impl, 0);
    }
    INIT_END();
    return ep;
}

RP_HOT uint64_t rp_timer_endpoint(uintptr_t impl, bool create)
{
    uint64_t ep = rp_map_get(&g_timers, impl);
    if (ep != 0 || !create || rp_map_get(&g_timer_periods, impl) == 0)
        return ep; /* a timer no rcl_timer_init announced is not ours */
    return create_timer_endpoint(impl);
}

void rp_name_callback(const void *callback, const char *symbol)
{
    if (callback == NULL || symbol == NULL || *symbol == '\0')
        return;
    rp_lock();
    /* Under the mutex, like every init: the maps are read here; no generation bump (no mapping changed). */
    if (rp_lanes() != NULL && g_seg.timing != NULL) {
        uint64_t ep = rp_callback_endpoint((uintptr_t)callback);
        if (ep != 0)
            rp_segment_name_callback(&g_seg, (uint32_t)(ep - 1), symbol);
    }
    rp_unlock();
}

uint64_t rp_endpoint_of(bool publisher, const void *rcl_handle)
{
    return rp_map_get(publisher ? &g_pubs : &g_subs, rp_impl_of(rcl_handle));
}

uint64_t rp_call_endpoint(const void *rcl_handle, bool client)
{
    return rp_map_get(client ? &g_clients : &g_services, rp_impl_of(rcl_handle));
}
