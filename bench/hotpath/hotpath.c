/*
 * bench/hotpath: the counting path alone, leg by leg, in one run.
 *
 *   hotpath [--legs a,b,...] [--threads 1,2,8] [--endpoints 1,4,64,1024]
 *           [--msgs N] [--reps R] [--pin 1]
 *
 * Legs:
 *   floor      a relaxed atomic increment of a fixed per-thread counter
 *   plain      a plain per-thread increment (the physical limit)
 *   old        upstream 0.1: global mutex + per-message topic string hash
 *   tls1       upstream 0.1: single-entry thread-local cache over a rwlock
 *   tls256     upstream 0.2+: 256-slot stride-breaking TLS cache over a rwlock
 *   none       the bare call into libtracetools (what the host pays anyway)
 *   probe      the shipped probe through the interposed ros_trace_rcl_publish
 *   probe_cb   the shipped probe through ros_trace_callback_start
 *   probe_take the shipped probe through ros_trace_rmw_take on an rclpy-style
 *              subscription (counted there)
 *   probe_take_cpp  ros_trace_rmw_take on an rclcpp subscription: not counted
 *              (callback_start does), the extra cost every rclcpp message pays
 *   none_pair  the bare libtracetools callback_start + callback_end
 *   null_pair  the same through the null shim (dlopened RTLD_LOCAL beside
 *              the probe): interposition without counting
 *   probe_cb_pair   the shipped probe through callback_start + callback_end:
 *              counting plus, with timing on (the default), the callback's
 *              duration and its thread's busy time (ABI 1.4)
 *   none_srv   a server's call as rclpy makes it, straight into librcl:
 *              rcl_take_request_with_info + rcl_send_response (the stand-in
 *              librcl's loopback: no system call)
 *   probe_srv  the same through the probe's wrappers (ABI 1.6)
 *   none_cli   a client's call straight into librcl: rcl_send_request +
 *              rcl_take_response_with_info
 *   probe_cli  the same through the probe's wrappers
 *              (each of these four counts one call: two rcl functions)
 *
 * Each thread cycles over its own ENDPOINTS endpoints, whose handles are
 * allocated at a 64-byte stride (as malloc places same-type objects).
 * Output: CSV lines "leg,threads,endpoints,cpu_ns_per_msg", where
 * cpu_ns_per_msg = total thread CPU time / total messages (never wall time
 * over all threads' messages). Legs are interleaved and repeated: each
 * repetition runs every leg once, in a rotated order. --pin 1 binds
 * worker thread t to the t-th CPU this process may run on (modulo their
 * count): a thread that migrates mid-leg pays cold caches in one arm and
 * not the other, which on a 2-vCPU VM is most of a paired run's noise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim_msgs.h"
#include "sim_rcl.h"

void ros_trace_rcl_node_init(const void *, const void *, const char *, const char *);
void ros_trace_rcl_publisher_init(const void *, const void *, const void *, const char *, size_t);
void ros_trace_rcl_subscription_init(const void *, const void *, const void *, const char *, size_t);
void ros_trace_rclcpp_subscription_init(const void *, const void *);
void ros_trace_rclcpp_subscription_callback_added(const void *, const void *);
void ros_trace_rcl_publish(const void *, const void *);
void ros_trace_rclcpp_intra_publish(const void *, const void *);
void ros_trace_rclcpp_ring_buffer_enqueue(const void *, const uint64_t, const uint64_t, const bool);
void ros_trace_rcl_timer_init(const void *, int64_t);
void ros_trace_rclcpp_timer_callback_added(const void *, const void *);
void ros_trace_rclcpp_timer_link_node(const void *, const void *);
void ros_trace_callback_start(const void *, const bool);
void ros_trace_callback_end(const void *);
void ros_trace_rmw_take(const void *, const void *, int64_t, const bool);
void ros_trace_rcl_service_init(const void *, const void *, const void *, const char *);
void ros_trace_rcl_client_init(const void *, const void *, const void *, const char *);

#define MAX_THREADS 64
#define STRIDE 64 /* bytes between consecutive handles of one type */

/* ------------------------------------------------------------ endpoints */

struct endpoint {
    char topic[64];
    _Atomic uint64_t count;
};

