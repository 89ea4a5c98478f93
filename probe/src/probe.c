/*
 * libros2_pulse.so: the LD_PRELOAD probe.
 *
 * It interposes the tracetools functions that rcl and rclcpp already call,
 * counts each message into this process's segment, and forwards every call
 * to the real libtracetools function. It has no thread, no timer, no I/O
 * after the segment is created, and no destructor.
 *
 * Per message (rcl_publish, rclcpp_intra_publish, callback_start, rmw_take):
 *   handle -> thread-local cache (256 slots, more once a thread outgrows
 *   them; generation-tagged) -> counter
 *   in this thread's lane -> one plain increment.
 * A cache miss walks lock-free maps. Init tracepoints (rare) take a mutex,
 * update the maps and bump the generation, which invalidates every thread's
 * cache at once: a re-used handle address can never be served stale.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "handle_map.h"
#include "probe_internal.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"
#include "segment_writer.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---------------------------------------------------------------- state */

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
struct rp_hot g_hot = {.gen = 1,
                       .real_rcl_publish = RP_UNRESOLVED,
                       .real_rclcpp_intra_publish = RP_UNRESOLVED,
                       .real_callback_start = RP_UNRESOLVED,
                       .real_rmw_take = RP_UNRESOLVED,
                       .real_callback_end = RP_UNRESOLVED};
#define g_gen g_hot.gen
#define g_lanes g_hot.lanes

static struct rp_config g_cfg;
struct rp_segment g_seg;
static uint64_t g_lane_stride;              /* counters per lane */
static bool g_started;                      /* creation attempted (success or not) */
static bool g_disabled;                     /* creation failed: pass-through only */
static bool g_fork_pending;                 /* forked child: re-create from g_parent on demand */
static struct rp_segment g_parent;
static pthread_once_t g_process_once = PTHREAD_ONCE_INIT;
static uint32_t g_distro;

/* Lanes 0..RP_LANES-2 are handed to one thread each; RP_LANES-1 is the shared atomic lane. */
static bool g_lane_taken[RP_LANES];
static pthread_key_t g_lane_key;

/* handle -> value maps (process-private) */
static struct rp_map g_pubs;        /* rcl publisher impl -> endpoint + 1 */
static struct rp_map g_subs;        /* rcl subscription impl -> endpoint + 1 */
static struct rp_map g_rmw_subs;    /* rmw subscription handle -> endpoint + 1 (rmw_take) */
static struct rp_map g_rclcpp_subs; /* rclcpp (or intra-process) subscription -> rcl subscription impl */
static struct rp_map g_callbacks;   /* callback -> owner | CB_TAG_* */
static struct rp_map g_timers;      /* rcl timer impl -> endpoint + 1 */
static struct rp_map g_services;    /* rcl service impl -> endpoint + 1 */
static struct rp_map g_clients;     /* rcl client impl -> endpoint + 1 */
static struct rp_map g_nodes;       /* rcl node handle -> node index + 1 */

enum { CB_TAG_SUB = 1, CB_TAG_TIMER = 2, CB_TAG_SERVICE = 3, CB_TAG_MASK = 3 };

static struct rp_map g_timer_periods; /* rcl timer impl -> period ns + 1, until an rclcpp timer claims it */

/* Endpoint index -> its prefetch hints (probe_internal.h): dense (32 bytes an
 * endpoint) and shared by every thread, so warmer than any per-thread line. */
struct rp_ep_hint *g_ep_hints;
uint32_t g_ep_hints_len;
__thread uint32_t rp_hinted_ep;

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

/* ---------------------------------------------------------------- thread-local cache */

enum { KEY_PUB = 1, KEY_CALLBACK = 2, KEY_TAKE = 3 };
/*
 * 2-way sets (two handles that hash to one set do not evict each other,
 * upstream KI #13/#15). Every thread starts with 128 sets (8 KiB, static
 * TLS): a usual thread's whole working set fits. A thread that keeps
 * evicting live entries, thousands a second (it cycles through more handles
 * than that, e.g. one executor serving a thousand subscriptions), grows once
 * to a heap cache of 4 sets per endpoint of the process (1024-4096 sets,
 * 64-256 KiB; more would cost TLB misses), so its misses stop. Threads that
 * never need it never pay.
 */
#define TLS_SETS 128u
#define TLS_BIG_MIN 1024u
#define TLS_BIG_MAX 4096u
#define TLS_GROW_EVICTIONS 4096u /* live entries evicted within a second before a thread grows */

struct tls_slot {
    uintptr_t key;
    uint32_t gen;
    /* KEY_PUB, KEY_CALLBACK: the bucket of this thread's last gap on it (prefetch_gap's guess of the next);
     * KEY_TAKE of an rclcpp subscription: its endpoint (index + 1), whose callback_start comes next */
    uint32_t gap_hint;
    uintptr_t counters; /* this endpoint's counters in this thread's lane (| SHARED_LANE_BIT); 0 = ignore */
    struct rp_gap *gap; /* its gap histogram when gap tracking is on, else NULL */
};

struct tls_set {
    struct tls_slot way[2];
} __attribute__((aligned(64))); /* a lookup touches one cache line */

