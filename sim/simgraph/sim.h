/*
 * What simgraph's files share (simgraph.c): the stand-in rcl and rclcpp
 * objects, the graph process's state, and the functions one file calls in
 * another. entities.c creates nodes and their entities, messages.c moves
 * messages (publish, deliver, relay), calls.c fires timers and carries
 * service calls, threads.c runs a graph process's threads, simgraph.c holds
 * the state and starts one child per graph process.
 */
#ifndef SIMGRAPH_SIM_H
#define SIMGRAPH_SIM_H

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
static inline int type_kind(const char *type)
{
    return strcmp(type, "sim_msgs/msg/Sample") == 0 ? TYPE_SAMPLE : strcmp(type, "sim_msgs/msg/Stamp") == 0 ? TYPE_STAMP : TYPE_OTHER;
}

/* A Sample's payload: size= bytes, less up to 8 % by its sequence number, so sizes vary (a sampled type). */
static inline size_t payload_len(size_t size, uint64_t seq) { return size - (size_t)(seq % 5) * (size / 50); }

/* m as a message of type kind (its stamp), with payload (capacity size) for a Sample; its serialized size. */
static inline uint64_t typed_message(int kind, const struct msg *m, uint8_t *payload, size_t size, struct sim_msgs_sample *out)
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

/* ------------------------------------------------------------ the graph process's state (simgraph.c) */

extern bool jazzy;
extern void *rmw_publish_fn;
extern struct graph G;
extern int self_proc;
extern char rundir[64]; /* short: socket paths must fit sockaddr_un */
extern const char *truth_arg; /* --truth DIR, else $SIMGRAPH_TRUTH: where truth.h files go */
extern uint64_t t0_ns, stop_ns;
extern struct node_rt nodes_rt[G_MAX_NODES];
extern struct pub_rt pubs_rt[G_MAX_PUBS];
extern struct sub_rt subs_rt[G_MAX_SUBS];
extern struct timer_rt timers_rt[G_MAX_TIMERS + G_MAX_PUBS + G_MAX_NODES + G_MAX_CLIENTS];
extern int ntimers_rt;
extern struct service_rt services_rt[G_MAX_SERVICES];
extern _Atomic int stop_flag; /* set by SIGINT/SIGTERM, read by every thread */
extern pthread_mutex_t reuse_mutex; /* guards re-created subscriptions */
extern struct client_rt clients_rt[G_MAX_CLIENTS];
extern void *discovery_reader; /* the rmw's own graph reader: takes on a handle rcl never announces */
extern _Atomic unsigned long events;     /* publishes + deliveries, reported with --rusage */
extern _Thread_local unsigned long my_events; /* per thread: no shared cache line per message */

extern uint8_t fake_gid[24];

#define LANG(node) (G.nodes[node].py ? "py" : "cpp") /* a truth record's client library */

/* ------------------------------------------------------------ across files */

/* simgraph.c: the clock, sockets, allocation, callback names */
void flush_events(void);
uint64_t now_ns(clockid_t c);
bool running(void);
void sleep_until(uint64_t t);
void *xalloc(size_t n);
void callback_register(const void *cb, const char *kind, const char *entity, const char *node);
void rmw_publish(const void *rmw_pub, const void *m);
void sock_path(struct sockaddr_un *a, const char *kind, int idx);
int bind_socket(const char *kind, int idx);
void send_to(int sock, const char *kind, int idx, const struct msg *m);

/* entities.c: nodes, publishers, subscriptions, timers */
const void *type_support(const char *type, bool py);
rp_rmw_time_t rmw_time(double ms);
struct sim_endpoint_options endpoint_options(const struct g_qos *q);
void *rmw_of(const rcl_handle_t *h);
void *publisher_valid(const rcl_handle_t *h);
void create_publisher(int i, const char *topic, bool reinit);
void create_subscription(int i, const char *topic, bool reinit);
int add_timer(int node, double hz, int pub, int log_node, int client);
void publish_rosout(int node);
void churn(int n);
void create_node(int idx);

/* messages.c: which subscriptions a publish reaches, and delivery */
const char *proc_env(int proc, const char *name);
bool is_zenoh(int proc);
bool middleware_matches(const struct g_pub *gp, const struct g_sub *gs);
bool same_proc_intra(const struct g_pub *gp, const struct g_sub *gs);
void spend_msgcost(void);
void publish_from(int i, int64_t origin);
void publish(int i);
void aged(int truth, const struct msg *m);
void seen(int s, int truth, int64_t src);
void sampled_truth(int node, int p);
void sampled_end(int node);
void find_inputs(int proc);
void relay(int s, const struct msg *m);
void deliver_socket(int s, const struct msg *m);
void spin_node(int s);
void deliver_intra(int s, const struct msg *m);

/* calls.c: timers, servers and clients */
void fire_timer(int t);
void serve(int v);
void respond(int v, rp_rmw_request_id_t *id, uint64_t taken_ns);
uint64_t respond_due(int v, uint64_t now);
void call(int c);
void answered(int c);

/* threads.c: a graph process's threads and its run */
void *executor_thread(void *argp);
void *publisher_thread(void *argp);
void *reuse_sub_thread(void *argp);
void *storm_thread(void *argp);
void *burn_thread(void *argp);
void spin_thread_cpu(uint64_t want_ns, uint64_t until_mono_ns);
void on_signal(int sig);
int run_process(int proc, int64_t duration_ns);

#endif