struct thread_set {
    int n;
    char *handles;              /* n handles at STRIDE; each starts with an impl pointer */
    char *impls;                /* n impls at STRIDE */
    char *callbacks;            /* n callback objects at STRIDE */
    char *rmw_py, *rmw_cpp;     /* n rmw subscription handles at STRIDE: rclpy-style and rclcpp */
    void **services, **clients; /* n rcl service and client handles (impl: the stand-in's loopback) */
    struct endpoint **eps;      /* for the re-implemented legs */
    char *outs, *out_impls;     /* n more publishers at STRIDE: a timer's outputs (topic ".../out") */
    char *timers, *timer_impls; /* n rcl timer handles at STRIDE, their callbacks after the subscriptions' */
    char *typed[2];             /* n publishers each of sim_msgs Stamp and Sample, made through rcl_publisher_init (bytes legs) */
    _Atomic uint64_t floor_ctr; /* the floor leg's counter */
    uint64_t plain_ctr;
    char pad[64];
};

static struct thread_set sets[MAX_THREADS];

/* The bytes legs' messages: a fixed-size Stamp, a Sample with a 1000-byte payload (sim/rosidl/sim_msgs.h). */
static struct sim_msgs_stamp stamp_msg;
static uint8_t sample_payload[1000];
static struct sim_msgs_sample sample_msg = {{0}, {(char *)"bench", 5, 6}, {sample_payload, sizeof sample_payload, sizeof sample_payload}};

/* ------------------------------------------------------------ upstream designs, re-implemented */

/* A chained hash map from a key (pointer or string hash) to an endpoint. */
#define MAP_BUCKETS 4096
struct map_entry {
    uintptr_t key;
    struct endpoint *ep;
    struct map_entry *next;
};
static struct map_entry *map_buckets[MAP_BUCKETS];
static pthread_mutex_t old_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t registry_lock = PTHREAD_RWLOCK_INITIALIZER;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void map_insert(uintptr_t key, struct endpoint *ep)
{
    struct map_entry *e = malloc(sizeof *e);
    e->key = key;
    e->ep = ep;
    e->next = map_buckets[key % MAP_BUCKETS];
    map_buckets[key % MAP_BUCKETS] = e;
}

static struct endpoint *map_find(uintptr_t key)
{
    for (struct map_entry *e = map_buckets[key % MAP_BUCKETS]; e; e = e->next)
        if (e->key == key)
            return e->ep;
    return NULL;
}

/* upstream 0.1: every message locks a global mutex and hashes the topic string */
static void leg_old(const void *handle, const struct endpoint *ep)
{
    (void)handle;
    pthread_mutex_lock(&old_mutex);
    struct endpoint *e = map_find((uintptr_t)fnv1a(ep->topic));
    if (e)
        atomic_fetch_add_explicit(&e->count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&old_mutex);
}

/* upstream 0.1: one cached (handle, counter) per thread; a miss takes the read lock */
static __thread uintptr_t tls1_key;
static __thread struct endpoint *tls1_ep;
static void leg_tls1(const void *handle, const struct endpoint *unused)
{
    (void)unused;
    if (tls1_key != (uintptr_t)handle) {
        pthread_rwlock_rdlock(&registry_lock);
        tls1_ep = map_find((uintptr_t)handle);
        pthread_rwlock_unlock(&registry_lock);
        tls1_key = (uintptr_t)handle;
    }
    if (tls1_ep)
        atomic_fetch_add_explicit(&tls1_ep->count, 1, memory_order_relaxed);
}

