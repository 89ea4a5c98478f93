/*
 * libros2_pulse.so: the LD_PRELOAD probe. This file is its core
 * (docs/ARCHITECTURE.md): the state, the thread-local cache, the lanes, the
 * segment's life and the endpoint table. The hooks are in one file per
 * family (init.c, topics.c, callbacks.c, services.c, ...), which call the
 * core through core.h; the core calls none of them.
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

#include "core.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"
#include "segment_writer.h"

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

struct rp_config g_cfg;
struct rp_segment g_seg;
static uint64_t g_lane_stride;              /* counters per lane */
static bool g_started;                      /* creation attempted (success or not) */
static bool g_disabled;                     /* creation failed: pass-through only */
static bool g_fork_pending;                 /* forked child: re-create from g_parent on demand */
static struct rp_segment g_parent;
static pthread_once_t g_process_once = PTHREAD_ONCE_INIT;
uint32_t g_distro;

/* Lanes 0..RP_LANES-2 are handed to one thread each; RP_LANES-1 is the shared atomic lane. */
static bool g_lane_taken[RP_LANES];
static pthread_key_t g_lane_key;

/* Endpoint index -> its prefetch hints (core.h): dense (32 bytes an
 * endpoint) and shared by every thread, so warmer than any per-thread line. */
struct rp_ep_hint *g_ep_hints;
uint32_t g_ep_hints_len;

/* ---------------------------------------------------------------- thread-local cache */

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
#define TLS_BIG_MIN 1024u
#define TLS_BIG_MAX 4096u
#define TLS_GROW_EVICTIONS 4096u /* live entries evicted within a second before a thread grows */

__thread struct rp_tls_set rp_tls_cache[RP_TLS_SETS];
__thread struct rp_tls_hot rp_tls_hot;
__thread _Atomic uint64_t *rp_tls_lane;
__thread bool rp_tls_lane_shared;
static __thread bool tls_grow_tried;
static __thread uint32_t tls_evictions;       /* in this counting period */
static __thread uint64_t tls_evict_mark_ns;   /* when they started */
static __thread uint32_t tls_misses; /* flushed to the header every 64: no shared atomic per miss */
static pthread_key_t g_cache_key; /* frees a grown cache when its thread exits */
static void release_cache(void *big);

/* ---------------------------------------------------------------- forwarding */

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
    rp_tls_lane = NULL;
    rp_tls_lane_shared = false;
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
    rp_clock_init();
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
    atomic_store_explicit(&g_lanes, g_seg.lanes, memory_order_release);
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
    if (!g_cfg.quiet)
        rp_log("active: pid %d counting into %s (tracetools: %s)", (int)getpid(), g_seg.path,
               distro_name(g_distro));
    return true;
}

/* Returns the base of this thread's lane, claiming one on first use. NULL without a segment. */
_Atomic uint64_t *rp_thread_lane(void)
{
    _Atomic uint64_t *lane = rp_tls_lane;
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
        rp_tls_lane_shared = idx == RP_LANES - 1;
        rp_tls_lane = lanes + (uint64_t)idx * g_lane_stride;
        if (!rp_tls_lane_shared)
            pthread_setspecific(g_lane_key, (void *)(uintptr_t)(idx + 1));
        lane = rp_tls_lane;
    }
    pthread_mutex_unlock(&g_mutex);
    return lane;
}

int32_t rp_private_lane(void)
{
    _Atomic uint64_t *lane = rp_thread_lane();
    if (lane == NULL || rp_tls_lane_shared)
        return -1;
    return (int32_t)((uint64_t)(lane - atomic_load_explicit(&g_lanes, memory_order_acquire)) / g_lane_stride);
}