static __thread struct tls_set tls_cache[TLS_SETS];
static __thread struct tls_set *tls_big; /* NULL until this thread grows */
static __thread uint32_t tls_big_shift;  /* 64 - log2(its sets) */
static __thread bool tls_grow_tried;
static __thread uint32_t tls_evictions;       /* in this counting period */
static __thread uint64_t tls_evict_mark_ns;   /* when they started */
static __thread uint32_t tls_misses; /* flushed to the header every 64: no shared atomic per miss */
static __thread _Atomic uint64_t *tls_lane;
static __thread bool tls_lane_shared;
static pthread_key_t g_cache_key; /* frees a grown cache when its thread exits */
static void release_cache(void *big);

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
static inline struct tls_slot *tls_ways(uintptr_t key)
{
    if (LIKELY(tls_big == NULL))
        return tls_cache[((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 57].way;
    return tls_big[((uint64_t)key * UINT64_C(0xBF58476D1CE4E5B9)) >> tls_big_shift].way;
}

/*
 * A cached counter pointer carries the lane kind in its low bit (counters are
 * 8-byte aligned): 0 = this thread's private lane, 1 = the shared lane.
 */
#define SHARED_LANE_BIT ((uintptr_t)1)
/* A KEY_PUB slot of a publisher whose messages vary in size, sampled when bytes are on (bytes.c): the fast path leaves it to count_publish */
#define SIZED_BIT ((uintptr_t)2)
#define TAG_BITS (SHARED_LANE_BIT | SIZED_BIT)

static inline void bump(uintptr_t tagged)
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
    if (UNLIKELY(tagged & SHARED_LANE_BIT))
        atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
    else /* single writer: a plain increment, published with a relaxed store */
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline uint64_t read_counter(uintptr_t tagged)
{
    return atomic_load_explicit((_Atomic uint64_t *)(tagged & ~TAG_BITS), memory_order_relaxed);
}

/* ---------------------------------------------------------------- forwarding */

#define UNRESOLVED RP_UNRESOLVED
#define FORWARD RP_FORWARD
#define FORWARD_THROUGH RP_FORWARD_THROUGH

RP_COLD void *rp_resolve_real(const char *name, const char *lib)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (fn == NULL) {
        void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL) {
            fn = dlsym(h, name);
            dlclose(h);
        }
    }
    return fn;
}

static uint32_t detect_distro(void)
{
    void *h = dlopen("libtracetools.so", RTLD_LAZY | RTLD_NOLOAD);
    void *scope = h != NULL ? h : RTLD_DEFAULT;
    uint32_t d = RP_DISTRO_UNKNOWN;
    if (dlsym(scope, "ros_trace_rmw_take_request") != NULL)
        d = RP_DISTRO_KILTED;
    else if (dlsym(scope, "ros_trace_enabled_rcl_init") != NULL)
        d = RP_DISTRO_JAZZY;
    else if (dlsym(scope, "ros_trace_rcl_publish") != NULL)
        d = RP_DISTRO_HUMBLE;
    if (h != NULL)
        dlclose(h);
    return d;
}

static const char *distro_name(uint32_t d)
{
    switch (d) {
    case RP_DISTRO_HUMBLE: return "humble";
    case RP_DISTRO_JAZZY: return "jazzy";
    case RP_DISTRO_KILTED: return "kilted";
    default: return "unknown";
    }
}

/* ---------------------------------------------------------------- segment lifecycle */

static void atfork_prepare(void) { pthread_mutex_lock(&g_mutex); }
static void atfork_parent(void) { pthread_mutex_unlock(&g_mutex); }

static void atfork_child(void)
{
    /* Only this thread survives. Its lane and cache point into the parent's segment. */
    if (atomic_load_explicit(&g_lanes, memory_order_relaxed) != NULL) {
        g_parent = g_seg;
        if (g_seg.fd >= 0)
            close(g_seg.fd); /* our copy of the fd; the parent's lock is per process and stays */
        memset(&g_seg, 0, sizeof g_seg);
        g_seg.fd = -1;
        atomic_store_explicit(&g_lanes, NULL, memory_order_relaxed);
        g_fork_pending = true; /* a child that execs right away never creates a segment */
        g_started = false;
    }
    memset(g_lane_taken, 0, sizeof g_lane_taken);
    tls_lane = NULL;
    tls_lane_shared = false;
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
    pthread_mutex_unlock(&g_mutex);
}

static void release_lane(void *value)
{
    uintptr_t lane = (uintptr_t)value - 1;
    pthread_mutex_lock(&g_mutex);
    if (lane < RP_LANES - 1)
        g_lane_taken[lane] = false;
    pthread_mutex_unlock(&g_mutex);
}

/*
 * Once per process image, and never under g_mutex: dlopen/dlsym take the
 * loader lock (a component library's constructor may hold it while calling
 * a tracepoint) and pthread_atfork takes the lock fork() holds while it runs
 * our prepare handler, which takes g_mutex. Fork children inherit the result.
 */
static void process_init(void)
{
    rp_config_load(&g_cfg);
    g_distro = detect_distro();
    rp_timing_clock_init();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    pthread_key_create(&g_lane_key, release_lane);
    pthread_key_create(&g_cache_key, release_cache);
}

/*
 * ROS's own tooling, which a launch-wide or shell-wide LD_PRELOAD reaches
 * and which is no part of the robot: `ros2 launch` (its /launch_ros_<pid>
 * node) and the ros2cli daemon (`ros2 daemon`, and the process ros2cli
 * daemonizes, `python3 -c "from ros2cli.daemon.daemonize import ..."`).
 * Design note 0034. Other ros2 verbs stay probed: `ros2 bag play` publishes
 * the robot's data, and a `ros2 topic echo` is real traffic.
 */