/* upstream 0.2+: 256 direct-mapped slots indexed ((p>>4)^(p>>10))&255 (KI #15) */
static __thread struct {
    uintptr_t key;
    struct endpoint *ep;
} tls256[256];
static void leg_tls256(const void *handle, const struct endpoint *unused)
{
    (void)unused;
    uintptr_t p = (uintptr_t)handle;
    unsigned i = ((p >> 4) ^ (p >> 10)) & 255;
    if (tls256[i].key != p) {
        pthread_rwlock_rdlock(&registry_lock);
        tls256[i].ep = map_find(p);
        pthread_rwlock_unlock(&registry_lock);
        tls256[i].key = p;
    }
    if (tls256[i].ep)
        atomic_fetch_add_explicit(&tls256[i].ep->count, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------ legs */

enum leg_id { L_FLOOR, L_PLAIN, L_OLD, L_TLS1, L_TLS256, L_NONE, L_PROBE, L_PROBE_CB, L_PROBE_TAKE, L_PROBE_TAKE_CPP,
              L_NONE_PAIR, L_PROBE_CB_PAIR, L_NULL_PAIR, L_NONE_SRV, L_PROBE_SRV, L_NONE_CLI, L_PROBE_CLI, L_PROBE_RELAY, L_PROBE_TAKE_CB, L_PROBE_INTRA, L_PROBE_TIMER_PUB, L_PROBE_TIMER_CB, L_PROBE_FIXED, L_PROBE_SIZED, L_COUNT };
static const char *const leg_names[L_COUNT] = {"floor", "plain", "old", "tls1", "tls256", "none", "probe", "probe_cb",
                                               "probe_take", "probe_take_cpp", "none_pair", "probe_cb_pair", "null_pair",
                                               "none_srv", "probe_srv", "none_cli", "probe_cli", "probe_relay", "probe_take_cb",
                                               "probe_intra", "probe_timer_pub", "probe_timer_cb", "probe_fixed", "probe_sized"};

/* librcl's own service calls (the stand-in's), for the none_* legs; the probe's are the linked symbols */
static rp_rcl_take_request_with_info_fn librcl_take_request;
static rp_rcl_send_response_fn librcl_send_response;
static rp_rcl_send_request_fn librcl_send_request;
static rp_rcl_take_response_with_info_fn librcl_take_response;

typedef void (*publish_fn)(const void *, const void *);
static publish_fn tracetools_publish;
typedef void (*cb_start_fn)(const void *, const bool);
typedef void (*cb_end_fn)(const void *);
static cb_start_fn tracetools_cb_start, null_cb_start;
static cb_end_fn tracetools_cb_end, null_cb_end;

struct job {
    int leg, set;
    long msgs;
    double cpu_ns;
};

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define LOOP(body)                                                                                 \
    for (long i = 0; i < j->msgs;)                                                                 \
        for (int e = 0; e < s->n && i < j->msgs; e++, i++) {                                       \
            body;                                                                                  \
        }

/* The service-call legs, apart: the message legs' loops compile as they did before them. */
static __attribute__((noinline)) void call_legs(struct job *j, struct thread_set *s, char *msg)
{
    switch (j->leg) {
    case L_NONE_SRV:
        LOOP(rp_rmw_service_info_t info; librcl_take_request(s->services[e], &info, msg);
             librcl_send_response(s->services[e], &info.request_id, msg));
        break;
    case L_PROBE_SRV:
        LOOP(rp_rmw_service_info_t info; rcl_take_request_with_info(s->services[e], &info, msg);
             rcl_send_response(s->services[e], &info.request_id, msg));
        break;
    case L_NONE_CLI:
        LOOP(int64_t seq; rp_rmw_service_info_t info; librcl_send_request(s->clients[e], msg, &seq);
             librcl_take_response(s->clients[e], &info, msg));
        break;
    case L_PROBE_CLI:
        LOOP(int64_t seq; rp_rmw_service_info_t info; rcl_send_request(s->clients[e], msg, &seq);
             rcl_take_response_with_info(s->clients[e], &info, msg));
        break;
    }
}

static void *worker(void *arg)
{
    struct job *j = arg;
    struct thread_set *s = &sets[j->set];
    char msg[8];
    double t0 = thread_cpu_ns();
    switch (j->leg) {
    case L_FLOOR:
        LOOP(atomic_fetch_add_explicit(&s->floor_ctr, 1, memory_order_relaxed));
        break;
    case L_PLAIN:
        LOOP(s->plain_ctr++; __asm__ volatile("" : : "r"(s->plain_ctr) : "memory"));
        break;
    case L_OLD:
        LOOP(leg_old(s->handles + e * STRIDE, s->eps[e]));
        break;
    case L_TLS1:
        LOOP(leg_tls1(s->handles + e * STRIDE, NULL));
        break;
    case L_TLS256:
        LOOP(leg_tls256(s->handles + e * STRIDE, NULL));
        break;
    case L_NONE:
        LOOP(tracetools_publish(s->handles + e * STRIDE, msg));
        break;
    case L_PROBE:
        LOOP(ros_trace_rcl_publish(s->handles + e * STRIDE, msg));
        break;
    case L_PROBE_CB:
        LOOP(ros_trace_callback_start(s->callbacks + e * STRIDE, false));
        break;
    case L_PROBE_TAKE:
        LOOP(ros_trace_rmw_take(s->rmw_py + e * STRIDE, msg, 1, true));
        break;
    case L_PROBE_TAKE_CPP:
        LOOP(ros_trace_rmw_take(s->rmw_cpp + e * STRIDE, msg, 1, true));
        break;
    case L_NONE_PAIR:
        LOOP(tracetools_cb_start(s->callbacks + e * STRIDE, false); tracetools_cb_end(s->callbacks + e * STRIDE));
        break;
    case L_NULL_PAIR:
        LOOP(null_cb_start(s->callbacks + e * STRIDE, false); null_cb_end(s->callbacks + e * STRIDE));
        break;
    case L_PROBE_CB_PAIR:
        LOOP(ros_trace_callback_start(s->callbacks + e * STRIDE, false); ros_trace_callback_end(s->callbacks + e * STRIDE));
        break;
    case L_NONE_SRV:
    case L_PROBE_SRV:
    case L_NONE_CLI:
    case L_PROBE_CLI:
        call_legs(j, s, msg);
        break;
    case L_PROBE_FIXED: /* a publish of a fixed-size type (sim_msgs Stamp): with bytes on, its type was learnt at init */
        LOOP(ros_trace_rcl_publish(s->typed[0] + e * STRIDE, &stamp_msg));
        break;
    case L_PROBE_SIZED: /* a publish of a variable-size type (sim_msgs Sample, 1000 B): with bytes on, one in 16 is walked */
        LOOP(ros_trace_rcl_publish(s->typed[1] + e * STRIDE, &sample_msg));
        break;
    case L_PROBE_INTRA: /* an intra-process publish outside callbacks and its ring buffer enqueue (Jazzy) */
        LOOP(ros_trace_rclcpp_intra_publish(s->handles + e * STRIDE, msg);
             ros_trace_rclcpp_ring_buffer_enqueue(s->callbacks + e * STRIDE, (uint64_t)i % 10, 1, false));
        break;
    case L_PROBE_TIMER_PUB: /* a timer callback that publishes, its node's subscriptions having taken a message (rule 3) */
    case L_PROBE_TIMER_CB: { /* the same callback without the publish: the sampling's share, the publish's by difference */
        for (int e = 0; e < s->n; e++) {
            ros_trace_rmw_take(s->rmw_cpp + e * STRIDE, msg, 1, true);
            ros_trace_callback_start(s->callbacks + e * STRIDE, false);
            ros_trace_callback_end(s->callbacks + e * STRIDE);
        }
        char *tcb = s->callbacks + (size_t)s->n * STRIDE;
        if (j->leg == L_PROBE_TIMER_PUB) {
            LOOP(ros_trace_callback_start(tcb + e * STRIDE, false); ros_trace_rcl_publish(s->outs + e * STRIDE, msg);
                 ros_trace_callback_end(tcb + e * STRIDE));
        } else {
            LOOP(ros_trace_callback_start(tcb + e * STRIDE, false); ros_trace_callback_end(tcb + e * STRIDE));
        }
        break;
    }
    case L_PROBE_RELAY: /* a pipeline node's message: taken, its callback publishes on, ends (issue 47's links) */
    case L_PROBE_TAKE_CB: { /* the same without the publish: what links add to a callback */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int64_t src = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - 1000000; /* sent 1 ms ago */
        if (j->leg == L_PROBE_RELAY) {
            LOOP(ros_trace_rmw_take(s->rmw_cpp + e * STRIDE, msg, src, true);
                 ros_trace_callback_start(s->callbacks + e * STRIDE, false); ros_trace_rcl_publish(s->handles + e * STRIDE, msg);
                 ros_trace_callback_end(s->callbacks + e * STRIDE));
        } else {
            LOOP(ros_trace_rmw_take(s->rmw_cpp + e * STRIDE, msg, src, true);
                 ros_trace_callback_start(s->callbacks + e * STRIDE, false); ros_trace_callback_end(s->callbacks + e * STRIDE));
        }
        break;
    }
    }
    j->cpu_ns = thread_cpu_ns() - t0;
    return NULL;
}

static bool pin_threads;

/* Binds a thread created with attr to the t-th CPU of this process's affinity set (modulo its size). */
static void pin(pthread_attr_t *attr, int t)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) == 0)
        return;
    int want = t % CPU_COUNT(&allowed);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &allowed) && want-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            pthread_attr_setaffinity_np(attr, sizeof one, &one);
            return;
        }
    }
}

