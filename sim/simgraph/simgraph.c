/*
 * simgraph: the stand-in ROS 2 graph.
 *
 * It is dynamically linked against libtracetools.so (the stand-in in
 * sim/tracetools, or anything with the same exports) exactly as rcl and
 * rclcpp are, and makes the tracetools calls that rcl, rclcpp, rclpy and
 * rmw_cyclonedds make, in their real order (shared/reference/
 * tracetools-facts.md section 3.5 and real-traces/FINDINGS.md):
 * node init with its parameter services and /parameter_events, /rosout
 * created before rcl_node_init and published through a copy of the handle
 * on Humble, publisher/subscription/timer/service creation, the executor's
 * take and callback sequences, intra-process delivery with the discarded
 * DDS copy, rclpy publishers and subscribers.
 *
 * Messages really travel: between processes over Unix datagram sockets
 * (one per subscription, best effort like a full DDS queue), inside a
 * process over a pipe for intra-process delivery. Rates are exact: every
 * periodic activity sleeps to absolute CLOCK_MONOTONIC deadlines.
 *
 * The parent forks and execs one child per graph process and passes them a
 * common start instant; entities are created just before it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "graph.h"
#include "truth.h"
#include "sim_rcl.h"
#include "ros2_pulse/tracetools_api.h"
#include "sim_msgs.h"

/* ------------------------------------------------------------ tracetools declarations */

#define RP_TP(name, params, args) extern void ros_trace_##name params;
RP_TRACEPOINTS_COMMON(RP_TP)
#undef RP_TP
/* Jazzy+ only: weak, and called only when the loaded libtracetools is Jazzy+. */
#define RP_TP(name, params, args) extern void ros_trace_##name params __attribute__((weak));
RP_TRACEPOINTS_JAZZY(RP_TP)
#undef RP_TP
extern bool ros_trace_enabled_rcl_init(void) __attribute__((weak));
extern bool ros_trace_enabled_rclcpp_callback_register(void) __attribute__((weak));
extern void ros_trace_do_rclcpp_callback_register(const void *callback, const char *symbol)
    __attribute__((weak));
/* tracetools::detail::demangle_symbol, which Humble's rclcpp calls to name a callback: weak, as only Humble's
 * stand-in exports it. */
extern const char *tracetools_demangle_symbol(const char *mangled) __asm__("_ZN10tracetools6detail15demangle_symbolEPKc")
    __attribute__((weak));

/* From the stand-in librcl of Jazzy on; weak: the Humble one has none. */
extern rp_rcl_ret_t rcl_timer_call_with_info(void *timer, rp_rcl_timer_call_info_t *info) __attribute__((weak));

static bool jazzy; /* the loaded libtracetools has the Iron+ function set */
static void *rmw_publish_fn;

/* ------------------------------------------------------------ rcl / rclcpp stand-in objects */

/* rcl_publisher_t, rcl_subscription_t, rcl_timer_t, rcl_service_t: one impl pointer. */
typedef struct { void *impl; } rcl_handle_t;
/* rcl_node_t: context, impl. */
typedef struct { void *context; void *impl; } rcl_node_t;

struct msg {
    int64_t src_real_ns; /* the DDS source timestamp */
    uint64_t seq;
    int32_t proc;
    int32_t pub;
    int32_t intra; /* published by an intra-process-enabled publisher */
    uint32_t ring; /* intra-process: its ring buffer index, which the enqueue and the dequeue both name */
    int64_t origin_real_ns; /* its chain's first publish (relay=): src_real_ns unless relayed */
};
_Static_assert(sizeof(struct msg) == sizeof(struct sim_msgs_stamp), "a message's stamp is sim_msgs/msg/Stamp");

/* What rcl_publish and rmw_take are given of a message: its type's C struct (sim/rosidl/sim_msgs.h). */
enum { TYPE_OTHER = 0, TYPE_STAMP, TYPE_SAMPLE };
static int type_kind(const char *type)
{
    return strcmp(type, "sim_msgs/msg/Sample") == 0 ? TYPE_SAMPLE : strcmp(type, "sim_msgs/msg/Stamp") == 0 ? TYPE_STAMP : TYPE_OTHER;
}

/* A Sample's payload: size= bytes, less up to 8 % by its sequence number, so sizes vary (a sampled type). */
static size_t payload_len(size_t size, uint64_t seq) { return size - (size_t)(seq % 5) * (size / 50); }

/* m as a message of type kind (its stamp), with payload (capacity size) for a Sample; its serialized size. */
static uint64_t typed_message(int kind, const struct msg *m, uint8_t *payload, size_t size, struct sim_msgs_sample *out)
{
    memcpy(&out->stamp, m, sizeof out->stamp);
    if (kind == TYPE_STAMP)
        return SIM_MSGS_STAMP_SIZE;
    size_t n = payload != NULL ? payload_len(size, m->seq) : 0;
    out->frame_id = (struct sim_msgs_string){(char *)"sim", 3, 4};
    out->data = (struct sim_msgs_octets){payload, n, size};
    return kind == TYPE_SAMPLE ? sim_msgs_sample_size(3, n) : 4 + sizeof *m;
}

struct node_rt {
    rcl_node_t *handle;
    rcl_handle_t rosout; /* the copy rcl_logging_rosout publishes through */
    char *scratch;
    char fq[2 * G_NAME];
    int rosout_truth, churn_truth; /* truth.h slots */
    int *inputs, ninputs; /* its subscriptions a timer of it samples (not the TimeSource's /parameter_events) */
};

struct pub_rt {
    rcl_handle_t *handle;
    void *rmw;
    int sock;
    _Atomic uint64_t seq;
    _Atomic uint64_t last_pub_ns; /* the graph's clock at its latest publish (truth_publish_at) */
    char *scratch;
    const char *topic; /* current topic (changes on reuse) */
    uint64_t created_ns; /* periodic publishing is phased from the creation instant */
    int truth;           /* truth.h slot of the current topic */
    int type;            /* TYPE_* */
};

struct sub_rt {
    rcl_handle_t *handle;
    void *rmw;
    char *rclcpp_sub; /* rclcpp::Subscription; the callback lives inside it */
    char *ipc_sub;    /* SubscriptionIntraProcess, when the node uses intra-process */
    int sock;
    int pipe[2];
    const char *topic;
    char *scratch;
    size_t scratch_size;
    uint64_t received; /* samples that reached this reader, for drop= */
    _Atomic uint64_t callbacks; /* for throws= */
    _Atomic uint64_t ring_writes; /* intra-process enqueues: rclcpp's ring buffer's write index */
    /* rclcpp: the source timestamps of the latest message its callback ran for, and of the first
     * since a timer of its node last published (a sampled link's truth, issue 47 rule 3) */
    _Atomic int64_t latest_src, first_src;
    int truth;
    int type; /* TYPE_* */
};

struct timer_rt {
    rcl_handle_t *handle;         /* its impl is the stand-in librcl's struct sim_timer_impl: the schedule */
    struct sim_timer_impl *sched;
    char *callback; /* GenericTimer::callback_ */
    uint64_t period_ns;
    double cost_ms;  /* cost=MS[:EVERY]: the callback takes MS ms every EVERY-th fire */
    int cost_every;
    uint64_t fires;
    int pub;     /* publisher this timer drives, or -1 */
    int *more_pubs, nmore; /* a node's loop: the other publishers of its rate it drives */
    int node;     /* its node: rclpy's fire no callback tracepoint */
    int node_log; /* node whose log this timer emits, or -1 */
    int client;  /* client this timer drives, or -1 */
    uint64_t stall_from, stall_until; /* a wedged timer fires nothing in [from, until) */
    int truth;
};

struct service_rt {
    rcl_handle_t *handle; /* its impl is the stand-in librcl's struct sim_call_impl */
    struct sim_call_impl *impl;
    char *callback; /* AnyServiceCallback */
    double cost_ms;
    int sock;
    uint64_t taken; /* for drop= */
    int truth;
    /* deferred responses (an action's get_result), answered by the thread that took them */
    struct {
        rp_rmw_request_id_t id;
        uint64_t taken_ns, due_ns;
    } deferred[256];
    int ndeferred;
};

/* A client: requests go out through rcl_send_request, responses come back to its own socket. */
#define CLIENT_RING 4096u /* send times by sequence number, for the graph's own round trips */
struct client_rt {
    rcl_handle_t *handle;
    struct sim_call_impl *impl;
    _Atomic uint64_t sent_ns[CLIENT_RING];
    pthread_mutex_t pending; /* rclcpp's pending_requests_mutex_: held across send and record, taken after a take */
    int truth;
};

static struct graph G;
static int self_proc = -1;
static char rundir[64]; /* short: socket paths must fit sockaddr_un */
static const char *truth_arg; /* --truth DIR, else $SIMGRAPH_TRUTH: where truth.h files go */
static uint64_t t0_ns, stop_ns;
static struct node_rt nodes_rt[G_MAX_NODES];
static struct pub_rt pubs_rt[G_MAX_PUBS];
static struct sub_rt subs_rt[G_MAX_SUBS];
static struct timer_rt timers_rt[G_MAX_TIMERS + G_MAX_PUBS + G_MAX_NODES + G_MAX_CLIENTS];
static int ntimers_rt;
static struct service_rt services_rt[G_MAX_SERVICES];
static _Atomic int stop_flag; /* set by SIGINT/SIGTERM, read by every thread */
static pthread_mutex_t reuse_mutex = PTHREAD_MUTEX_INITIALIZER; /* guards re-created subscriptions */
static struct client_rt clients_rt[G_MAX_CLIENTS];
static void *discovery_reader; /* the rmw's own graph reader: takes on a handle rcl never announces */
static _Atomic unsigned long events;     /* publishes + deliveries, reported with --rusage */
static _Thread_local unsigned long my_events; /* per thread: no shared cache line per message */

static void flush_events(void) { atomic_fetch_add_explicit(&events, my_events, memory_order_relaxed), my_events = 0; }

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool running(void) { return !stop_flag && (stop_ns == 0 || now_ns(CLOCK_MONOTONIC) < stop_ns); }

/* Sleeps until t, in slices of at most 100 ms so that a long sleep (a
 * stall, a crash scheduled later) still ends promptly on SIGINT/SIGTERM. */
