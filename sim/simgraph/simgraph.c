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
#include "sim.h"

/* ------------------------------------------------------------ state */

bool jazzy; /* the loaded libtracetools has the Iron+ function set */
void *rmw_publish_fn;
struct graph G;
int self_proc = -1;
char rundir[64]; /* short: socket paths must fit sockaddr_un */
const char *truth_arg; /* --truth DIR, else $SIMGRAPH_TRUTH: where truth.h files go */
uint64_t t0_ns, stop_ns;
struct node_rt nodes_rt[G_MAX_NODES];
struct pub_rt pubs_rt[G_MAX_PUBS];
struct sub_rt subs_rt[G_MAX_SUBS];
struct timer_rt timers_rt[G_MAX_TIMERS + G_MAX_PUBS + G_MAX_NODES + G_MAX_CLIENTS];
int ntimers_rt;
struct service_rt services_rt[G_MAX_SERVICES];
_Atomic int stop_flag; /* set by SIGINT/SIGTERM, read by every thread */
pthread_mutex_t reuse_mutex = PTHREAD_MUTEX_INITIALIZER; /* guards re-created subscriptions */
struct client_rt clients_rt[G_MAX_CLIENTS];
void *discovery_reader; /* the rmw's own graph reader: takes on a handle rcl never announces */
_Atomic unsigned long events;     /* publishes + deliveries, reported with --rusage */
_Thread_local unsigned long my_events; /* per thread: no shared cache line per message */


void flush_events(void) { atomic_fetch_add_explicit(&events, my_events, memory_order_relaxed), my_events = 0; }

uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool running(void) { return !stop_flag && (stop_ns == 0 || now_ns(CLOCK_MONOTONIC) < stop_ns); }

/* Sleeps until t, in slices of at most 100 ms so that a long sleep (a
 * stall, a crash scheduled later) still ends promptly on SIGINT/SIGTERM. */
void sleep_until(uint64_t t)
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

void *xalloc(size_t n)
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
void callback_register(const void *cb, const char *kind, const char *entity, const char *node)
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

void rmw_publish(const void *rmw_pub, const void *m)
{
    if (rmw_publish_fn == NULL)
        return;
    if (jazzy)
        ((rp_rmw_publish_jazzy_fn)rmw_publish_fn)(rmw_pub, m, (int64_t)now_ns(CLOCK_REALTIME));
    else
        ((rp_rmw_publish_humble_fn)rmw_publish_fn)(m);
}

void sock_path(struct sockaddr_un *a, const char *kind, int idx)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    snprintf(a->sun_path, sizeof a->sun_path, "%s/%s%d.sock", rundir, kind, idx);
}

int bind_socket(const char *kind, int idx)
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

void send_to(int sock, const char *kind, int idx, const struct msg *m)
{
    struct sockaddr_un a;
    sock_path(&a, kind, idx);
    /* Best effort, like a full DDS history: a missing or full reader loses the sample. */
    (void)sendto(sock, m, sizeof *m, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a);
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