static bool ros_tooling(void)
{
    char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return false;
    buf[got] = '\0';
    const char *word[4] = {NULL};
    int n = 0;
    for (const char *w = buf; w < buf + got && n < 4; w += strlen(w) + 1)
        word[n++] = w;
    if (n >= 3 && strcmp(word[1], "-c") == 0 && strstr(word[2], "ros2cli.daemon") != NULL)
        return true;
    for (int i = 0; i < 2 && i < n; i++) { /* ros2, or python3 .../ros2 */
        const char *base = strrchr(word[i], '/');
        if (strcmp(base != NULL ? base + 1 : word[i], "ros2") != 0)
            continue;
        for (int j = i + 1; j < n; j++) /* its verb: the first word after its options */
            if (word[j][0] != '-')
                return strcmp(word[j], "launch") == 0 || strcmp(word[j], "daemon") == 0;
        return false;
    }
    return false;
}

/* Caller holds g_mutex. Creates the segment on the first init tracepoint (or after fork). */
static bool ensure_segment_locked(void)
{
    if (atomic_load_explicit(&g_lanes, memory_order_relaxed) != NULL)
        return true;
    if (g_disabled || g_started)
        return false;
    g_started = true;
    if (ros_tooling()) {
        g_disabled = true; /* pass-through only, as when a segment cannot be made */
        if (!g_cfg.quiet)
            rp_log("not counting in pid %d: ROS tooling (ros2 launch or the ros2cli daemon)", (int)getpid());
        return false;
    }

    if (!rp_segment_create(&g_seg, &g_cfg, g_distro)) {
        g_disabled = true;
        return false;
    }
    if (g_fork_pending) {
        if (!rp_segment_clone_records(&g_seg, &g_parent))
            rp_log("could not copy the parent's records into '%s'", g_seg.path);
        munmap(g_parent.header, g_parent.size);
        memset(&g_parent, 0, sizeof g_parent);
        g_fork_pending = false;
    }
    g_lane_stride = (uint64_t)g_seg.header->endpoint_capacity * RP_COUNTERS_PER_ENDPOINT;
    if (g_ep_hints == NULL) { /* kept across fork: the child's table has the same capacity */
        g_ep_hints = calloc(g_seg.header->endpoint_capacity, sizeof *g_ep_hints);
        g_ep_hints_len = g_ep_hints != NULL ? g_seg.header->endpoint_capacity : 0;
    }
    if (g_seg.bytes != NULL)
        rp_bytes_init(g_seg.header->endpoint_capacity, g_cfg.bytes_every);
    atomic_store_explicit(&g_lanes, g_seg.lanes, memory_order_release);
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
    if (!g_cfg.quiet)
        rp_log("active: pid %d counting into %s (tracetools: %s)", (int)getpid(), g_seg.path,
               distro_name(g_distro));
    return true;
}

/* Returns the base of this thread's lane, claiming one on first use. NULL without a segment. */
static _Atomic uint64_t *thread_lane(void)
{
    _Atomic uint64_t *lane = tls_lane;
    if (LIKELY(lane != NULL))
        return lane;
    pthread_once(&g_process_once, process_init);
    pthread_mutex_lock(&g_mutex);
    _Atomic uint64_t *lanes = NULL;
    if (ensure_segment_locked()) /* after fork this creates the child's own segment */
        lanes = atomic_load_explicit(&g_lanes, memory_order_acquire);
    if (lanes != NULL) {
        uint32_t idx = RP_LANES - 1;
        for (uint32_t i = 0; i < RP_LANES - 1; i++) {
            if (!g_lane_taken[i]) {
                g_lane_taken[i] = true;
                idx = i;
                atomic_fetch_add_explicit(&g_seg.header->lanes_claimed, 1, memory_order_relaxed);
                break;
            }
        }
        tls_lane_shared = idx == RP_LANES - 1;
        tls_lane = lanes + (uint64_t)idx * g_lane_stride;
        if (!tls_lane_shared)
            pthread_setspecific(g_lane_key, (void *)(uintptr_t)(idx + 1));
        lane = tls_lane;
    }
    pthread_mutex_unlock(&g_mutex);
    return lane;
}

int32_t rp_private_lane(void)
{
    _Atomic uint64_t *lane = thread_lane();
    if (lane == NULL || tls_lane_shared)
        return -1;
    return (int32_t)((uint64_t)(lane - atomic_load_explicit(&g_lanes, memory_order_acquire)) / g_lane_stride);
}

/* A gap record's first line and the line of bucket b, for writing. */
static inline void prefetch_gap_lines(const struct rp_gap *g, uint32_t b)
{
    __builtin_prefetch(g, 1, 3);
    __builtin_prefetch(&g->buckets[b], 1, 3);
}

