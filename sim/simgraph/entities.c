/* simgraph: creating nodes and their entities as rcl, rclcpp and rclpy do (sim.h). */
#define _GNU_SOURCE
#include "sim.h"

/* ------------------------------------------------------------ entity creation */

uint8_t fake_gid[24]; /* the gid the stand-in rmw publishers report */

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

const void *type_support(const char *type, bool py)
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

rp_rmw_time_t rmw_time(double ms)
{
    uint64_t ns = (uint64_t)(ms * 1e6 + 0.5);
    return (rp_rmw_time_t){ns / 1000000000u, ns % 1000000000u};
}

struct sim_endpoint_options endpoint_options(const struct g_qos *q)
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

void *rmw_of(const rcl_handle_t *h) { return ((const struct sim_endpoint_impl *)h->impl)->rmw_handle; }

/*
 * What rcl_publisher_is_valid reads before each publish tracepoint: rcl_publish
 * calls it before rcl_publish fires, and rclcpp's intra-process publish asks
 * rcl_publisher_get_subscription_count (which calls it) before
 * rclcpp_intra_publish. So in a real process the handle's line and its
 * impl's are warm when the probe reads them (PERFORMANCE.md §14).
 */
void *publisher_valid(const rcl_handle_t *h)
{
    /* atomic loads: real loads even where the answer goes unused, as rcl's out-of-line check makes them */
    struct sim_endpoint_impl *impl = __atomic_load_n(&h->impl, __ATOMIC_RELAXED);
    return impl != NULL ? __atomic_load_n(&impl->rmw_handle, __ATOMIC_RELAXED) : NULL;
}

void create_publisher(int i, const char *topic, bool reinit)
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

void create_subscription(int i, const char *topic, bool reinit)
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

int add_timer(int node, double hz, int pub, int log_node, int client)
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

void publish_rosout(int node)
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
void churn(int n)
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

void create_node(int idx)
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