static void sleep_until(uint64_t t)
{
    for (;;) {
        uint64_t now = now_ns(CLOCK_MONOTONIC), until = t;
        if (now >= t || stop_flag)
            return;
        if (until - now > 100000000u)
            until = now + 100000000u;
        struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

static void *xalloc(size_t n)
{
    void *p = calloc(1, n);
    if (p == NULL) {
        fprintf(stderr, "simgraph: out of memory\n");
        exit(3);
    }
    return p;
}

/*
 * rclcpp_callback_register: the callback's function, demangled
 * (tracetools::get_symbol). Humble computes and passes it every time; Iron+
 * only when ros_trace_enabled_rclcpp_callback_register() says a tracer
 * listens. The stand-in names each callback after its node and entity,
 * "<kind> of <entity> in <node>", a string a test can expect; on Humble it
 * passes through tracetools::detail::demangle_symbol, whose stand-in answers
 * the placeholder of a tracetools built without LTTng (the probe names it).
 */
static void callback_register(const void *cb, const char *kind, const char *entity, const char *node)
{
    char sym[3 * G_NAME + 32];
    if (jazzy) { /* guarded call site in Iron+ */
        if (ros_trace_enabled_rclcpp_callback_register && ros_trace_enabled_rclcpp_callback_register() &&
            ros_trace_do_rclcpp_callback_register) {
            snprintf(sym, sizeof sym, "%s of %s in %s", kind, entity, node);
            ros_trace_do_rclcpp_callback_register(cb, sym);
        }
    } else { /* Humble: the name through tracetools' helper, as get_symbol() does (a placeholder without LTTng) */
        snprintf(sym, sizeof sym, "%s of %s in %s", kind, entity, node);
        ros_trace_rclcpp_callback_register(cb, tracetools_demangle_symbol ? tracetools_demangle_symbol(sym) : sym);
    }
}

static void rmw_publish(const void *rmw_pub, const void *m)
{
    if (rmw_publish_fn == NULL)
        return;
    if (jazzy)
        ((rp_rmw_publish_jazzy_fn)rmw_publish_fn)(rmw_pub, m, (int64_t)now_ns(CLOCK_REALTIME));
    else
        ((rp_rmw_publish_humble_fn)rmw_publish_fn)(m);
}

static void sock_path(struct sockaddr_un *a, const char *kind, int idx)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    snprintf(a->sun_path, sizeof a->sun_path, "%s/%s%d.sock", rundir, kind, idx);
}

static int bind_socket(const char *kind, int idx)
{
    struct sockaddr_un a;
    sock_path(&a, kind, idx);
    unlink(a.sun_path);
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "simgraph: cannot bind %s: %s\n", a.sun_path, strerror(errno));
        exit(3);
    }
    int buf = 1 << 20;
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    return s;
}

static void send_to(int sock, const char *kind, int idx, const struct msg *m)
{
    struct sockaddr_un a;
    sock_path(&a, kind, idx);
    /* Best effort, like a full DDS history: a missing or full reader loses the sample. */
    (void)sendto(sock, m, sizeof *m, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a);
}

/* ------------------------------------------------------------ entity creation */

static uint8_t fake_gid[24];

#define LANG(node) (G.nodes[node].py ? "py" : "cpp") /* a truth record's client library */

/*
 * A message type support with rosidl's real shape: rclcpp passes its
 * rosidl_typesupport_cpp dispatcher, rclpy the rosidl_typesupport_c one; each
 * holds a map naming the per-middleware type supports' symbols.
 */
struct sim_type_support {
    rp_rosidl_message_type_support_t handle;
    rp_type_support_map_t map;
    const char *ids[2];
    const char *symbols[2];
    void *data[2];
};

static const void *type_support(const char *type, bool py)
{
    struct sim_type_support *t = xalloc(sizeof *t);
    char flat[G_NAME];
    size_t n = 0;
    for (const char *c = type; *c && n + 2 < sizeof flat; c++) {
        if (*c == '/') {
            flat[n++] = '_';
            flat[n++] = '_';
        } else {
            flat[n++] = *c;
        }
    }
    flat[n] = '\0';
    const char *lang = py ? "c" : "cpp";
    static const char *const kinds[2] = {"fastrtps", "introspection"};
    for (int k = 0; k < 2; k++) {
        char *id = xalloc(64), *sym = xalloc(2 * G_NAME);
        snprintf(id, 64, "rosidl_typesupport_%s_%s", kinds[k], lang);
        snprintf(sym, 2 * G_NAME, "%s__get_message_type_support_handle__%s", id, flat);
        t->ids[k] = id;
        t->symbols[k] = sym;
    }
    char *pkg = xalloc(G_NAME);
    snprintf(pkg, G_NAME, "%.*s", (int)strcspn(type, "/"), type);
    t->map = (rp_type_support_map_t){2, pkg, t->ids, t->symbols, t->data};
    t->handle = (rp_rosidl_message_type_support_t){py ? "rosidl_typesupport_c" : "rosidl_typesupport_cpp", &t->map, NULL};
    return &t->handle;
}

static rp_rmw_time_t rmw_time(double ms)
{
    uint64_t ns = (uint64_t)(ms * 1e6 + 0.5);
    return (rp_rmw_time_t){ns / 1000000000u, ns % 1000000000u};
}

static struct sim_endpoint_options endpoint_options(const struct g_qos *q)
{
    struct sim_endpoint_options o;
    memset(&o, 0, sizeof o);
    o.qos.history = 1; /* KEEP_LAST */
    o.qos.depth = (size_t)q->depth;
    o.qos.reliability = q->reliability;
    o.qos.durability = q->durability;
    o.qos.liveliness = q->liveliness;
    o.qos.deadline = rmw_time(q->deadline_ms);
    o.qos.liveliness_lease_duration = rmw_time(q->lease_ms);
    return o;
}

static void *rmw_of(const rcl_handle_t *h) { return ((const struct sim_endpoint_impl *)h->impl)->rmw_handle; }

/*
 * What rcl_publisher_is_valid reads before each publish tracepoint: rcl_publish
 * calls it before rcl_publish fires, and rclcpp's intra-process publish asks
 * rcl_publisher_get_subscription_count (which calls it) before
 * rclcpp_intra_publish. So in a real process the handle's line and its
 * impl's are warm when the probe reads them (PERFORMANCE.md §14).
 */
static void *publisher_valid(const rcl_handle_t *h)
{
    /* atomic loads: real loads even where the answer goes unused, as rcl's out-of-line check makes them */
    struct sim_endpoint_impl *impl = __atomic_load_n(&h->impl, __ATOMIC_RELAXED);
    return impl != NULL ? __atomic_load_n(&impl->rmw_handle, __ATOMIC_RELAXED) : NULL;
}

static void create_publisher(int i, const char *topic, bool reinit)
{
    struct g_pub *gp = &G.pubs[i];
    struct pub_rt *p = &pubs_rt[i];
    struct node_rt *n = &nodes_rt[gp->node];
    __atomic_store_n(&p->truth, truth_add("pub", LANG(gp->node), n->fq, topic), __ATOMIC_RELEASE);
    __atomic_store_n(&p->topic, topic, __ATOMIC_RELEASE);
    if (!reinit) { /* rclcpp and rclpy create it through rcl, which fires the tracepoints */
        p->handle = xalloc(sizeof *p->handle);
        struct sim_endpoint_options o = endpoint_options(&gp->qos);
        if (rcl_publisher_init(p->handle, n->handle, type_support(gp->qos.type, G.nodes[gp->node].py), topic, &o) !=
            RP_RCL_RET_OK) {
            fprintf(stderr, "simgraph: rcl_publisher_init failed for %s\n", topic);
            exit(3);
        }
        p->rmw = rmw_of(p->handle);
        p->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        p->scratch = gp->size > 0 ? xalloc(gp->size) : NULL;
        p->type = type_kind(gp->qos.type);
    } else { /* handle reuse: the same rcl_publisher_t and impl addresses name a new topic */
        ros_trace_rmw_publisher_init(p->rmw, fake_gid);
        ros_trace_rcl_publisher_init(p->handle, n->handle, p->rmw, topic, 10);
    }
    p->created_ns = now_ns(CLOCK_MONOTONIC);
}