RP_HOT void rp_prefetch_callback(uint64_t ep)
{
    _Atomic uint64_t *lane = tls_lane;
    if (lane == NULL)
        return;
    __builtin_prefetch(lane + (ep - 1) * RP_COUNTERS_PER_ENDPOINT, 1, 3);
    const struct rp_ep_hint *h = rp_ep_hint(ep);
    if (h == NULL)
        return;
    rp_hinted_ep = (uint32_t)ep;
    const void *cb = atomic_load_explicit(&h->callback, memory_order_relaxed);
    if (cb != NULL)
        __builtin_prefetch(tls_ways((uintptr_t)cb ^ KEY_CALLBACK), 0, 3);
    if (g_seg.gaps != NULL) /* tls_lane set: g_seg is published */
        prefetch_gap_lines(&g_seg.gaps[ep - 1], atomic_load_explicit(&h->gap_bucket, memory_order_relaxed));
    if (g_seg.timing != NULL) { /* callback_end's lines: the sum, and the likely duration's bucket */
        struct rp_timing *t = &g_seg.timing[ep - 1];
        __builtin_prefetch(t, 1, 3);
        __builtin_prefetch(&t->buckets[atomic_load_explicit(&h->time_bucket, memory_order_relaxed)], 1, 3);
    }
    uint32_t pub = atomic_load_explicit(&h->publisher_ep, memory_order_relaxed);
    if (pub != 0 && pub <= g_ep_hints_len) { /* the publish the callback will likely make: its lookup, counter and gap */
        __builtin_prefetch(tls_ways(atomic_load_explicit(&h->publisher, memory_order_relaxed) ^ KEY_PUB), 0, 3);
        __builtin_prefetch(lane + (pub - 1) * RP_COUNTERS_PER_ENDPOINT, 1, 3);
        if (g_seg.gaps != NULL)
            prefetch_gap_lines(&g_seg.gaps[pub - 1], atomic_load_explicit(&h->publisher_gap_bucket, memory_order_relaxed));
    }
}

RP_HOT void rp_count_endpoint(uint64_t ep, unsigned slot)
{
    _Atomic uint64_t *lane = thread_lane();
    if (lane != NULL)
        bump((uintptr_t)(lane + (ep - 1) * RP_COUNTERS_PER_ENDPOINT + slot) | (tls_lane_shared ? SHARED_LANE_BIT : 0));
}

/* ---------------------------------------------------------------- resolution (cache miss) */

static inline uintptr_t impl_of(const void *rcl_handle)
{
    /*
     * rcl publisher/subscription/timer/service structs hold one impl pointer,
     * and rcl sometimes publishes through a copy of the struct (/rosout), so
     * the impl is the identity. rcl has just used the handle, so it is valid.
     */
    const void *impl = *(const void *const *)rcl_handle;
    return impl != NULL ? (uintptr_t)impl : (uintptr_t)rcl_handle;
}

static uint64_t callback_endpoint(uintptr_t cb)
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

/* Counts one eviction of a live entry; true when TLS_GROW_EVICTIONS came within a second. */
RP_COLD static bool evictions_call_for_growth(void)
{
    if (tls_grow_tried)
        return false;
    if (tls_evictions++ == 0) {
        tls_evict_mark_ns = rp_mono_ns(); /* a counting period starts */
        return false;
    }
    if (tls_evictions < TLS_GROW_EVICTIONS)
        return false;
    tls_evictions = 0;
    return rp_mono_ns() - tls_evict_mark_ns < 1000000000u;
}

/*
 * Moves this thread to a big cache, empty: its entries are re-resolved on
 * first use. Once per thread; if the allocation fails it stays small for good.
 */
RP_COLD static void grow_cache(void)
{
    tls_grow_tried = true;
    pthread_once(&g_process_once, process_init); /* g_cache_key */
    uint64_t endpoints = 0;
    if (atomic_load_explicit(&g_lanes, memory_order_acquire) != NULL) /* publishes g_seg */
        endpoints = atomic_load_explicit(&g_seg.header->endpoint_count, memory_order_relaxed) +
                    atomic_load_explicit(&g_seg.header->dropped_endpoints, memory_order_relaxed);
    uint32_t sets = TLS_BIG_MIN, shift = 64 - 10;
    for (; sets < TLS_BIG_MAX && sets < 4 * endpoints; sets <<= 1)
        shift--;
    struct tls_set *big = aligned_alloc(64, sets * sizeof *big);
    if (big == NULL)
        return;
    memset(big, 0, sets * sizeof *big);
    tls_big_shift = shift;
    tls_big = big;
    pthread_setspecific(g_cache_key, big);
}

/* Thread exit: a tracepoint fired by a later destructor must find the small cache. */
static void release_cache(void *big)
{
    tls_big = NULL;
    free(big);
}