static double run_leg(int leg, int threads, long msgs)
{
    pthread_t th[MAX_THREADS];
    struct job jobs[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        jobs[t] = (struct job){leg, t, msgs, 0};
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (pin_threads)
            pin(&attr, t);
        pthread_create(&th[t], &attr, worker, &jobs[t]);
        pthread_attr_destroy(&attr);
    }
    double total = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        total += jobs[t].cpu_ns;
    }
    return total / ((double)threads * (double)msgs);
}

/* The bytes legs' messages and type supports: rclcpp's rosidl_typesupport_cpp
 * dispatcher naming sim_msgs' introspection getter (sim/rosidl), as simgraph gives it. */

rp_rcl_ret_t rcl_publisher_init(void *publisher, const void *node, const void *type_support, const char *topic_name,
                                const void *options); /* librcl's (the probe wraps it) */

static const void *sim_msgs_type(const char *type)
{
    static const char *const ids[1] = {"rosidl_typesupport_introspection_cpp"};
    static const char *symbols[2][1] = {{"rosidl_typesupport_introspection_cpp__get_message_type_support_handle__sim_msgs__msg__Stamp"},
                                        {"rosidl_typesupport_introspection_cpp__get_message_type_support_handle__sim_msgs__msg__Sample"}};
    static void *data[2][1];
    static rp_type_support_map_t maps[2];
    static rp_rosidl_message_type_support_t handles[2];
    int k = strcmp(type, "Stamp") == 0 ? 0 : 1;
    maps[k] = (rp_type_support_map_t){1, "sim_msgs", ids, symbols[k], data[k]};
    handles[k] = (rp_rosidl_message_type_support_t){"rosidl_typesupport_cpp", &maps[k], NULL};
    return &handles[k];
}