static void create_subscription(int i, const char *topic, bool reinit)
{
    struct g_sub *gs = &G.subs[i];
    struct g_node *gn = &G.nodes[gs->node];
    struct sub_rt *s = &subs_rt[i];
    if (!reinit) {
        s->rclcpp_sub = xalloc(512);
        s->ipc_sub = gn->intra ? xalloc(256) : NULL;
        s->sock = bind_socket("s", i);
        if (gn->intra && pipe2(s->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
            perror("simgraph: pipe");
            exit(3);
        }
        s->scratch_size = 0;
        for (int p = 0; p < G.npubs; p++)
            if (strcmp(G.pubs[p].topic, topic) == 0 && G.pubs[p].size > s->scratch_size)
                s->scratch_size = G.pubs[p].size;
        s->scratch = s->scratch_size ? xalloc(s->scratch_size) : NULL;
        s->type = type_kind(gs->qos.type);
    }
    /* rcl handles are new on re-creation; rclcpp objects and callbacks are re-used (trace e) */
    s->handle = xalloc(sizeof *s->handle);
    s->topic = topic;
    s->truth = truth_add("sub", LANG(gs->node), nodes_rt[gs->node].fq, topic);
    void *node = nodes_rt[gs->node].handle;
    struct sim_endpoint_options o = endpoint_options(&gs->qos);
    if (rcl_subscription_init(s->handle, node, type_support(gs->qos.type, gn->py), topic, &o) != RP_RCL_RET_OK) {
        fprintf(stderr, "simgraph: rcl_subscription_init failed for %s\n", topic);
        exit(3);
    }
    s->rmw = rmw_of(s->handle);
    if (gn->py)
        return; /* rclpy: no tracepoints of its own */
    char *cb = s->rclcpp_sub + 0x168;
    if (gn->intra) {
        char *ipc_cb = s->ipc_sub + 0x40;
        if (jazzy) {
            ros_trace_rclcpp_construct_ring_buffer(s->ipc_sub + 0x80, 10);
            ros_trace_rclcpp_buffer_to_ipb(s->ipc_sub + 0x80, s->ipc_sub + 0xc0);
            ros_trace_rclcpp_ipb_to_subscription(s->ipc_sub + 0xc0, s->ipc_sub);
        }
        /* callback_added comes before this waitable's subscription_init */
        ros_trace_rclcpp_subscription_callback_added(s->ipc_sub, ipc_cb);
        callback_register(ipc_cb, "on_message", topic, nodes_rt[gs->node].fq);
        ros_trace_rclcpp_subscription_init(s->handle, s->ipc_sub);
    }
    ros_trace_rclcpp_subscription_init(s->handle, s->rclcpp_sub);
    ros_trace_rclcpp_subscription_callback_added(s->rclcpp_sub, cb);
    callback_register(cb, "on_message", topic, nodes_rt[gs->node].fq);
}

static int add_timer(int node, double hz, int pub, int log_node, int client)
{
    struct timer_rt *t = &timers_rt[ntimers_rt];
    t->handle = xalloc(sizeof *t->handle);
    t->sched = xalloc(sizeof *t->sched);
    t->handle->impl = t->sched;
    t->callback = xalloc(128);
    t->period_ns = (uint64_t)(1e9 / hz);
    t->cost_every = 1;
    /* rcl_timer_init: the first call is one period after creation; a publishing timer is phased from its publisher */
    t->sched->period_ns = (int64_t)t->period_ns;
    atomic_store(&t->sched->next_call_ns,
                 (int64_t)((pub >= 0 ? pubs_rt[pub].created_ns : now_ns(CLOCK_MONOTONIC)) + t->period_ns));
    t->node = node;
    t->pub = pub;
    t->node_log = log_node;
    t->client = client;
    t->truth = truth_add("timer", LANG(node), nodes_rt[node].fq, "");
    ros_trace_rcl_timer_init(t->handle, (int64_t)t->period_ns);
    if (!G.nodes[node].py) {
        ros_trace_rclcpp_timer_callback_added(t->handle, t->callback);
        callback_register(t->callback, "on_timer", "a timer", nodes_rt[node].fq);
        ros_trace_rclcpp_timer_link_node(t->handle, nodes_rt[node].handle);
    }
    return ntimers_rt++;
}

static void publish_rosout(int node)
{
    struct node_rt *n = &nodes_rt[node];
    char buf[64] = {0}; /* the log message rclcpp would serialize */
    /* rcl_logging_rosout publishes through its own copy of the publisher struct */
    ros_trace_rcl_publish(&n->rosout, buf);
    rmw_publish(NULL, buf);
    truth_inc(n->rosout_truth, TC_PUB_INTER);
}

/*
 * churn: entities a long-lived process makes and frees before its own. rclpy's
 * spin_once(timeout) makes an rcl timer per call (rcl_timer_init only, no
 * rclcpp tracepoint) and frees it; the next one mostly lands at a freed
 * address, so handles cycle through two. Churned publishers each publish
 * their messages through rcl, then are freed (no destroy tracepoint exists).
 */
static void churn(int n)
{
    struct g_node *gn = &G.nodes[n];
    if (gn->churn_timers == 0 && gn->churn_pubs == 0)
        return;
    /* A second after the node exists, so a reader has the process's segment before the churn. */
    sleep_until(now_ns(CLOCK_MONOTONIC) + 1000000000u);
    rcl_handle_t *th[2] = {xalloc(sizeof(rcl_handle_t)), xalloc(sizeof(rcl_handle_t))};
    for (int i = 0; i < 2; i++)
        th[i]->impl = xalloc(48);
    for (int i = 0; i < gn->churn_timers; i++)
        ros_trace_rcl_timer_init(th[i % 2], 10000000);
    rcl_handle_t *ph[2] = {xalloc(sizeof(rcl_handle_t)), xalloc(sizeof(rcl_handle_t))};
    void *rmw[2] = {xalloc(48), xalloc(48)};
    char m[16] = {0};
    for (int i = 0; i < 2; i++) {
        ph[i]->impl = xalloc(48);
        *(void **)ph[i]->impl = rmw[i];
    }
    for (int i = 0; i < gn->churn_pubs; i++) {
        ros_trace_rmw_publisher_init(rmw[i % 2], fake_gid);
        ros_trace_rcl_publisher_init(ph[i % 2], nodes_rt[n].handle, rmw[i % 2], gn->churn_topic, 10);
        for (int k = 0; k < gn->churn_msgs; k++) {
            ros_trace_rclcpp_publish(NULL, m);
            ros_trace_rcl_publish(ph[i % 2], m);
            rmw_publish(rmw[i % 2], m);
            truth_inc(nodes_rt[n].churn_truth, TC_PUB_INTER);
        }
        sleep_until(now_ns(CLOCK_MONOTONIC) + 25000000u); /* one a 25 ms, as a node re-creating a client might */
    }
}

static void create_node(int idx)
{
    static const char *const srv_cpp[] = {"get_parameters", "get_parameter_types", "set_parameters",
                                          "set_parameters_atomically", "describe_parameters",
                                          "list_parameters"};
    static const char *const srv_py[] = {"describe_parameters", "get_parameters", "get_parameter_types",
                                         "list_parameters", "set_parameters", "set_parameters_atomically"};
    struct g_node *gn = &G.nodes[idx];
    struct node_rt *n = &nodes_rt[idx];
    n->handle = xalloc(sizeof *n->handle);
    n->handle->impl = xalloc(64);
    char *fq = n->fq;
    snprintf(n->fq, sizeof n->fq, "%s%s%s", strcmp(gn->ns, "/") == 0 ? "" : gn->ns, "/", gn->name);
    n->rosout_truth = truth_add("pub", LANG(idx), fq, "/rosout");
    n->churn_truth = gn->churn_pubs > 0 ? truth_add("pub", LANG(idx), fq, gn->churn_topic) : -1;

    rcl_handle_t rosout_init = {xalloc(48)}; /* stack-local struct, as in rcl */
    void *rosout_rmw = xalloc(48);
    bool rosout_first = !jazzy && !gn->py; /* Humble rcl creates /rosout inside rcl_node_init */
    if (rosout_first) {
        ros_trace_rmw_publisher_init(rosout_rmw, fake_gid);
        ros_trace_rcl_publisher_init(&rosout_init, n->handle, rosout_rmw, "/rosout", 1000);
    }
    ros_trace_rcl_node_init(n->handle, xalloc(32), gn->name, gn->ns);
    if (!rosout_first) {
        ros_trace_rmw_publisher_init(rosout_rmw, fake_gid);
        ros_trace_rcl_publisher_init(&rosout_init, n->handle, rosout_rmw, "/rosout", 1000);
    }
    n->rosout = rosout_init; /* the copy that publishes */

    for (int i = 0; i < 6; i++) {
        char name[3 * G_NAME];
        snprintf(name, sizeof name, "%s/%s", fq, gn->py ? srv_py[i] : srv_cpp[i]);
        rcl_handle_t *srv = xalloc(sizeof *srv);
        srv->impl = xalloc(48);
        ros_trace_rcl_service_init(srv, n->handle, xalloc(48), name);
        if (!gn->py) {
            char *cb = xalloc(128);
            ros_trace_rclcpp_service_callback_added(srv, cb);
            callback_register(cb, "parameter service", name, fq);
        }
    }
}

/* ------------------------------------------------------------ message paths */

/* A process's environment variable as the graph sets it, or NULL. */
static const char *proc_env(int proc, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < G.procs[proc].nenv; i++)
        if (strncmp(G.procs[proc].env[i], name, n) == 0 && G.procs[proc].env[i][n] == '=')
            return G.procs[proc].env[i] + n + 1;
    return NULL;
}

static bool is_zenoh(int proc)
{
    const char *rmw = proc_env(proc, "RMW_IMPLEMENTATION");
    return rmw != NULL && strcmp(rmw, "rmw_zenoh_cpp") == 0;
}

/*
 * What the stand-in middleware does: a subscription hears a publisher of its
 * topic only on the same domain, over middlewares that speak the same
 * protocol (Zenoh or DDS/RTPS), with discovery on (Iron+: a range of OFF
 * discovers nobody), with the same message type, and with a compatible QoS
 * (DDS's request/offered rules: reliability, durability, deadline,
 * liveliness and its lease). Written from the DDS rules, not from pulse's.
 */
static bool middleware_matches(const struct g_pub *gp, const struct g_sub *gs)
{
    int pp = G.nodes[gp->node].proc, sp = G.nodes[gs->node].proc;
    const char *pd = proc_env(pp, "ROS_DOMAIN_ID"), *sd = proc_env(sp, "ROS_DOMAIN_ID");
    if (atoi(pd != NULL ? pd : "0") != atoi(sd != NULL ? sd : "0") || is_zenoh(pp) != is_zenoh(sp))
        return false;
    const char *pr = proc_env(pp, "ROS_AUTOMATIC_DISCOVERY_RANGE"), *sr = proc_env(sp, "ROS_AUTOMATIC_DISCOVERY_RANGE");
    if (jazzy && pp != sp && ((pr != NULL && strcmp(pr, "OFF") == 0) || (sr != NULL && strcmp(sr, "OFF") == 0)))
        return false;
    const struct g_qos *o = &gp->qos, *r = &gs->qos;
    if (strcmp(o->type, r->type) != 0)
        return false;
    int orel = o->reliability ? o->reliability : 1, rrel = r->reliability ? r->reliability : 1;
    int odur = o->durability ? o->durability : 2, rdur = r->durability ? r->durability : 2;
    int oliv = o->liveliness ? o->liveliness : 1, rliv = r->liveliness ? r->liveliness : 1;
    if ((orel == 2 && rrel == 1) || (odur == 2 && rdur == 1) || (oliv == 1 && rliv == 3))
        return false;
    if (r->deadline_ms > 0 && (o->deadline_ms == 0 || o->deadline_ms > r->deadline_ms))
        return false;
    return !(r->lease_ms > 0 && (o->lease_ms == 0 || o->lease_ms > r->lease_ms));
}

static bool same_proc_intra(const struct g_pub *gp, const struct g_sub *gs)
{
    const struct g_node *pn = &G.nodes[gp->node], *sn = &G.nodes[gs->node];
    return pn->proc == sn->proc && pn->intra && sn->intra;
}

/* msgcost=US: the CPU a real middleware spends on each message event
 * (serialization, transport, the executor's wait), which the stand-in
 * otherwise lacks: real rclcpp on Cyclone DDS spends ~50 µs an event where
 * the stand-in spends ~7 (PERFORMANCE §18). Spun on this thread's CPU clock,
 * outside every tracepoint's span. */
static void spin_thread_cpu(uint64_t want_ns, uint64_t until_mono_ns);