RP_COLD static struct tls_slot *resolve_slow(uintptr_t handle, unsigned kind, uint32_t gen, struct tls_slot *set)
{
    if ((++tls_misses & 63) == 0 && atomic_load_explicit(&g_lanes, memory_order_acquire) != NULL)
        atomic_fetch_add_explicit(&g_seg.header->cache_misses, 64, memory_order_relaxed); /* g_lanes publishes g_seg */
    bool counted = true;
    uint64_t ep = 0;
    switch (kind) {
    case KEY_PUB: ep = rp_map_get(&g_pubs, handle); break;
    case KEY_CALLBACK:
        ep = callback_endpoint(handle);
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
        _Atomic uint64_t *lane = thread_lane();
        if (lane != NULL) {
            if (counted)
                counters = (uintptr_t)(lane + (ep - 1) * RP_COUNTERS_PER_ENDPOINT) | (tls_lane_shared ? SHARED_LANE_BIT : 0) |
                           (kind == KEY_PUB && rp_bytes_sampled(ep) ? SIZED_BIT : 0);
            else
                next_ep = (uint32_t)ep;
            if (kind != KEY_TAKE)
                gap = g_seg.gaps != NULL ? &g_seg.gaps[ep - 1] : NULL; /* thread_lane() published g_seg */
            else if (g_seg.gaps != NULL || g_seg.latency != NULL || g_seg.links != NULL || rp_bytes_sampled(ep))
                gap = (struct rp_gap *)(uintptr_t)ep; /* a take slot holds the endpoint: its opt-in work may apply */
        }
    }
    /*
     * Tag with the generation read before the lookups: any mapping change
     * after that read bumped the generation, so this entry can only be
     * re-resolved too often, never served stale. The newest entry takes
     * way 0 and the previous one moves to way 1.
     */
    if (set[1].key != 0 && set[1].gen == gen && evictions_call_for_growth()) {
        grow_cache();
        set = tls_ways(handle ^ kind);
    }
    set[1] = set[0];
    set[0] = (struct tls_slot){handle ^ kind, gen, next_ep, counters, gap};
    return set;
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
static inline void prefetch_gap(const struct tls_slot *hit)
{
    if (hit->gap_hint >= COLD_GAP_BUCKET) /* record_gap stores only real buckets */
        prefetch_gap_lines(hit->gap, hit->gap_hint);
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
    if (g_seg.bytes != NULL && rp_bytes_serialized == 0 && rp_bytes_sampled(ep)) /* a serialized take's message is not typed */
        rp_bytes_message(ep, message);
    if (counted && g_seg.gaps != NULL)
        record_gap(&g_seg.gaps[ep - 1], KEY_TAKE, RP_SLOT_INTER, NULL);
    if (g_seg.latency != NULL && source_ns > 0)
        record_latency(&g_seg.latency[ep - 1], source_ns);
    if (g_seg.links != NULL)
        rp_link_take(ep, source_ns, counted);
}

/* The thread-cache slot of (handle, kind), resolved on a miss. */
static inline struct tls_slot *lookup(uintptr_t handle, unsigned kind)
{
    uint32_t gen = atomic_load_explicit(&g_gen, memory_order_acquire);
    uintptr_t key = handle ^ kind;
    struct tls_slot *set = tls_ways(key);
    if (LIKELY(set[0].key == key && set[0].gen == gen))
        return &set[0];
    if (set[1].key == key && set[1].gen == gen)
        return &set[1];
    return resolve_slow(handle, kind, gen, set);
}

/* Counts one message of a resolved endpoint (hit->counters != 0), and its gap
 * when tracked; returns the gap's clock reading (record_gap), or 0. */
static inline uint64_t count_hit(struct tls_slot *hit, unsigned kind, unsigned counter_slot)
{
    if (UNLIKELY(hit->gap != NULL))
        prefetch_gap(hit);
    bump(hit->counters + counter_slot * sizeof(uint64_t));
    if (UNLIKELY(hit->gap != NULL)) /* gap tracking off: no clock read at all */
        return record_gap(hit->gap, kind, counter_slot, &hit->gap_hint);
    return 0;
}

/* Endpoint (index + 1) of a resolved slot: its counters' offset in this thread's lane. */
static inline uint64_t slot_endpoint(const struct tls_slot *hit)
{
    return ((hit->counters & ~TAG_BITS) - (uintptr_t)tls_lane) / (RP_COUNTERS_PER_ENDPOINT * sizeof(uint64_t)) + 1;
}

/*
 * A publish: counted, and named to the callback it is made from (if any) for
 * that callback's next early fetch. The whole path, for what the fast path
 * below leaves: a cache miss, gap tracking, a hint to write.
 */
static __attribute__((noinline)) void count_publish(uintptr_t handle, unsigned counter_slot, const void *message)
{
    struct tls_slot *hit = lookup(handle, KEY_PUB);
    if (hit->counters != 0) {
        count_hit(hit, KEY_PUB, counter_slot);
        /* a random one in RP_BYTES_EVERY of the publishes is sized (bytes.c) */
        if (UNLIKELY(hit->counters & SIZED_BIT) && counter_slot == RP_SLOT_INTER && rp_bytes_serialized == 0)
            rp_bytes_message(slot_endpoint(hit), message);
        if (rp_link_tls.armed != 0)
            rp_link_publish(slot_endpoint(hit), counter_slot);
        if (rp_hinted_ep != 0) { /* else no callback fetched early runs on this thread: none reads hints */
            uint32_t named = rp_hint_publisher(handle, slot_endpoint(hit), hit->gap_hint);
            if (hit->gap == NULL)
                hit->gap_hint = named; /* without gaps the field is free: the hint this thread has written */
        }
    } else if (hit->gap == NULL) {
        hit->gap_hint = rp_hinted_ep; /* an ignored publisher names nothing: the fast path may take it */
    }
}

/*
 * The usual publish, inline in its hook and calling nothing, so the hook
 * saves no registers and forwards by a jump (issue 45: the probe's own
 * instructions a publish): a hit in this thread's cache, no gap
 * tracking, and either no callback fetched early on this thread or one whose
 * hint this publisher already named from this thread (a KEY_PUB slot without
 * gaps keeps that endpoint in gap_hint). False: count_publish must do it.
 */
static inline bool count_publish_fast(uintptr_t handle, unsigned counter_slot)
{
    uint32_t gen = atomic_load_explicit(&g_gen, memory_order_acquire);
    uintptr_t key = handle ^ KEY_PUB;
    struct tls_slot *hit = tls_ways(key);
    if (UNLIKELY(hit->key != key) && (++hit)->key != key)
        return false;
    if (UNLIKELY(hit->gen != gen || hit->gap != NULL || (hit->counters & SIZED_BIT)))
        return false;
    if (UNLIKELY(rp_hinted_ep != 0 && rp_hinted_ep != hit->gap_hint))
        return false;
    if (UNLIKELY(rp_link_tls.armed != 0)) /* links on, inside a callback with an input: count_publish links it */
        return false;
    if (LIKELY(hit->counters != 0))
        bump(hit->counters + counter_slot * sizeof(uint64_t));
    return true;
}

/* rmw_take: counted for subscriptions no rclcpp object delivers for; the
 * latency of every subscription when latency tracking is on. */
static inline void take(uintptr_t handle, int64_t source_ns, const void *message)
{
    const struct tls_slot *hit = lookup(handle, KEY_TAKE);
    if (hit->counters != 0) {
        bump(hit->counters + RP_SLOT_INTER * sizeof(uint64_t));
        rp_hinted_ep = 0; /* an rclpy delivery: the callback that follows was not fetched early */
    } else if (hit->gap_hint != 0) /* rclcpp counts this message at its callback_start: fetch that line now */
        rp_prefetch_callback(hit->gap_hint);
    if (UNLIKELY(hit->gap != NULL)) /* gaps, latency and links off: no clock read at all */
        take_extras((uintptr_t)hit->gap, hit->counters != 0, source_ns, message);
}

/* ---------------------------------------------------------------- init-time bookkeeping */

static uint32_t node_index_of(uintptr_t node)
{
    uint64_t v = node != 0 ? rp_map_get(&g_nodes, node) : 0;
    return v != 0 ? (uint32_t)(v - 1) : RP_NO_NODE;
}

static void link_node_locked(uint32_t ep, uintptr_t node)
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

static void map_put_locked(struct rp_map *m, uintptr_t key, uint64_t value)
{
    if (rp_map_put(m, key, value) == UINT64_MAX)
        atomic_fetch_add_explicit(&g_seg.header->dropped_handles, 1, memory_order_relaxed);
}

/* Marks an endpoint retired (its entity is gone) and queues its slot for reuse. */
static void retire_locked(uint32_t ep)
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
static void add_endpoint_locked(struct rp_map *map, uintptr_t key, uint16_t kind, const char *name,
                                uint64_t aux, uintptr_t node)
{
    uint64_t old = rp_map_get(map, key);
    if (old != 0) {
        retire_locked((uint32_t)(old - 1));
        map_put_locked(map, key, 0); /* never keep counting into the retired endpoint */
    }
    int32_t ep = new_endpoint_locked(kind, name, aux);
    if (ep < 0)
        return;
    map_put_locked(map, key, (uint64_t)ep + 1);
    if (node != 0)
        link_node_locked((uint32_t)ep, node);
}

#define INIT_BEGIN()                                                                               \
    pthread_once(&g_process_once, process_init);                                                   \
    pthread_mutex_lock(&g_mutex);                                                                  \
    if (ensure_segment_locked()) {
#define INIT_END()                                                                                 \
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);                                    \
    }                                                                                              \
    pthread_mutex_unlock(&g_mutex)