/* Creates every thread's endpoints for all legs: probe entities and the re-implemented registry. */
static void setup(int threads, int endpoints)
{
    static char node[64];
    static int node_done;
    if (!node_done) {
        ros_trace_rcl_node_init(node, NULL, "hotpath", "/");
        node_done = 1;
    }
    for (int t = 0; t < threads; t++) {
        struct thread_set *s = &sets[t];
        if (s->n >= endpoints)
            continue;
        s->n = endpoints;
        s->handles = aligned_alloc(64, (size_t)endpoints * STRIDE);
        s->impls = aligned_alloc(64, (size_t)endpoints * STRIDE);
        s->callbacks = aligned_alloc(64, (size_t)endpoints * STRIDE * 3);
        s->rmw_py = aligned_alloc(64, (size_t)endpoints * STRIDE);
        s->rmw_cpp = aligned_alloc(64, (size_t)endpoints * STRIDE);
        s->eps = calloc((size_t)endpoints, sizeof *s->eps);
        s->outs = aligned_alloc(64, (size_t)endpoints * STRIDE);
        s->out_impls = aligned_alloc(64, (size_t)endpoints * STRIDE);
        s->timers = aligned_alloc(64, (size_t)endpoints * STRIDE);
        s->timer_impls = aligned_alloc(64, (size_t)endpoints * STRIDE);
        for (int k = 0; k < 2; k++)
            s->typed[k] = calloc((size_t)endpoints, STRIDE); /* zeroed: rcl_publisher_init's precondition */
        s->services = calloc((size_t)endpoints, sizeof *s->services);
        s->clients = calloc((size_t)endpoints, sizeof *s->clients);
        for (int e = 0; e < endpoints; e++) {
            char *h = s->handles + e * STRIDE;
            *(void **)h = s->impls + e * STRIDE; /* rcl handle -> impl */
            struct endpoint *ep = calloc(1, sizeof *ep);
            snprintf(ep->topic, sizeof ep->topic, "/bench/t%d/e%d", t, e);
            s->eps[e] = ep;
            map_insert((uintptr_t)fnv1a(ep->topic), ep);
            map_insert((uintptr_t)h, ep);
            ros_trace_rcl_publisher_init(h, node, NULL, ep->topic, 10);
            for (int k = 0; k < 2; k++) { /* typed publishers, through rcl (the probe learns their types there) */
                char topic[96];
                snprintf(topic, sizeof topic, "%s/%s", ep->topic, k == 0 ? "stamp" : "sample");
                struct sim_endpoint_options o;
                memset(&o, 0, sizeof o);
                o.qos.history = 1;
                o.qos.depth = 10;
                if (rcl_publisher_init(s->typed[k] + e * STRIDE, node, sim_msgs_type(k == 0 ? "Stamp" : "Sample"),
                                       strdup(topic), &o) != RP_RCL_RET_OK) {
                    fprintf(stderr, "hotpath: rcl_publisher_init failed for %s\n", topic);
                    exit(1);
                }
            }
            /* a subscription chain for callback_start: rcl sub, rclcpp sub, callback */
            char *cb = s->callbacks + (size_t)e * STRIDE;
            void **rcl_sub = malloc(2 * sizeof(void *));
            rcl_sub[0] = malloc(48);
            void *rclcpp_sub = malloc(256);
            /* its own node (the first 64: the node table's room) for the subscription and the
             * timer: a timer samples its node's subscriptions, and a robot's node has a few */
            char *own = node;
            if (e < 64) {
                own = malloc(64);
                char name[48];
                snprintf(name, sizeof name, "hotpath_t%d_e%d", t, e);
                ros_trace_rcl_node_init(own, NULL, name, "/");
            }
            ros_trace_rcl_subscription_init(rcl_sub, own, s->rmw_cpp + e * STRIDE, ep->topic, 10);
            ros_trace_rclcpp_subscription_init(rcl_sub, rclcpp_sub);
            ros_trace_rclcpp_subscription_callback_added(rclcpp_sub, cb);
            /* a timer of the node, publishing on its own publisher (topic .../out) */
            char *out = s->outs + e * STRIDE, *th = s->timers + e * STRIDE;
            *(void **)out = s->out_impls + e * STRIDE;
            *(void **)th = s->timer_impls + e * STRIDE;
            char out_topic[96];
            snprintf(out_topic, sizeof out_topic, "%s/out", ep->topic);
            ros_trace_rcl_publisher_init(out, node, NULL, out_topic, 10);
            ros_trace_rcl_timer_init(th, 100000000);
            ros_trace_rclcpp_timer_callback_added(th, s->callbacks + (size_t)(endpoints + e) * STRIDE);
            ros_trace_rclcpp_timer_link_node(th, own);
            /* an rclpy subscription: rcl only, counted at rmw_take */
            void **py_sub = malloc(2 * sizeof(void *));
            py_sub[0] = malloc(48);
            ros_trace_rcl_subscription_init(py_sub, node, s->rmw_py + e * STRIDE, ep->topic, 10);
            /* a service and a client on the stand-in librcl's loopback (no socket: no system call) */
            for (int k = 0; k < 2; k++) {
                struct sim_call_impl *impl = calloc(1, sizeof *impl);
                impl->sock = -1;
                impl->rmw_handle = malloc(48);
                memcpy(impl->gid, &e, sizeof e);
                void **h = malloc(sizeof(void *));
                h[0] = impl;
                if (k == 0) {
                    s->services[e] = h;
                    ros_trace_rcl_service_init(h, node, impl->rmw_handle, ep->topic);
                } else {
                    s->clients[e] = h;
                    ros_trace_rcl_client_init(h, node, impl->rmw_handle, ep->topic);
                }
            }
        }
    }
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    for (const char *p = s; *p && n < max;) {
        out[n++] = atoi(p);
        const char *c = strchr(p, ',');
        if (!c)
            break;
        p = c + 1;
    }
    return n;
}

