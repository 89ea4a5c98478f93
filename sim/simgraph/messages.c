/* simgraph: messages published, delivered between and inside processes, and relayed (sim.h). */
#define _GNU_SOURCE
#include "sim.h"

/* ------------------------------------------------------------ message paths */

/* A process's environment variable as the graph sets it, or NULL. */
const char *proc_env(int proc, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < G.procs[proc].nenv; i++)
        if (strncmp(G.procs[proc].env[i], name, n) == 0 && G.procs[proc].env[i][n] == '=')
            return G.procs[proc].env[i] + n + 1;
    return NULL;
}

bool is_zenoh(int proc)
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
bool middleware_matches(const struct g_pub *gp, const struct g_sub *gs)
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

bool same_proc_intra(const struct g_pub *gp, const struct g_sub *gs)
{
    const struct g_node *pn = &G.nodes[gp->node], *sn = &G.nodes[gs->node];
    return pn->proc == sn->proc && pn->intra && sn->intra;
}

/* msgcost=US: the CPU a real middleware spends on each message event
 * (serialization, transport, the executor's wait), which the stand-in
 * otherwise lacks: real rclcpp on Cyclone DDS spends ~50 µs an event where
 * the stand-in spends ~7 (PERFORMANCE §18). Spun on this thread's CPU clock,
 * outside every tracepoint's span. */
void spin_thread_cpu(uint64_t want_ns, uint64_t until_mono_ns);

void spend_msgcost(void)
{
    double us = self_proc >= 0 ? G.procs[self_proc].msgcost_us : 0;
    if (us > 0)
        spin_thread_cpu((uint64_t)(us * 1e3), 0);
}

/* Publishes on publisher i a message whose chain began at origin (realtime ns; 0: this publish). */
void publish_from(int i, int64_t origin)
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
        rp_serialized_message_t serialized = {(uint8_t *)p->scratch, size, size};
        if (m.seq == 1) { /* invalid calls: rcl fails before its tracepoint, the DDS refuses the write */
            (void)rcl_publish_serialized_message(p->handle, NULL, NULL);
            rp_serialized_message_t refused = {serialized.buffer, size + 1, size};
            (void)rcl_publish_serialized_message(p->handle, &refused, NULL);
        }
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

void publish(int i) { publish_from(i, 0); }

/* A message reaching its subscription's user: its age since its chain's
 * first publish (relay=), in the graph's truth. */
void aged(int truth, const struct msg *m)
{
    if (truth < 0)
        return; /* truth off (or full): not even the clock read */
    int64_t age = (int64_t)now_ns(CLOCK_REALTIME) - m->origin_real_ns;
    truth_e2e(truth, age > 0 ? (uint64_t)age : 0);
}

/* An rclcpp callback of subscription s ran for a message sent at src: its node's timers sample
 * it, when the node keeps sampled truth (truth: the subscription's slot as its deliverer read it,
 * under the lock a re-creation takes). */
void seen(int s, int truth, int64_t src)
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
void sampled_truth(int node, int p)
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
void sampled_end(int node)
{
    for (int i = 0; i < nodes_rt[node].ninputs; i++)
        atomic_store(&subs_rt[nodes_rt[node].inputs[i]].first_src, 0);
}

/* Each sampling node's inputs (node option samples), once before its threads start: a timer's
 * publish visits only its own, and nodes without the option write no sampled truth (two
 * records a publish: under qemu-user the robot graph's many timers were slowed enough to
 * deliver late). */
void find_inputs(int proc)
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
void relay(int s, const struct msg *m)
{
    if (G.subs[s].relay > 0)
        publish_from(G.subs[s].relay - 1, m->origin_real_ns);
}

void spin_node(int s);

void deliver_socket(int s, const struct msg *m)
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
    if (gs->serialized) { /* rclcpp's GenericSubscription or rclpy's raw=True: rcl's serialized take (rmw_take inside from Jazzy on) */
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
        if (r->type != TYPE_OTHER || gs->serialized)
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
void spin_node(int s)
{
    for (int o = 0; o < G.nsubs; o++) {
        if (o == s || G.subs[o].node != G.subs[s].node || G.subs[o].spin)
            continue;
        struct msg m;
        while (recv(subs_rt[o].sock, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m)
            deliver_socket(o, &m);
    }
}

void deliver_intra(int s, const struct msg *m)
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