static void spend_msgcost(void)
{
    double us = self_proc >= 0 ? G.procs[self_proc].msgcost_us : 0;
    if (us > 0)
        spin_thread_cpu((uint64_t)(us * 1e3), 0);
}

/* Publishes on publisher i a message whose chain began at origin (realtime ns; 0: this publish). */
static void publish_from(int i, int64_t origin)
{
    my_events++;
    spend_msgcost();
    struct g_pub *gp = &G.pubs[i];
    struct pub_rt *p = &pubs_rt[i];
    struct g_node *gn = &G.nodes[gp->node];
    int64_t now_real = (int64_t)now_ns(CLOCK_REALTIME);
    struct msg m = {now_real, atomic_fetch_add(&p->seq, 1) + 1, self_proc, i, gn->intra, 0, origin != 0 ? origin : now_real};
    if (origin != 0) /* a relay's publish: its message's age since its chain began, the path's truth */
        truth_age(__atomic_load_n(&p->truth, __ATOMIC_ACQUIRE), (uint64_t)(now_real - origin));
    if (p->scratch != NULL) /* the serialization work of a large message */
        memset(p->scratch, (int)(m.seq & 0xff), gp->size);
    truth_publish_at(__atomic_load_n(&p->truth, __ATOMIC_ACQUIRE), &p->last_pub_ns, now_ns(CLOCK_MONOTONIC));

    const char *topic = __atomic_load_n(&p->topic, __ATOMIC_ACQUIRE);
    bool inter_needed = !gn->intra;
    if (gn->intra) {
        for (int s = 0; s < G.nsubs; s++) {
            if (strcmp(G.subs[s].topic, topic) != 0)
                continue;
            if (!same_proc_intra(gp, &G.subs[s]))
                inter_needed = true;
        }
        (void)publisher_valid(p->handle); /* rclcpp: get_subscription_count() > intra count, on every distro */
        if (jazzy)
            ros_trace_rclcpp_intra_publish(p->handle, &m);
        truth_inc(__atomic_load_n(&p->truth, __ATOMIC_ACQUIRE), TC_PUB_INTRA);
        for (int s = 0; s < G.nsubs; s++) {
            if (strcmp(G.subs[s].topic, topic) != 0 || !same_proc_intra(gp, &G.subs[s]) || G.subs[s].deaf ||
                !middleware_matches(gp, &G.subs[s]))
                continue;
            m.ring = (uint32_t)((atomic_fetch_add(&subs_rt[s].ring_writes, 1) + 1) % 10); /* depth 10 */
            if (jazzy)
                ros_trace_rclcpp_ring_buffer_enqueue(subs_rt[s].ipc_sub + 0x80, m.ring, 1, false);
            ssize_t w = write(subs_rt[s].pipe[1], &m, sizeof m);
            (void)w;
        }
    }
    if (!inter_needed)
        return; /* intra-only: rcl_publish is never reached */
    struct sim_msgs_sample typed;
    uint64_t size = typed_message(p->type, &m, (uint8_t *)p->scratch, gp->size, &typed);
    const void *message = p->type == TYPE_SAMPLE ? (const void *)&typed : (const void *)&m;
    switch (gp->api) {
    case PUB_LOANED: /* rclcpp publish(LoanedMessage) on a publisher that can loan */
        if (jazzy && !gn->py)
            ros_trace_rclcpp_publish(NULL, &m);
        if (m.seq == 1) /* an invalid call: rcl fails before its tracepoint */
            (void)rcl_publish_loaned_message(p->handle, NULL, NULL);
        if (rcl_publish_loaned_message(p->handle, (void *)message, NULL) != RP_RCL_RET_OK)
            return;
        break;
    case PUB_SERIALIZED: { /* Publisher::publish(SerializedMessage), or rclpy publish(bytes) */
        if (m.seq == 1)
            (void)rcl_publish_serialized_message(p->handle, NULL, NULL);
        rp_serialized_message_t serialized = {(uint8_t *)p->scratch, size, size};
        if (rcl_publish_serialized_message(p->handle, &serialized, NULL) != RP_RCL_RET_OK)
            return;
        break;
    }
    default: {
        if (!gn->py)
            ros_trace_rclcpp_publish(NULL, message);
        void *rmw = publisher_valid(p->handle); /* rcl_publish: NULL returns before its tracepoint */
        if (rmw == NULL)
            return;
        ros_trace_rcl_publish(p->handle, message);
        rmw_publish(rmw, &m); /* publisher->impl->rmw_handle, as rcl passes it */
    }
    }
    truth_inc(__atomic_load_n(&p->truth, __ATOMIC_ACQUIRE), TC_PUB_INTER);
    if (p->type != TYPE_OTHER || gp->api == PUB_SERIALIZED)
        truth_bytes(__atomic_load_n(&p->truth, __ATOMIC_ACQUIRE), size);
    for (int s = 0; s < G.nsubs; s++) {
        const struct g_sub *gs = &G.subs[s];
        if (gs->deaf || !middleware_matches(gp, gs)) /* never matched: the middleware delivers it nothing */
            continue;
        if (strcmp(gs->topic, topic) == 0 || (gs->reuse_at >= 0 && strcmp(gs->reuse_topic, topic) == 0))
            send_to(p->sock, "s", s, &m);
    }
}

static void publish(int i) { publish_from(i, 0); }

/* A message reaching its subscription's user: its age since its chain's
 * first publish (relay=), in the graph's truth. */
static void aged(int truth, const struct msg *m)
{
    if (truth < 0)
        return; /* truth off (or full): not even the clock read */
    int64_t age = (int64_t)now_ns(CLOCK_REALTIME) - m->origin_real_ns;
    truth_e2e(truth, age > 0 ? (uint64_t)age : 0);
}

/* An rclcpp callback of subscription s ran for a message sent at src: its node's timers sample
 * it, when the node keeps sampled truth (truth: the subscription's slot as its deliverer read it,
 * under the lock a re-creation takes). */
static void seen(int s, int truth, int64_t src)
{
    struct sub_rt *r = &subs_rt[s];
    if (truth < 0 || !G.nodes[G.subs[s].node].samples)
        return;
    atomic_store(&r->latest_src, src);
    int64_t none = 0;
    atomic_compare_exchange_strong(&r->first_src, &none, src);
}

/* A timer of an rclcpp node published on publisher p: the truth of its sampled links, from each of
 * its node's subscriptions that ran for a message (the probe's rule 3). */
static void sampled_truth(int node, int p)
{
    int slot = __atomic_load_n(&pubs_rt[p].truth, __ATOMIC_ACQUIRE);
    if (slot < 0 || nodes_rt[node].ninputs == 0)
        return;
    int64_t now = (int64_t)now_ns(CLOCK_REALTIME);
    for (int i = 0; i < nodes_rt[node].ninputs; i++) {
        int s = nodes_rt[node].inputs[i];
        int64_t latest = atomic_load(&subs_rt[s].latest_src);
        if (latest <= 0 || latest >= now)
            continue;
        int64_t first = atomic_load(&subs_rt[s].first_src);
        truth_sampled(slot, (uint64_t)(now - latest), (uint64_t)(now - (first > 0 && first < latest ? first : latest)));
    }
}

/* A timer callback that published ends its node's subscriptions' cycles. */
static void sampled_end(int node)
{
    for (int i = 0; i < nodes_rt[node].ninputs; i++)
        atomic_store(&subs_rt[nodes_rt[node].inputs[i]].first_src, 0);
}

/* Each sampling node's inputs (node option samples), once before its threads start: a timer's
 * publish visits only its own, and nodes without the option write no sampled truth (two
 * records a publish: under qemu-user the robot graph's many timers were slowed enough to
 * deliver late). */
static void find_inputs(int proc)
{
    for (int s = 0; s < G.nsubs; s++) {
        struct node_rt *n = &nodes_rt[G.subs[s].node];
        if (G.nodes[G.subs[s].node].proc != proc || !G.nodes[G.subs[s].node].samples ||
            strcmp(G.subs[s].topic, "/parameter_events") == 0)
            continue; /* the TimeSource's subscription: every node's own, never a pipeline's input */
        if (n->inputs == NULL)
            n->inputs = xalloc((size_t)G.nsubs * sizeof *n->inputs);
        n->inputs[n->ninputs++] = s;
    }
}

/* The end of a relay='s callback work: the message published on, inside the
 * callback, as a pipeline's node does. */
static void relay(int s, const struct msg *m)
{
    if (G.subs[s].relay > 0)
        publish_from(G.subs[s].relay - 1, m->origin_real_ns);
}

static void spin_node(int s);