int main(int argc, char **argv)
{
    int thread_list[8] = {1, 2, 8}, nthreads = 3;
    int ep_list[8] = {1, 4, 64, 1024}, neps = 4;
    bool legs_on[L_COUNT];
    for (int l = 0; l < L_COUNT; l++)
        legs_on[l] = true;
    long msgs = 4000000;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--threads") == 0)
            nthreads = parse_list(argv[i + 1], thread_list, 8);
        else if (strcmp(argv[i], "--endpoints") == 0)
            neps = parse_list(argv[i + 1], ep_list, 8);
        else if (strcmp(argv[i], "--msgs") == 0)
            msgs = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--pin") == 0)
            pin_threads = atoi(argv[i + 1]) != 0;
        else if (strcmp(argv[i], "--legs") == 0) {
            /* exact names: "probe" is a prefix of "probe_cb" and "probe_take" of "probe_take_cpp" */
            char buf[256], want[64];
            snprintf(buf, sizeof buf, ",%s,", argv[i + 1]);
            for (int l = 0; l < L_COUNT; l++) {
                snprintf(want, sizeof want, ",%s,", leg_names[l]);
                legs_on[l] = strstr(buf, want) != NULL;
            }
        } else {
            fprintf(stderr, "usage: hotpath [--legs L,..] [--threads N,..] [--endpoints N,..] [--msgs N] [--reps R] [--pin 1]\n");
            return 2;
        }
    }
    if (msgs < 1 || reps < 1) {
        fprintf(stderr, "hotpath: --msgs and --reps must be positive\n");
        return 2;
    }
    void *tt = dlopen("libtracetools.so", RTLD_LAZY | RTLD_NOLOAD);
    tracetools_publish = tt ? (publish_fn)dlsym(tt, "ros_trace_rcl_publish") : NULL;
    tracetools_cb_start = tt ? (cb_start_fn)dlsym(tt, "ros_trace_callback_start") : NULL;
    tracetools_cb_end = tt ? (cb_end_fn)dlsym(tt, "ros_trace_callback_end") : NULL;
    if (tracetools_publish == NULL || tracetools_cb_start == NULL || tracetools_cb_end == NULL) {
        fprintf(stderr, "hotpath: libtracetools.so is not loaded\n");
        return 1;
    }
    /* the null shim beside the probe, for the null_pair leg: found next to this binary */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 64);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL) {
            strcpy(slash, "/../lib/libros2_pulse_null.so");
            void *null = dlopen(self, RTLD_NOW | RTLD_LOCAL);
            null_cb_start = null ? (cb_start_fn)dlsym(null, "ros_trace_callback_start") : NULL;
            null_cb_end = null ? (cb_end_fn)dlsym(null, "ros_trace_callback_end") : NULL;
        }
    }
    if (null_cb_start == NULL || null_cb_end == NULL)
        legs_on[L_NULL_PAIR] = false; /* no null shim beside us: that leg is not run */
    void *rcl = dlopen("librcl.so", RTLD_LAZY | RTLD_NOLOAD);
    librcl_take_request = rcl ? (rp_rcl_take_request_with_info_fn)dlsym(rcl, "rcl_take_request_with_info") : NULL;
    librcl_send_response = rcl ? (rp_rcl_send_response_fn)dlsym(rcl, "rcl_send_response") : NULL;
    librcl_send_request = rcl ? (rp_rcl_send_request_fn)dlsym(rcl, "rcl_send_request") : NULL;
    librcl_take_response = rcl ? (rp_rcl_take_response_with_info_fn)dlsym(rcl, "rcl_take_response_with_info") : NULL;
    if (!librcl_take_request || !librcl_send_response || !librcl_send_request || !librcl_take_response)
        legs_on[L_NONE_SRV] = legs_on[L_PROBE_SRV] = legs_on[L_NONE_CLI] = legs_on[L_PROBE_CLI] = false; /* no librcl */
    int max_threads = 1, max_eps = 1;
    for (int i = 0; i < nthreads; i++)
        max_threads = thread_list[i] > max_threads ? thread_list[i] : max_threads;
    for (int i = 0; i < neps; i++)
        max_eps = ep_list[i] > max_eps ? ep_list[i] : max_eps;
    if (max_threads > MAX_THREADS) {
        fprintf(stderr, "hotpath: at most %d threads\n", MAX_THREADS);
        return 2;
    }
    printf("leg,threads,endpoints,rep,cpu_ns_per_msg\n");
    for (int ti = 0; ti < nthreads; ti++) {
        for (int ei = 0; ei < neps; ei++) {
            int threads = thread_list[ti], eps = ep_list[ei];
            /* fresh endpoints per shape, so earlier shapes' caches do not help */
            memset(sets, 0, sizeof sets);
            setup(threads, eps);
            for (int l = 0; l < L_COUNT; l++) /* warm up every leg */
                if (legs_on[l])
                    run_leg(l, threads, msgs / 20 + 1);
            for (int r = 0; r < reps; r++) {
                for (int k = 0; k < L_COUNT; k++) {
                    int l = (k + r) % L_COUNT; /* rotate the order every repetition */
                    if (legs_on[l])
                        printf("%s,%d,%d,%d,%.3f\n", leg_names[l], threads, eps, r, run_leg(l, threads, msgs));
                }
                fflush(stdout);
            }
        }
    }
    return 0;
}