/* ---------------------------------------------------------------- interposers */

EXPORT void ros_trace_rcl_node_init(const void *node_handle, const void *rmw_handle, const char *node_name,
                                    const char *node_namespace)
{
    if (node_handle != NULL) {
        INIT_BEGIN();
        int32_t idx = rp_segment_add_node(&g_seg, node_namespace, node_name);
        if (idx >= 0) {
            map_put_locked(&g_nodes, (uintptr_t)node_handle, (uint64_t)idx + 1);
            for (uint32_t i = 0; i < g_pending_count;) {
                if (g_pending[i].node == (uintptr_t)node_handle) {
                    atomic_store_explicit(&g_seg.endpoints[g_pending[i].endpoint].node_index, (uint32_t)idx,
                                          memory_order_release);
                    g_pending[i] = g_pending[--g_pending_count];
                } else {
                    i++;
                }
            }
        }
        INIT_END();
    }
    FORWARD(rcl_node_init, (const void *, const void *, const char *, const char *),
            (node_handle, rmw_handle, node_name, node_namespace));
}

EXPORT void ros_trace_rcl_publisher_init(const void *publisher_handle, const void *node_handle,
                                         const void *rmw_publisher_handle, const char *topic_name,
                                         const size_t queue_depth)
{
    if (publisher_handle != NULL) {
        INIT_BEGIN();
        add_endpoint_locked(&g_pubs, impl_of(publisher_handle), RP_KIND_PUBLISHER, topic_name, queue_depth,
                            (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rcl_publisher_init, (const void *, const void *, const void *, const char *, const size_t),
            (publisher_handle, node_handle, rmw_publisher_handle, topic_name, queue_depth));
}

EXPORT void ros_trace_rcl_subscription_init(const void *subscription_handle, const void *node_handle,
                                            const void *rmw_subscription_handle, const char *topic_name,
                                            const size_t queue_depth)
{
    if (subscription_handle != NULL) {
        INIT_BEGIN();
        add_endpoint_locked(&g_subs, impl_of(subscription_handle), RP_KIND_SUBSCRIPTION, topic_name,
                            queue_depth, (uintptr_t)node_handle);
        if (rmw_subscription_handle != NULL) /* the handle rmw_take will name */
            map_put_locked(&g_rmw_subs, (uintptr_t)rmw_subscription_handle, rp_map_get(&g_subs, impl_of(subscription_handle)));
        INIT_END();
    }
    FORWARD(rcl_subscription_init, (const void *, const void *, const void *, const char *, const size_t),
            (subscription_handle, node_handle, rmw_subscription_handle, topic_name, queue_depth));
}

EXPORT void ros_trace_rclcpp_subscription_init(const void *subscription_handle, const void *subscription)
{
    if (subscription_handle != NULL && subscription != NULL) {
        INIT_BEGIN();
        uintptr_t rcl_impl = impl_of(subscription_handle);
        map_put_locked(&g_rclcpp_subs, (uintptr_t)subscription, rcl_impl);
        uint64_t ep = rp_map_get(&g_subs, rcl_impl);
        if (ep != 0)
            atomic_fetch_or_explicit(&g_seg.endpoints[ep - 1].flags, RP_EP_RCLCPP, memory_order_release);
        INIT_END();
    }
    FORWARD(rclcpp_subscription_init, (const void *, const void *), (subscription_handle, subscription));
}

EXPORT void ros_trace_rclcpp_subscription_callback_added(const void *subscription, const void *callback)
{
    if (subscription != NULL && callback != NULL) {
        INIT_BEGIN();
        map_put_locked(&g_callbacks, (uintptr_t)callback, (uint64_t)(uintptr_t)subscription | CB_TAG_SUB);
        INIT_END();
    }
    FORWARD(rclcpp_subscription_callback_added, (const void *, const void *), (subscription, callback));
}

/*
 * A timer takes an endpoint slot only when rclcpp claims it: only rclcpp timers fire a
 * tracepoint (callback_start). rclpy makes an rcl timer per timed wait (spin_once with a
 * timeout), thousands a minute; they fire nothing, so they get no slot, only their period
 * kept here. A new rcl timer at an old timer's address means the old one is gone.
 */
EXPORT void ros_trace_rcl_timer_init(const void *timer_handle, int64_t period)
{
    if (timer_handle != NULL) {
        INIT_BEGIN();
        uintptr_t impl = impl_of(timer_handle);
        uint64_t old = rp_map_get(&g_timers, impl);
        if (old != 0) {
            retire_locked((uint32_t)(old - 1));
            map_put_locked(&g_timers, impl, 0);
        }
        map_put_locked(&g_timer_periods, impl, (period > 0 ? (uint64_t)period : 0) + 1);
        INIT_END();
    }
    FORWARD(rcl_timer_init, (const void *, int64_t), (timer_handle, period));
}

EXPORT void ros_trace_rclcpp_timer_callback_added(const void *timer_handle, const void *callback)
{
    if (timer_handle != NULL && callback != NULL) {
        INIT_BEGIN();
        uintptr_t impl = impl_of(timer_handle);
        if (rp_map_get(&g_timers, impl) == 0) {
            uint64_t period = rp_map_get(&g_timer_periods, impl);
            add_endpoint_locked(&g_timers, impl, RP_KIND_TIMER, "", period != 0 ? period - 1 : 0, 0);
        }
        map_put_locked(&g_callbacks, (uintptr_t)callback, (uint64_t)impl | CB_TAG_TIMER);
        uint64_t ep = rp_map_get(&g_timers, impl);
        if (ep != 0) /* its fires are counted at callback_start, not at rcl_timer_call */
            atomic_fetch_or_explicit(&g_seg.endpoints[ep - 1].flags, RP_EP_RCLCPP, memory_order_release);
        INIT_END();
    }
    FORWARD(rclcpp_timer_callback_added, (const void *, const void *), (timer_handle, callback));
}

uint64_t rp_describe_endpoint(bool publisher, const void *rcl_handle, struct rp_qos *facts)
{
    uint64_t ep = 0;
    /* Under the init mutex, but no map changes: the threads' caches stay valid (no g_gen bump). */
    pthread_once(&g_process_once, process_init);
    pthread_mutex_lock(&g_mutex);
    if (ensure_segment_locked()) {
        ep = rp_map_get(publisher ? &g_pubs : &g_subs, impl_of(rcl_handle));
        if (ep != 0) { /* else no tracepoint announced it (tracing compiled out, a full table) */
            facts->generation = atomic_load_explicit(&g_seg.endpoints[ep - 1].generation, memory_order_relaxed);
            rp_segment_set_qos(&g_seg, (uint32_t)(ep - 1), facts);
        }
    }
    pthread_mutex_unlock(&g_mutex);
    return ep;
}

void rp_mappings_changed(void) { atomic_fetch_add_explicit(&g_gen, 1, memory_order_release); }

/* The endpoint of a timer no rclcpp object claimed, created on its first call. */
RP_COLD static uint64_t create_timer_endpoint(uintptr_t impl)
{
    uint64_t ep = 0;
    INIT_BEGIN();
    ep = rp_map_get(&g_timers, impl);
    uint64_t period = rp_map_get(&g_timer_periods, impl);
    if (ep == 0 && period != 0) {
        add_endpoint_locked(&g_timers, impl, RP_KIND_TIMER, "", period - 1, 0);
        ep = rp_map_get(&g_timers, impl);
        /* Once only: a full table must not cost every call the mutex and every
         * thread its cache (INIT_END's generation bump). A new rcl_timer_init
         * at this address tries again. */
        map_put_locked(&g_timer_periods, impl, 0);
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
    pthread_once(&g_process_once, process_init);
    pthread_mutex_lock(&g_mutex);
    /* Under the mutex, like every init: the maps are read here; no generation bump (no mapping changed). */
    if (atomic_load_explicit(&g_lanes, memory_order_relaxed) != NULL && g_seg.timing != NULL) {
        uint64_t ep = callback_endpoint((uintptr_t)callback);
        if (ep != 0)
            rp_segment_name_callback(&g_seg, (uint32_t)(ep - 1), symbol);
    }
    pthread_mutex_unlock(&g_mutex);
}

EXPORT void ros_trace_rclcpp_timer_link_node(const void *timer_handle, const void *node_handle)
{
    if (timer_handle != NULL && node_handle != NULL) {
        INIT_BEGIN();
        uint64_t ep = rp_map_get(&g_timers, impl_of(timer_handle));
        if (ep != 0)
            link_node_locked((uint32_t)(ep - 1), (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rclcpp_timer_link_node, (const void *, const void *), (timer_handle, node_handle));
}

EXPORT void ros_trace_rcl_service_init(const void *service_handle, const void *node_handle,
                                       const void *rmw_service_handle, const char *service_name)
{
    if (service_handle != NULL) {
        INIT_BEGIN();
        add_endpoint_locked(&g_services, impl_of(service_handle), RP_KIND_SERVICE, service_name, 0,
                            (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rcl_service_init, (const void *, const void *, const void *, const char *),
            (service_handle, node_handle, rmw_service_handle, service_name));
}

EXPORT void ros_trace_rclcpp_service_callback_added(const void *service_handle, const void *callback)
{
    if (service_handle != NULL && callback != NULL) {
        INIT_BEGIN();
        map_put_locked(&g_callbacks, (uintptr_t)callback,
                       (uint64_t)impl_of(service_handle) | CB_TAG_SERVICE);
        /* its callbacks fire callback_start: readers tell it from an rclpy service, whose do not */
        uint64_t ep = rp_map_get(&g_services, impl_of(service_handle));
        if (ep != 0)
            atomic_fetch_or_explicit(&g_seg.endpoints[ep - 1].flags, RP_EP_RCLCPP, memory_order_release);
        INIT_END();
    }
    FORWARD(rclcpp_service_callback_added, (const void *, const void *), (service_handle, callback));
}

/* rclcpp and rclpy clients alike: rcl_client_init fires it on every distro (tracetools-facts §3). */
EXPORT void ros_trace_rcl_client_init(const void *client_handle, const void *node_handle,
                                      const void *rmw_client_handle, const char *service_name)
{
    if (client_handle != NULL) {
        INIT_BEGIN();
        add_endpoint_locked(&g_clients, impl_of(client_handle), RP_KIND_CLIENT, service_name, 0,
                            (uintptr_t)node_handle);
        INIT_END();
    }
    FORWARD(rcl_client_init, (const void *, const void *, const void *, const char *),
            (client_handle, node_handle, rmw_client_handle, service_name));
}

uint64_t rp_endpoint_of(bool publisher, const void *rcl_handle)
{
    return rp_map_get(publisher ? &g_pubs : &g_subs, impl_of(rcl_handle));
}

uint64_t rp_call_endpoint(const void *rcl_handle, bool client)
{
    return rp_map_get(client ? &g_clients : &g_services, impl_of(rcl_handle));
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
        if (publisher_handle != NULL)                                                              \
            count_publish(impl_of(publisher_handle), counter_slot, message);                       \
        FORWARD_THROUGH(g_hot.real_##name, name, (const void *, const void *), (publisher_handle, message)); \
    }                                                                                              \
    EXPORT RP_HOT void ros_trace_##name(const void *publisher_handle, const void *message)         \
    {                                                                                              \
        void *fn = atomic_load_explicit(&g_hot.real_##name, memory_order_acquire);                 \
        if (UNLIKELY(publisher_handle == NULL || fn == UNRESOLVED ||                              \
                     !count_publish_fast(impl_of(publisher_handle), counter_slot))) {              \
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
        struct tls_slot *hit = lookup((uintptr_t)callback, KEY_CALLBACK);
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
    const struct tls_slot *hit = lookup(impl_of(publisher), KEY_PUB);
    uintptr_t counters = hit->counters;
    struct rp_gap *gap = hit->gap;
    uintptr_t inter = counters + RP_SLOT_INTER * sizeof(uint64_t);
    uint64_t before = counters != 0 ? read_counter(inter) : 0;
    rp_rcl_ret_t ret = real(publisher, message, allocation);
    if (ret != RP_RCL_RET_OK || counters == 0)
        return ret;
    if (m == MODE_UNKNOWN) {
        if (!(counters & SHARED_LANE_BIT)) {
            int learnt = read_counter(inter) != before ? MODE_TRACED : MODE_SILENT;
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
    bump(inter);
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
    rp_bytes_serialized++;
    rp_rcl_ret_t ret = publish_untraced(&g_serialized_mode, &real_fn, "rcl_publish_serialized_message", publisher,
                                        serialized_message, allocation);
    rp_bytes_serialized--;
    if (ret == RP_RCL_RET_OK && publisher != NULL && serialized_message != NULL && rp_lanes() != NULL &&
        g_seg.bytes != NULL) {
        uint64_t ep = rp_endpoint_of(true, publisher);
        if (ep != 0)
            rp_bytes_exact(ep, ((const rp_serialized_message_t *)serialized_message)->buffer_length);
    }
    return ret;
}