static void deliver_socket(int s, const struct msg *m)
{
    my_events++;
    spend_msgcost();
    struct g_sub *gs = &G.subs[s];
    struct g_node *gn = &G.nodes[gs->node];
    struct sub_rt *r = &subs_rt[s];
    bool reusable = gs->reuse_at >= 0;
    if (reusable)
        pthread_mutex_lock(&reuse_mutex);
    const char *topic = r->topic;
    rcl_handle_t *handle = r->handle;
    void *rmw = r->rmw;
    int truth = r->truth;
    if (reusable)
        pthread_mutex_unlock(&reuse_mutex);
    const char *pub_topic = m->pub >= 0 && m->pub < G.npubs
                                ? __atomic_load_n(&pubs_rt[m->pub].topic, __ATOMIC_ACQUIRE)
                                : NULL;
    if (m->pub >= 0 && m->pub < G.npubs && strcmp(pub_topic ? pub_topic : G.pubs[m->pub].topic, topic) != 0)
        return; /* not matched (the subscription was re-created for another topic) */
    if (gs->drop > 0) {
        /* A best-effort reader loses the sample in the network: nothing fires
         * (no take, no callback). Exactly drop x n of the first n samples. */
        uint64_t n = __atomic_fetch_add(&r->received, 1, __ATOMIC_RELAXED);
        if ((uint64_t)((double)(n + 1) * gs->drop) > (uint64_t)((double)n * gs->drop)) {
            truth_inc(truth, TC_SUB_LOST);
            return;
        }
    }
    if (!gn->py)
        ros_trace_rclcpp_executor_execute(handle);
    else /* rclpy's wait set wakes before the sample is ready: a take that takes nothing */
        ros_trace_rmw_take(rmw, r->scratch, 0, false);
    /* the taken message, as its type's struct; its payload's length as its publisher sent it */
    struct sim_msgs_sample typed;
    size_t sent = m->pub >= 0 && m->pub < G.npubs ? G.pubs[m->pub].size : 0;
    uint64_t size = typed_message(r->type, m, sent <= r->scratch_size ? (uint8_t *)r->scratch : NULL, sent, &typed);
    /* delay=MS: the message is that much older than "now" when taken (a known latency) */
    int64_t source_ns = m->src_real_ns - (int64_t)(gs->delay_ms * 1e6);
    if (gs->serialized) { /* rclcpp's GenericSubscription: rcl's serialized take (rmw_take inside from Jazzy on) */
        rp_serialized_message_t serialized = {(uint8_t *)r->scratch, size, size};
        int64_t info[8] = {source_ns}; /* rmw_message_info_t: the source timestamp first */
        if (rcl_take_serialized_message(handle, &serialized, info, NULL) != RP_RCL_RET_OK)
            return;
    } else {
        ros_trace_rmw_take(rmw, r->type == TYPE_OTHER ? (const void *)r->scratch : &typed, source_ns, true);
    }
    truth_inc(truth, TC_SUB_TAKEN);
    ros_trace_rcl_take(r->scratch);
    if (gn->py) { /* rclpy: rmw_take and rcl_take only; the take is the delivery */
        truth_inc(truth, TC_SUB_INTER);
        if (r->type != TYPE_OTHER)
            truth_bytes(truth, size);
        aged(truth, m);
        uint64_t t0 = now_ns(CLOCK_MONOTONIC);
        if (gs->cost_ms > 0) /* its callback's work, which no tracepoint shows; the graph times it itself */
            sleep_until(t0 + (uint64_t)(gs->cost_ms * 1e6));
        relay(s, m);
        if (gs->cost_ms > 0)
            truth_callback(truth, now_ns(CLOCK_MONOTONIC) - t0, 0);
        return;
    }
    ros_trace_rclcpp_take(r->scratch);
    if (gn->intra && m->intra && m->proc == self_proc)
        return; /* the DDS copy of our own intra-process publish: rclcpp discards it */
    if (r->scratch != NULL)
        memset(r->scratch, 0, r->scratch_size);
    const char *cb = r->rclcpp_sub + 0x168;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    if (gs->serialized && !jazzy) { /* Humble's GenericSubscription calls its callback directly: no tracepoint */
        truth_inc(truth, TC_SUB_INTER);
        truth_bytes(truth, size);
        return;
    }
    ros_trace_callback_start(cb, false);
    truth_inc(truth, TC_SUB_INTER);
    if (r->type != TYPE_OTHER || gs->serialized)
        truth_bytes(truth, size);
    aged(truth, m);
    seen(s, truth, m->src_real_ns - (int64_t)(gs->delay_ms * 1e6));
    if (gs->cost_ms > 0) /* a slow callback: the socket queue fills and drops what it cannot hold */
        sleep_until(t0 + (uint64_t)(gs->cost_ms * 1e6));
    relay(s, m);
    if (gs->spin) /* spin_some inside the callback: the node's other subscriptions run nested */
        spin_node(s);
    if (gs->throw_every > 0 && (atomic_fetch_add(&r->callbacks, 1) + 1) % (uint64_t)gs->throw_every == 0) {
        truth_thrown(truth); /* the exception unwinds past callback_end; the executor catches it */
        return;
    }
    ros_trace_callback_end(cb);
    truth_callback(truth, now_ns(CLOCK_MONOTONIC) - t0, 0);
}

