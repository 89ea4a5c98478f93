/* simgraph: a graph process's executor, publisher and other threads, and its run (sim.h). */
#define _GNU_SOURCE
#include "sim.h"

/* ------------------------------------------------------------ threads */

struct executor_arg {
    int index, count;
};

void *executor_thread(void *argp)
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

void *publisher_thread(void *argp)
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

void *reuse_sub_thread(void *argp)
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

void *storm_thread(void *argp)
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
void *burn_thread(void *argp)
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
void spin_thread_cpu(uint64_t want_ns, uint64_t until_mono_ns)
{
    uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    while (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < want_ns && (until_mono_ns == 0 || now_ns(CLOCK_MONOTONIC) < until_mono_ns))
        ;
}

void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

int run_process(int proc, int64_t duration_ns)
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
