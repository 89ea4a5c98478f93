/* simgraph: timers fired, services served and clients calling, as rcl and rclcpp do (sim.h). */
#define _GNU_SOURCE
#include "sim.h"

void call(int c);
void respond(int v, rp_rmw_request_id_t *id, uint64_t taken_ns);

void fire_timer(int t)
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
void serve(int v)
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
void respond(int v, rp_rmw_request_id_t *id, uint64_t taken_ns)
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
uint64_t respond_due(int v, uint64_t now)
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
void call(int c)
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
void answered(int c)
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