/* The node's other subscriptions' queued messages, delivered now (nested in the caller's callback). */
static void spin_node(int s)
{
    for (int o = 0; o < G.nsubs; o++) {
        if (o == s || G.subs[o].node != G.subs[s].node || G.subs[o].spin)
            continue;
        struct msg m;
        while (recv(subs_rt[o].sock, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m)
            deliver_socket(o, &m);
    }
}

static void deliver_intra(int s, const struct msg *m)
{
    my_events++;
    spend_msgcost();
    struct sub_rt *r = &subs_rt[s];
    if (jazzy)
        ros_trace_rclcpp_ring_buffer_dequeue(r->ipc_sub + 0x80, m->ring, 0);
    const char *cb = r->ipc_sub + 0x40;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    ros_trace_callback_start(cb, true);
    truth_inc(r->truth, TC_SUB_INTRA);
    aged(r->truth, m);
    if (jazzy) /* the probe stamps the enqueue; Humble shows nothing of an intra-process delivery */
        seen(s, r->truth, m->src_real_ns);
    if (G.subs[s].cost_ms > 0)
        sleep_until(t0 + (uint64_t)(G.subs[s].cost_ms * 1e6));
    relay(s, m);
    ros_trace_callback_end(cb);
    truth_callback(r->truth, now_ns(CLOCK_MONOTONIC) - t0, 0);
}

/* The executor calls the timer through rcl (Jazzy on: with info), then runs its callback. */
static void call(int c);
static void respond(int v, rp_rmw_request_id_t *id, uint64_t taken_ns);

static void fire_timer(int t)
{
    struct timer_rt *tr = &timers_rt[t];
    bool py = G.nodes[tr->node].py;
    rp_rcl_timer_call_info_t info;
    rp_rcl_ret_t ret;
    if (jazzy && rcl_timer_call_with_info != NULL) {
        ret = rcl_timer_call_with_info(tr->handle, &info);
    } else {
        info.expected_call_time = atomic_load(&tr->sched->next_call_ns);
        ret = rcl_timer_call(tr->handle);
        info.actual_call_time = tr->sched->last_call_ns;
    }
    if (ret != RP_RCL_RET_OK)
        return;
    truth_late(tr->truth, info.actual_call_time > info.expected_call_time
                              ? (uint64_t)(info.actual_call_time - info.expected_call_time) : 0);
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    if (!py) {
        ros_trace_rclcpp_executor_execute(tr->handle);
        ros_trace_callback_start(tr->callback, false);
    }
    truth_inc(tr->truth, TC_FIRES);
    if (tr->pub >= 0) {
        publish(tr->pub);
        if (!py)
            sampled_truth(tr->node, tr->pub);
    }
    for (int i = 0; i < tr->nmore; i++) {
        publish(tr->more_pubs[i]);
        if (!py)
            sampled_truth(tr->node, tr->more_pubs[i]);
    }
    if (!py && (tr->pub >= 0 || tr->nmore > 0))
        sampled_end(tr->node);
    if (tr->node_log >= 0)
        publish_rosout(tr->node_log);
    if (tr->client >= 0)
        call(tr->client);
    if (tr->cost_ms > 0 && ++tr->fires % (uint64_t)tr->cost_every == 0) /* a slow control loop */
        sleep_until(t0 + (uint64_t)(tr->cost_ms * 1e6));
    if (!py) {
        ros_trace_callback_end(tr->callback);
        truth_callback(tr->truth, now_ns(CLOCK_MONOTONIC) - t0, tr->period_ns);
    }
}

/*
 * A request waiting at service v, as rclcpp and rclpy take them: one take
 * per wake of the executor (the next waits for the next rcl_wait, which
 * returns at once while more wait), never a take until one fails
 * (docs/real-traces: humble_gone_client_*, humble_rclpy_service). rclcpp's
 * Service::take_request calls rcl_take_request and its callback fires
 * callback_start/end; rclpy takes with rcl_take_request_with_info and fires
 * no callback tracepoint. Both answer with rcl_send_response; drop=N leaves
 * every N-th request unanswered.
 */
static void serve(int v)
{
    struct service_rt *sv = &services_rt[v];
    bool cpp = !G.nodes[G.services[v].node].py;
    char request[16];
    if (!running())
        return; /* a backlog left at the end stays unanswered, as when a server stops */
    rp_rmw_request_id_t id = {0};
    rp_rmw_service_info_t info = {0};
    rp_rcl_ret_t ret = cpp ? rcl_take_request(sv->handle, &id, request)
                           : rcl_take_request_with_info(sv->handle, &info, request);
    if (ret != RP_RCL_RET_OK)
        return;
    if (!cpp)
        id = info.request_id;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    truth_inc(sv->truth, TC_FIRES);
    if (cpp)
        ros_trace_callback_start(sv->callback, false);
    if (sv->cost_ms > 0)
        sleep_until(t0 + (uint64_t)(sv->cost_ms * 1e6));
    if (cpp) {
        ros_trace_callback_end(sv->callback);
        truth_callback(sv->truth, now_ns(CLOCK_MONOTONIC) - t0, 0);
    }
    if (G.services[v].drop_every > 0 && ++sv->taken % (uint64_t)G.services[v].drop_every == 0)
        return; /* taken, never answered */
    if (G.services[v].defer_ms > 0 && sv->ndeferred < (int)(sizeof sv->deferred / sizeof sv->deferred[0])) {
        /* rclcpp_action / rclpy's action server: the result request waits for the goal to finish */
        sv->deferred[sv->ndeferred].id = id;
        sv->deferred[sv->ndeferred].taken_ns = t0;
        sv->deferred[sv->ndeferred++].due_ns = t0 + (uint64_t)(G.services[v].defer_ms * 1e6);
        return;
    }
    respond(v, &id, t0);
}

/*
 * Service v answers request id, taken at taken_ns; an action's part publishes
 * its status (and feedback). A response rcl refuses with RCL_RET_TIMEOUT (on
 * Fast DDS, a request taken after its client had gone: sim/rcl/rcl.c) is
 * lost: rclcpp's Service::send_response logs a warning and returns, rclpy's
 * service_send_response warns; either way the server carries on.
 */
static void respond(int v, rp_rmw_request_id_t *id, uint64_t taken_ns)
{
    struct service_rt *sv = &services_rt[v];
    char response[16] = {0};
    rp_rcl_ret_t ret = rcl_send_response(sv->handle, id, response);
    if (ret == RP_RCL_RET_OK) {
        truth_call(sv->truth, now_ns(CLOCK_MONOTONIC) - taken_ns);
        truth_inc(sv->truth, TC_ANSWERED);
    } else if (ret == SIM_RCL_RET_TIMEOUT) {
        truth_inc(sv->truth, TC_SEND_FAILED);
    }
    if (G.services[v].feedback_pub >= 0)
        publish(G.services[v].feedback_pub);
    if (G.services[v].status_pub >= 0)
        publish(G.services[v].status_pub);
}

/* Answers service v's deferred requests that are due; returns when the next one is (UINT64_MAX: none). */
static uint64_t respond_due(int v, uint64_t now)
{
    struct service_rt *sv = &services_rt[v];
    uint64_t next = UINT64_MAX;
    for (int i = 0; i < sv->ndeferred;) {
        if (sv->deferred[i].due_ns <= now) {
            respond(v, &sv->deferred[i].id, sv->deferred[i].taken_ns);
            sv->deferred[i] = sv->deferred[--sv->ndeferred];
        } else {
            next = sv->deferred[i].due_ns < next ? sv->deferred[i].due_ns : next;
            i++;
        }
    }
    return next;
}

/* Client c calls its service once (rclcpp's async_send_request and rclpy's call_async both end in rcl_send_request). */
static void call(int c)
{
    struct client_rt *cl = &clients_rt[c];
    char request[16] = {0};
    int64_t seq = 0;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    /* As rclcpp's async_send_request and rclpy's call_async: the call is recorded under the client's lock
     * taken before the send, so an answer taken by another thread meanwhile waits for it. */
    pthread_mutex_lock(&cl->pending);
    if (rcl_send_request(cl->handle, request, &seq) == RP_RCL_RET_OK) {
        atomic_store(&cl->sent_ns[(uint64_t)seq % CLIENT_RING], t0);
        truth_inc(cl->truth, TC_FIRES);
    }
    pthread_mutex_unlock(&cl->pending);
}

/*
 * A response waiting at client c, one take per wake of the executor as
 * requests are (serve): rclcpp takes with rcl_take_response, rclpy with
 * rcl_take_response_with_info.
 */
static void answered(int c)
{
    struct client_rt *cl = &clients_rt[c];
    bool cpp = !G.nodes[G.clients[c].node].py;
    char response[16];
    if (!running())
        return;
    rp_rmw_request_id_t id = {0};
    rp_rmw_service_info_t info = {0};
    rp_rcl_ret_t ret = cpp ? rcl_take_response(cl->handle, &id, response)
                           : rcl_take_response_with_info(cl->handle, &info, response);
    if (ret != RP_RCL_RET_OK)
        return;
    uint64_t taken = now_ns(CLOCK_MONOTONIC); /* a round trip ends at the take, as pulse times it */
    int64_t seq = cpp ? id.sequence_number : info.request_id.sequence_number;
    pthread_mutex_lock(&cl->pending); /* the take is outside the lock, the lookup inside (rclcpp, rclpy) */
    uint64_t sent = atomic_exchange(&cl->sent_ns[(uint64_t)seq % CLIENT_RING], 0);
    pthread_mutex_unlock(&cl->pending);
    if (sent == 0)
        return; /* not a call of ours (rclcpp: "Received invalid sequence number. Ignoring...") */
    uint64_t rtt = taken - sent;
    truth_call(cl->truth, rtt);
    if (G.clients[c].timeout_ms > 0 && rtt > (uint64_t)(G.clients[c].timeout_ms * 1e6))
        truth_inc(cl->truth, TC_LATE);
    truth_inc(cl->truth, TC_ANSWERED);
    if (G.clients[c].then >= 0) /* an accepted goal: ask for its result */
        call(G.clients[c].then);
}

/* ------------------------------------------------------------ threads */

struct executor_arg {
    int index, count;
};

static void *executor_thread(void *argp)
{
    struct executor_arg *arg = argp;
    struct pollfd fds[2 * G_MAX_SUBS + G_MAX_SERVICES + G_MAX_CLIENTS];
    int kind[2 * G_MAX_SUBS + G_MAX_SERVICES + G_MAX_CLIENTS], which[2 * G_MAX_SUBS + G_MAX_SERVICES + G_MAX_CLIENTS];
    int nfds = 0, slot = 0;
    for (int s = 0; s < G.nsubs; s++) {
        if (G.nodes[G.subs[s].node].proc != self_proc)
            continue;
        /* a reentrant group's messages are taken by whichever thread is free */
        if (slot++ % arg->count != arg->index && !G.subs[s].reentrant)
            continue;
        fds[nfds] = (struct pollfd){subs_rt[s].sock, POLLIN, 0};
        kind[nfds] = 0, which[nfds++] = s;
        if (G.nodes[G.subs[s].node].intra) {
            fds[nfds] = (struct pollfd){subs_rt[s].pipe[0], POLLIN, 0};
            kind[nfds] = 1, which[nfds++] = s;
        }
    }
    for (int v = 0; v < G.nservices; v++) {
        if (G.nodes[G.services[v].node].proc != self_proc || slot++ % arg->count != arg->index)
            continue;
        fds[nfds] = (struct pollfd){services_rt[v].sock, POLLIN, 0};
        kind[nfds] = 2, which[nfds++] = v;
    }
    for (int c = 0; c < G.nclients; c++) {
        if (G.nodes[G.clients[c].node].proc != self_proc || slot++ % arg->count != arg->index)
            continue;
        fds[nfds] = (struct pollfd){clients_rt[c].impl->sock, POLLIN, 0};
        kind[nfds] = 3, which[nfds++] = c;
    }
    bool has_work = false;
    for (int t = 0; t < ntimers_rt; t++)
        has_work |= t % arg->count == arg->index;
    has_work |= nfds > 0;
    if (!has_work)
        return NULL;

    while (running()) {
        uint64_t now = now_ns(CLOCK_MONOTONIC), next = now + 100000000u;
        for (int f = 0; f < nfds; f++) /* deferred responses due now, and when the next one is */
            if (kind[f] == 2) {
                uint64_t due = respond_due(which[f], now);
                next = due < next ? due : next;
            }
        for (int t = arg->index; t < ntimers_rt; t += arg->count)
            if ((uint64_t)atomic_load(&timers_rt[t].sched->next_call_ns) < next)
                next = (uint64_t)atomic_load(&timers_rt[t].sched->next_call_ns);
        if (stop_ns != 0 && next > stop_ns)
            next = stop_ns;
        if (arg->index == 0) /* graph traffic, taken by the rmw itself (source ts 0) */
            ros_trace_rmw_take(discovery_reader, NULL, 0, true);
        ros_trace_rclcpp_executor_get_next_ready();
        if (next > now) {
            ros_trace_rclcpp_executor_wait_for_work(-1);
            /* rcl_wait, as every executor waits (the probe times it: an executor's idle time) */
            struct sim_wait_set ws = {fds, nfds};
            if (rcl_wait(&ws, (int64_t)(next - now)) == RP_RCL_RET_ERROR && errno != EINTR)
                break;
        }
        for (int f = 0; f < nfds; f++) {
            if (!(fds[f].revents & POLLIN))
                continue;
            if (kind[f] == 2) { /* requests: the rcl take calls read them */
                serve(which[f]);
                continue;
            }
            if (kind[f] == 3) { /* responses */
                answered(which[f]);
                continue;
            }
            struct msg m;
            while (read(fds[f].fd, &m, sizeof m) == (ssize_t)sizeof m) {
                if (kind[f] == 0)
                    deliver_socket(which[f], &m);
                else
                    deliver_intra(which[f], &m);
            }
        }
        now = now_ns(CLOCK_MONOTONIC);
        for (int t = arg->index; t < ntimers_rt; t += arg->count) {
            struct timer_rt *tr = &timers_rt[t];
            /* rcl_timer_is_ready, as an executor asks after rcl_wait: through the handle, so the
             * rcl_timer_call that follows finds it warm, as in rclcpp */
            struct sim_timer_impl *impl = __atomic_load_n(&tr->handle->impl, __ATOMIC_RELAXED);
            uint64_t due = (uint64_t)atomic_load(&impl->next_call_ns);
            if (due > now)
                continue;
            if (now >= tr->stall_from && now < tr->stall_until) { /* wedged: resumes on schedule after */
                while (due < tr->stall_until)
                    due += tr->period_ns;
                atomic_store(&tr->sched->next_call_ns, (int64_t)due);
                continue;
            }
            /* rcl_timer_call moves the schedule one period on and skips periods missed while the
             * executor was late (a loaded machine, a stall, a slow callback): never caught up.
             * Tests judge against what the graph did (truth.h), not against rate x time. */
            fire_timer(t);
        }
    }
    flush_events();
    return NULL;
}

static void *publisher_thread(void *argp)
{
    int i = (int)(intptr_t)argp;
    struct g_pub *gp = &G.pubs[i];
    uint64_t period = gp->hz > 0 ? (uint64_t)(1e9 / gp->hz) : 0, next = pubs_rt[i].created_ns + period;
    bool reused = false, stalled = false, sagged = false;
    uint64_t stall_ns = t0_ns + (uint64_t)(gp->stall_at * 1e9);
    uint64_t sag_ns = gp->sag_hz > 0 ? t0_ns + (uint64_t)(gp->sag_at * 1e9) : UINT64_MAX;
    uint64_t reuse_ns = gp->reuse_at >= 0 ? t0_ns + (uint64_t)(gp->reuse_at * 1e9) : UINT64_MAX;
    for (uint64_t n = 0;; n++) {
        if (period > 0) {
            sleep_until(next);
            if (!running())
                break;
        } else if ((n & 1023) == 0 && !running()) { /* flat out: look at the clock every 1024 messages */
            break;
        }
        if (gp->stall_for > 0 && !stalled && now_ns(CLOCK_MONOTONIC) >= stall_ns) {
            stalled = true; /* a wedged driver: silent, then back on its schedule */
            sleep_until(stall_ns + (uint64_t)(gp->stall_for * 1e9));
            while (next < now_ns(CLOCK_MONOTONIC))
                next += period;
            continue;
        }
        if (!sagged && next >= sag_ns) { /* a sagging driver: the new rate from its next message on */
            sagged = true;
            period = (uint64_t)(1e9 / gp->sag_hz);
            next = sag_ns + period;
            continue;
        }
        if (!reused && now_ns(CLOCK_MONOTONIC) >= reuse_ns) {
            reused = true; /* destroyed (no tracepoint) and re-created at the same address */
            create_publisher(i, gp->reuse_topic, true);
        }
        for (int b = 0; b < (gp->burst > 1 ? gp->burst : 1); b++) /* a burst: back to back */
            publish(i);
        next += period;
    }
    flush_events();
    return NULL;
}

static void *reuse_sub_thread(void *argp)
{
    int i = (int)(intptr_t)argp;
    sleep_until(t0_ns + (uint64_t)(G.subs[i].reuse_at * 1e9));
    if (!running())
        return NULL;
    pthread_mutex_lock(&reuse_mutex);
    create_subscription(i, G.subs[i].reuse_topic, true);
    pthread_mutex_unlock(&reuse_mutex);
    return NULL;
}

static void *storm_thread(void *argp)
{
    int i = (int)(intptr_t)argp;
    char m[16];
    for (;;) { /* flat out until the process exits underneath us */
        ros_trace_rclcpp_publish(NULL, m);
        ros_trace_rcl_publish(pubs_rt[i].handle, m);
        rmw_publish(pubs_rt[i].rmw, m);
        truth_inc(pubs_rt[i].truth, TC_PUB_INTER);
    }
    return NULL;
}

/* burn: spin for FRACTION of every 10 ms slice and sleep the rest, so the
 * process costs a known share of one core (what `pulse cpu` must report). */
static void *burn_thread(void *argp)
{
    double fraction = *(const double *)argp;
    const uint64_t slice = 10000000u;
    for (uint64_t start = now_ns(CLOCK_MONOTONIC); running(); start += slice) {
        spin_thread_cpu((uint64_t)(fraction * slice), start + slice);
        sleep_until(start + slice);
    }
    return NULL;
}

/* Spins until this thread has spent want_ns of CPU (its own clock:
 * preemption does not shorten it), or until_mono_ns passes (0: no limit). */
static void spin_thread_cpu(uint64_t want_ns, uint64_t until_mono_ns)
{
    uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    while (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < want_ns && (until_mono_ns == 0 || now_ns(CLOCK_MONOTONIC) < until_mono_ns))
        ;
}

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int run_process(int proc, int64_t duration_ns)
{
    self_proc = proc;
    find_inputs(proc);
    struct g_proc *gp = &G.procs[proc];
    truth_open(truth_arg, gp->name);
    jazzy = ros_trace_enabled_rcl_init != NULL;
    rmw_publish_fn = dlsym(RTLD_DEFAULT, "ros_trace_rmw_publish");
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* Sockets first (no tracepoints), so peers can reach us as soon as anyone publishes. */
    for (int s = 0; s < G.nsubs; s++)
        subs_rt[s].sock = -1;
    for (int v = 0; v < G.nservices; v++)
        if (G.nodes[G.services[v].node].proc == proc)
            services_rt[v].sock = bind_socket("v", v);
    for (int c = 0; c < G.nclients; c++) {
        if (G.nodes[G.clients[c].node].proc != proc)
            continue;
        struct client_rt *cl = &clients_rt[c];
        cl->impl = xalloc(sizeof *cl->impl);
        cl->impl->sock = bind_socket("c", c);
        cl->impl->hold_ns = (uint64_t)(G.clients[c].hold_ms * 1e6);
        pthread_mutex_init(&cl->pending, NULL);
        memcpy(cl->impl->gid, &c, sizeof c);
        struct sockaddr_un a; /* a service no node serves: its socket never exists */
        sock_path(&a, "v", G.clients[c].service >= 0 ? G.clients[c].service : 9999);
        snprintf(cl->impl->peer_path, sizeof cl->impl->peer_path, "%s", a.sun_path);
    }

    /*
     * Every process creates its entities at the common start instant, and its
     * periodic work is phased from the moment creation ends: a rate measured
     * from an endpoint's creation then holds from the first window on.
     */
    sleep_until(t0_ns);

    static char context[64];
    ros_trace_rcl_init(context);
    discovery_reader = xalloc(48);
    ros_trace_rmw_subscription_init(discovery_reader, fake_gid); /* Fast DDS announces it; Cyclone does not */
    for (int n = 0; n < G.nnodes; n++) {
        if (G.nodes[n].proc != proc)
            continue;
        create_node(n);
        churn(n);
        /* rclcpp: /parameter_events publisher, one event, the TimeSource subscription, more events */
        for (int p = 0; p < G.npubs; p++)
            if (G.pubs[p].node == n && G.pubs[p].builtin)
                create_publisher(p, G.pubs[p].topic, false);
        for (int s = 0; s < G.nsubs; s++)
            if (G.subs[s].node == n && strcmp(G.subs[s].topic, "/parameter_events") == 0)
                create_subscription(s, G.subs[s].topic, false);
        for (int p = 0; p < G.npubs; p++)
            if (G.pubs[p].node == n && !G.pubs[p].builtin)
                create_publisher(p, G.pubs[p].topic, false);
        for (int s = 0; s < G.nsubs; s++)
            if (G.subs[s].node == n && strcmp(G.subs[s].topic, "/parameter_events") != 0)
                create_subscription(s, G.subs[s].topic, false);
        for (int t = 0; t < G.ntimers; t++) {
            if (G.timers[t].node != n)
                continue;
            struct timer_rt *tr = &timers_rt[add_timer(n, G.timers[t].hz, -1, -1, -1)];
            tr->cost_ms = G.timers[t].cost_ms;
            tr->cost_every = G.timers[t].cost_every > 0 ? G.timers[t].cost_every : 1;
            if (G.timers[t].stall_for > 0) {
                tr->stall_from = t0_ns + (uint64_t)(G.timers[t].stall_at * 1e9);
                tr->stall_until = tr->stall_from + (uint64_t)(G.timers[t].stall_for * 1e9);
            }
        }
        for (int v = 0; v < G.nservices; v++) {
            if (G.services[v].node != n)
                continue;
            struct sim_call_impl *impl = xalloc(sizeof *impl);
            impl->rmw_handle = xalloc(48);
            impl->sock = services_rt[v].sock;
            snprintf(impl->peer_path, sizeof impl->peer_path, "%s", rundir);
            services_rt[v].impl = impl;
            services_rt[v].handle = xalloc(sizeof(rcl_handle_t));
            services_rt[v].handle->impl = impl;
            services_rt[v].callback = xalloc(128);
            services_rt[v].cost_ms = G.services[v].cost_ms;
            services_rt[v].truth = truth_add("service", LANG(n), nodes_rt[n].fq, G.services[v].name);
            ros_trace_rcl_service_init(services_rt[v].handle, nodes_rt[n].handle, impl->rmw_handle, G.services[v].name);
            if (!G.nodes[n].py) {
                ros_trace_rclcpp_service_callback_added(services_rt[v].handle, services_rt[v].callback);
                callback_register(services_rt[v].callback, "on_request", G.services[v].name, nodes_rt[n].fq);
            }
        }
        for (int c = 0; c < G.nclients; c++) {
            if (G.clients[c].node != n)
                continue;
            struct client_rt *cl = &clients_rt[c];
            cl->impl->rmw_handle = xalloc(48);
            cl->handle = xalloc(sizeof(rcl_handle_t));
            cl->handle->impl = cl->impl;
            cl->truth = truth_add("client", LANG(n), nodes_rt[n].fq, G.clients[c].name);
            ros_trace_rcl_client_init(cl->handle, nodes_rt[n].handle, cl->impl->rmw_handle, G.clients[c].name);
            if (G.clients[c].hz > 0) /* an action's result and cancel clients are called, not timed */
                add_timer(n, G.clients[c].hz, -1, -1, c);
        }
        int first_timer = ntimers_rt;
        for (int p = 0; p < G.npubs; p++) {
            if (G.pubs[p].node != n || G.pubs[p].builtin || G.pubs[p].thread || G.pubs[p].manual)
                continue;
            struct timer_rt *loop = NULL; /* loop: the node's timer of this rate already made */
            for (int t = first_timer; G.nodes[n].loop && loop == NULL && t < ntimers_rt; t++)
                if (timers_rt[t].pub >= 0 && G.pubs[timers_rt[t].pub].hz == G.pubs[p].hz)
                    loop = &timers_rt[t];
            if (loop == NULL) {
                add_timer(n, G.pubs[p].hz, p, -1, -1);
                continue;
            }
            loop->more_pubs = realloc(loop->more_pubs, (size_t)(loop->nmore + 1) * sizeof *loop->more_pubs);
            if (loop->more_pubs == NULL) {
                perror("simgraph: realloc");
                exit(3);
            }
            loop->more_pubs[loop->nmore++] = p;
        }
        if (G.nodes[n].log_hz > 0)
            add_timer(n, G.nodes[n].log_hz, -1, n, -1);
        for (int p = 0; p < G.npubs; p++) /* startup parameter events */
            if (G.pubs[p].node == n && G.pubs[p].builtin)
                publish(p);
        if (!G.nodes[n].py)
            publish_rosout(n); /* the node's startup log line */
    }

    stop_ns = duration_ns > 0 ? t0_ns + (uint64_t)duration_ns : 0;
    if (gp->exit_at >= 0) { /* it leaves early, the normal way: its sockets close, its segment stays */
        uint64_t at = t0_ns + (uint64_t)(gp->exit_at * 1e9);
        stop_ns = stop_ns == 0 || at < stop_ns ? at : stop_ns;
    }

    if (gp->exit_storm > 0) {
        int pub = -1;
        for (int p = 0; p < G.npubs && pub < 0; p++)
            if (G.nodes[G.pubs[p].node].proc == proc && !G.pubs[p].builtin)
                pub = p;
        if (pub < 0) {
            fprintf(stderr, "simgraph: exit_storm needs a publisher in process %s\n", gp->name);
            return 2;
        }
        for (int i = 0; i < gp->exit_storm; i++) {
            pthread_t th;
            pthread_create(&th, NULL, storm_thread, (void *)(intptr_t)pub);
        }
        sleep_until(stop_ns ? stop_ns : t0_ns + 200000000u);
        return 0; /* main returns while the storm threads still publish */
    }

    int nthreads = 0;
    pthread_t threads[G_MAX_PUBS + 64];
    struct executor_arg args[64];
    for (int i = 0; i < gp->threads; i++) {
        args[i] = (struct executor_arg){i, gp->threads};
        pthread_create(&threads[nthreads++], NULL, executor_thread, &args[i]);
    }
    for (int p = 0; p < G.npubs; p++)
        if (G.nodes[G.pubs[p].node].proc == proc && G.pubs[p].thread && !G.pubs[p].forked)
            for (int k = 0; k < (G.pubs[p].threads > 1 ? G.pubs[p].threads : 1) && nthreads < G_MAX_PUBS + 48; k++)
                pthread_create(&threads[nthreads++], NULL, publisher_thread, (void *)(intptr_t)p);
    for (int s = 0; s < G.nsubs; s++)
        if (G.nodes[G.subs[s].node].proc == proc && G.subs[s].reuse_at >= 0)
            pthread_create(&threads[nthreads++], NULL, reuse_sub_thread, (void *)(intptr_t)s);
    if (gp->burn > 0)
        pthread_create(&threads[nthreads++], NULL, burn_thread, &gp->burn);

    if (gp->kill_at >= 0) { /* a crash: no exit path runs, the segment stays behind */
        sleep_until(t0_ns + (uint64_t)(gp->kill_at * 1e9));
        raise(SIGKILL);
    }
    pid_t child = -1;
    if (gp->fork_at >= 0) {
        sleep_until(t0_ns + (uint64_t)(gp->fork_at * 1e9));
        child = fork();
        if (child == 0) { /* fork without exec: only this thread exists; publish on the inherited handle */
            truth_after_fork();
            pubs_rt[gp->fork_pub].created_ns = now_ns(CLOCK_MONOTONIC);
            publisher_thread((void *)(intptr_t)gp->fork_pub);
            truth_exit();
            _exit(0);
        }
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    if (child > 0) {
        int st;
        kill(child, SIGTERM);
        waitpid(child, &st, 0);
    }
    truth_exit(); /* not on the exit-storm path: its threads still publish as the process ends */
    return 0;
}

/* ------------------------------------------------------------ parent: one child per process */

static volatile sig_atomic_t forward_sig;
static void on_parent_signal(int sig) { forward_sig = sig; }

static const char *usage =
    "usage: simgraph [--graph demo|stress|flat|robot|FILE] [--duration SECONDS] [--process NAME]\n"
    "                [--rundir DIR] [--start-delay SECONDS] [--check] [--rusage] [--truth DIR]\n"
    "                [--msgcost US]\n"
    "Runs a stand-in ROS 2 graph that makes the tracetools calls of rcl, rclcpp and rclpy.\n"
    "--truth DIR (or SIMGRAPH_TRUTH=DIR): each process keeps what it really did in\n"
    "DIR/truth-PID.bin (messages published and taken, timer fires, calls), for tests.\n"
    "--msgcost US: every process the graph gives no msgcost= spends US µs of CPU a\n"
    "publish and a delivery, as a real middleware would (benchmarks).\n";

int main(int argc, char **argv)
{
    const char *graph_arg = "demo", *only = NULL, *rundir_arg = NULL, *msgcost_arg = NULL;
    double duration = 0, start_delay = 0.2;
    int child_proc = -1;
    bool check = false, rusage = false;
    /* A process with argv= shows another command line (ros2 launch ...): the
     * words before its own options, which SIMGRAPH_DISGUISE counts, are skipped. */
    int first = 1;
    const char *disguise = getenv("SIMGRAPH_DISGUISE");
    if (disguise != NULL) {
        first = 1 + atoi(disguise);
        unsetenv("SIMGRAPH_DISGUISE");
    }
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--graph") == 0 && v) graph_arg = v, i++;
        else if (strcmp(a, "--duration") == 0 && v) duration = atof(v), i++;
        else if (strcmp(a, "--process") == 0 && v) only = v, i++;
        else if (strcmp(a, "--rundir") == 0 && v) rundir_arg = v, i++;
        else if (strcmp(a, "--start-delay") == 0 && v) start_delay = atof(v), i++;
        else if (strcmp(a, "--child") == 0 && v) child_proc = atoi(v), i++;
        else if (strcmp(a, "--t0") == 0 && v) t0_ns = strtoull(v, NULL, 10), i++;
        else if (strcmp(a, "--check") == 0) check = true;
        else if (strcmp(a, "--rusage") == 0) rusage = true;
        else if (strcmp(a, "--truth") == 0 && v) truth_arg = v, i++;
        else if (strcmp(a, "--msgcost") == 0 && v) msgcost_arg = v, i++;
        else {
            fputs(usage, stderr);
            return strcmp(a, "--help") == 0 ? 0 : 2;
        }
    }
    if (duration < 0 || start_delay < 0 || start_delay > 60) {
        fprintf(stderr, "simgraph: --duration and --start-delay must be non-negative\n");
        return 2;
    }

    const char *text = graph_builtin(graph_arg);
    char *file_text = NULL;
    if (text == NULL) {
        FILE *f = fopen(graph_arg, "r");
        if (f == NULL) {
            fprintf(stderr, "simgraph: cannot open graph '%s': %s\n", graph_arg, strerror(errno));
            return 2;
        }
        file_text = xalloc(1 << 20);
        size_t n = fread(file_text, 1, (1 << 20) - 1, f);
        fclose(f);
        file_text[n] = '\0';
        text = file_text;
    }
    char err[256];
    if (!graph_parse(text, &G, err, sizeof err)) {
        fprintf(stderr, "simgraph: %s: %s\n", graph_arg, err);
        return 2;
    }
    if (msgcost_arg != NULL) {
        char *end;
        double us = strtod(msgcost_arg, &end);
        if (end == msgcost_arg || *end != '\0' || !(us >= 0 && us <= 100000)) {
            fprintf(stderr, "simgraph: --msgcost wants microseconds from 0 to 100000, not '%s'\n", msgcost_arg);
            return 2;
        }
        for (int p = 0; p < G.nprocs; p++)
            if (G.procs[p].msgcost_us == 0)
                G.procs[p].msgcost_us = us;
    }
    if (check)
        return 0;
    if (truth_arg == NULL)
        truth_arg = getenv("SIMGRAPH_TRUTH");

    if (rundir_arg != NULL && strlen(rundir_arg) >= sizeof rundir) {
        fprintf(stderr, "simgraph: --rundir must be shorter than %zu bytes\n", sizeof rundir);
        return 2;
    }
    if (child_proc >= 0) {
        if (t0_ns == 0)
            t0_ns = now_ns(CLOCK_MONOTONIC); /* run in place, starting now */
        snprintf(rundir, sizeof rundir, "%s", rundir_arg ? rundir_arg : "/tmp");
        int rc = run_process(child_proc, (int64_t)(duration * 1e9));
        flush_events(); /* the main thread's own publishes (startup parameter events) */
        if (rusage)
            fprintf(stderr, "RESULT events=%lu\n", atomic_load(&events));
        return rc;
    }

    if (rundir_arg != NULL) {
        snprintf(rundir, sizeof rundir, "%s", rundir_arg);
    } else {
        /* under $TMPDIR, as mkdtemp(1) would, when the name fits rundir */
        const char *tmp = getenv("TMPDIR");
        if (tmp == NULL || tmp[0] == '\0' || strlen(tmp) + sizeof "/simgraph-XXXXXX" > sizeof rundir)
            tmp = "/tmp";
        snprintf(rundir, sizeof rundir, "%s/simgraph-XXXXXX", tmp);
        if (mkdtemp(rundir) == NULL) {
            perror("simgraph: mkdtemp");
            return 3;
        }
    }
    uint64_t t0 = now_ns(CLOCK_MONOTONIC) + (uint64_t)(start_delay * 1e9);
    char t0s[32], ds[32], idx[16];
    snprintf(t0s, sizeof t0s, "%llu", (unsigned long long)t0);
    snprintf(ds, sizeof ds, "%.9f", duration);

    struct sigaction sa = {0};
    sa.sa_handler = on_parent_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    pid_t pids[G_MAX_PROCS];
    int npids = 0;
    for (int p = 0; p < G.nprocs; p++) {
        if (only != NULL && strcmp(only, G.procs[p].name) != 0)
            continue;
        snprintf(idx, sizeof idx, "%d", p);
        pid_t pid = fork();
        if (pid == 0) {
            for (int e = 0; e < G.procs[p].nenv; e++) /* the graph's env=NAME=VALUE, as a launch file would set it */
                putenv(G.procs[p].env[e]);
            char *args[20 + G_NAME / 2] = {"simgraph"};
            int na = 1;
            static char words[G_NAME];
            if (G.procs[p].argv[0] != '\0') { /* its own command line first, then simgraph's options */
                snprintf(words, sizeof words, "%s", G.procs[p].argv);
                na = 0;
                for (char *w = strtok(words, ","); w != NULL; w = strtok(NULL, ","))
                    args[na++] = w;
                char n[16];
                snprintf(n, sizeof n, "%d", na - 1);
                setenv("SIMGRAPH_DISGUISE", n, 1);
            }
            const char *own[] = {"--graph", graph_arg, "--child", idx, "--t0", t0s, "--duration", ds, "--rundir", rundir};
            for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
                args[na++] = (char *)own[k];
            if (truth_arg != NULL && truth_arg[0] != '\0') {
                args[na++] = "--truth";
                args[na++] = (char *)truth_arg;
            }
            if (rusage)
                args[na++] = "--rusage";
            if (msgcost_arg != NULL) {
                args[na++] = "--msgcost";
                args[na++] = (char *)msgcost_arg;
            }
            execv("/proc/self/exe", args);
            perror("simgraph: exec");
            _exit(127);
        }
        pids[npids++] = pid;
    }
    if (npids == 0) {
        fprintf(stderr, "simgraph: no process named '%s' in the graph\n", only ? only : "");
        return 2;
    }
    int status = 0;
    for (int done = 0; done < npids;) {
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR && forward_sig) {
                for (int i = 0; i < npids; i++)
                    kill(pids[i], forward_sig);
                forward_sig = 0;
                continue;
            }
            break;
        }
        done++;
        if (WIFSIGNALED(st)) {
            fprintf(stderr, "simgraph: process %d killed by signal %d\n", (int)pid, WTERMSIG(st));
            if (WTERMSIG(st) != SIGTERM && WTERMSIG(st) != SIGINT && WTERMSIG(st) != SIGKILL)
                status = 1;
        } else if (WEXITSTATUS(st) != 0) {
            status = WEXITSTATUS(st);
        }
    }
    if (rundir_arg == NULL) {
        for (int s = 0; s < G.nsubs; s++) {
            struct sockaddr_un a;
            sock_path(&a, "s", s);
            unlink(a.sun_path);
        }
        for (int v = 0; v < G.nservices; v++) {
            struct sockaddr_un a;
            sock_path(&a, "v", v);
            unlink(a.sun_path);
        }
        for (int c = 0; c < G.nclients; c++) { /* each client binds its own, for the answers */
            struct sockaddr_un a;
            sock_path(&a, "c", c);
            unlink(a.sun_path);
        }
        rmdir(rundir);
    }
    if (rusage) { /* CPU of every graph process, in microseconds, for paired benchmarks */
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        fprintf(stderr, "RESULT cpu_s=%.6f\n", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                                                  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    }
    free(file_text);
    return status;
}