RP_HOT void rp_prefetch_callback(uint64_t ep)
{
    _Atomic uint64_t *lane = rp_tls_lane;
    if (lane == NULL)
        return;
    __builtin_prefetch(lane + (ep - 1) * RP_COUNTERS_PER_ENDPOINT, 1, 3);
    const struct rp_ep_hint *h = rp_ep_hint(ep);
    if (h == NULL)
        return;
    rp_tls_hot.hinted_ep = (uint32_t)ep;
    const void *cb = atomic_load_explicit(&h->callback, memory_order_relaxed);
    if (cb != NULL)
        __builtin_prefetch(rp_tls_ways((uintptr_t)cb ^ KEY_CALLBACK), 0, 3);
    if (g_seg.gaps != NULL) /* rp_tls_lane set: g_seg is published */
        rp_prefetch_gap_lines(&g_seg.gaps[ep - 1], atomic_load_explicit(&h->gap_bucket, memory_order_relaxed));
    if (g_seg.timing != NULL) { /* callback_end's lines: the sum, and the likely duration's bucket */
        struct rp_timing *t = &g_seg.timing[ep - 1];
        __builtin_prefetch(t, 1, 3);
        __builtin_prefetch(&t->buckets[atomic_load_explicit(&h->time_bucket, memory_order_relaxed)], 1, 3);
    }
    uint32_t pub = atomic_load_explicit(&h->publisher_ep, memory_order_relaxed);
    if (pub != 0 && pub <= g_ep_hints_len) { /* the publish the callback will likely make: its lookup, counter and gap */
        __builtin_prefetch(rp_tls_ways(atomic_load_explicit(&h->publisher, memory_order_relaxed) ^ KEY_PUB), 0, 3);
        __builtin_prefetch(lane + (pub - 1) * RP_COUNTERS_PER_ENDPOINT, 1, 3);
        if (g_seg.gaps != NULL)
            rp_prefetch_gap_lines(&g_seg.gaps[pub - 1], atomic_load_explicit(&h->publisher_gap_bucket, memory_order_relaxed));
    }
}

RP_HOT void rp_count_endpoint(uint64_t ep, unsigned slot)
{
    _Atomic uint64_t *lane = rp_thread_lane();
    if (lane != NULL)
        rp_bump((uintptr_t)(lane + (ep - 1) * RP_COUNTERS_PER_ENDPOINT + slot) | (rp_tls_lane_shared ? SHARED_LANE_BIT : 0));
}

/* ---------------------------------------------------------------- the cache's growth */

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
    struct rp_tls_set *big = aligned_alloc(64, sets * sizeof *big);
    if (big == NULL)
        return;
    memset(big, 0, sets * sizeof *big);
    rp_tls_hot.big_shift = shift;
    rp_tls_hot.big = big;
    pthread_setspecific(g_cache_key, big);
}

/* Thread exit: a tracepoint fired by a later destructor must find the small cache. */
static void release_cache(void *big)
{
    rp_tls_hot.big = NULL;
    free(big);
}

RP_COLD struct rp_tls_slot *rp_cache_install(struct rp_tls_slot *set, struct rp_tls_slot slot)
{
    if ((++tls_misses & 63) == 0 && atomic_load_explicit(&g_lanes, memory_order_acquire) != NULL)
        atomic_fetch_add_explicit(&g_seg.header->cache_misses, 64, memory_order_relaxed); /* g_lanes publishes g_seg */
    /* The newest entry takes way 0 and the previous one moves to way 1. */
    if (set[1].key != 0 && set[1].gen == slot.gen && evictions_call_for_growth()) {
        grow_cache();
        set = rp_tls_ways(slot.key);
    }
    set[1] = set[0];
    set[0] = slot;
    return set;
}

/* ---------------------------------------------------------------- init-time locking */

/* The probe's mutex, for init-time work (core.h). Never taken under it. */
void rp_lock(void)
{
    pthread_once(&g_process_once, process_init);
    pthread_mutex_lock(&g_mutex);
}

bool rp_init_lock(void)
{
    rp_lock();
    return ensure_segment_locked();
}

void rp_unlock(void) { pthread_mutex_unlock(&g_mutex); }

void rp_mappings_changed(void) { atomic_fetch_add_explicit(&g_gen, 1, memory_order_release); }
