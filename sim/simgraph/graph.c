/* Parser of simgraph's graph descriptions. */
#define _GNU_SOURCE
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 16

static bool parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static bool valid_name(const char *s)
{
    if (s[0] != '/' || strlen(s) >= G_NAME)
        return false;
    for (const char *p = s + 1; *p; p++)
        if (!(*p == '/' || *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

static void default_qos(struct g_qos *q, const char *type)
{
    memset(q, 0, sizeof *q);
    q->depth = 10;
    snprintf(q->type, sizeof q->type, "%s", type);
}

/* A "pkg/msg/Type" name: three parts of letters, digits and underscores. */
static bool valid_type(const char *s)
{
    int slashes = 0;
    if (strlen(s) >= G_NAME || *s == '/' || *s == '\0')
        return false;
    for (const char *p = s; *p; p++) {
        if (*p == '/') {
            if (p[1] == '/' || p[1] == '\0')
                return false;
            slashes++;
        } else if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) {
            return false;
        }
    }
    return slashes == 2;
}

/* One QoS or type option of a pub or sub; false when tok is not one. */
static bool qos_option(const char *tok, struct g_qos *q, bool *bad)
{
    double v = 0;
    *bad = false;
    if (strncmp(tok, "qos=", 4) == 0) {
        q->reliability = strcmp(tok + 4, "reliable") == 0 ? 1 : strcmp(tok + 4, "best_effort") == 0 ? 2 : -1;
    } else if (strncmp(tok, "durability=", 11) == 0) {
        q->durability = strcmp(tok + 11, "transient_local") == 0 ? 1 : strcmp(tok + 11, "volatile") == 0 ? 2 : -1;
    } else if (strncmp(tok, "liveliness=", 11) == 0) {
        q->liveliness = strcmp(tok + 11, "automatic") == 0 ? 1 : strcmp(tok + 11, "manual_by_topic") == 0 ? 3 : -1;
    } else if (strncmp(tok, "deadline=", 9) == 0) {
        *bad = !parse_num(tok + 9, 0.001, 1e7, &q->deadline_ms);
    } else if (strncmp(tok, "lease=", 6) == 0) {
        *bad = !parse_num(tok + 6, 0.001, 1e7, &q->lease_ms);
    } else if (strncmp(tok, "depth=", 6) == 0) {
        *bad = !parse_num(tok + 6, 1, 100000, &v);
        q->depth = (int)v;
    } else if (strncmp(tok, "type=", 5) == 0) {
        *bad = !valid_type(tok + 5);
        if (!*bad)
            snprintf(q->type, sizeof q->type, "%s", tok + 5);
    } else {
        return false;
    }
    *bad = *bad || q->reliability < 0 || q->durability < 0 || q->liveliness < 0;
    return true;
}

#define QOS_USAGE "qos=reliable|best_effort durability=volatile|transient_local liveliness=automatic|manual_by_topic " \
                  "deadline=MS lease=MS depth=N type=pkg/msg/Type"

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        int _n = snprintf(err, errlen, "line %d: ", lineno);                                       \
        snprintf(err + _n, errlen - (size_t)_n, __VA_ARGS__);                                      \
        free(copy);                                                                                \
        return false;                                                                              \
    } while (0)

/* The next publisher of g, node's on topic with a message type and nothing
 * else set (the caller has checked there is room). */
static struct g_pub *new_pub(struct graph *g, int node, const char *topic, const char *type)
{
    struct g_pub *p = &g->pubs[g->npubs++];
    memset(p, 0, sizeof *p);
    p->node = node;
    p->reuse_at = -1;
    default_qos(&p->qos, type);
    snprintf(p->topic, sizeof p->topic, "%s", topic);
    return p;
}

static int add_param_events(struct graph *g, int node)
{
    if (g->npubs >= G_MAX_PUBS)
        return -1;
    struct g_pub *p = new_pub(g, node, "/parameter_events", "rcl_interfaces/msg/ParameterEvent");
    p->builtin = true;
    p->qos.depth = 1000; /* rclcpp's and rclpy's parameter events QoS */
    if (!g->nodes[node].py) { /* rclcpp's TimeSource subscribes; rclpy does not */
        if (g->nsubs >= G_MAX_SUBS)
            return -1;
        struct g_sub *s = &g->subs[g->nsubs++];
        memset(s, 0, sizeof *s);
        s->node = node;
        s->reuse_at = -1;
        snprintf(s->topic, sizeof s->topic, "/parameter_events");
        default_qos(&s->qos, "rcl_interfaces/msg/ParameterEvent");
        s->qos.depth = 1000;
    }
    return 0;
}

bool graph_parse(const char *text, struct graph *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    char *copy = strdup(text);
    int lineno = 0;
    char *save = NULL;
    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    for (char *line = copy; line != NULL; line = save) {
        save = strchr(line, '\n');
        if (save != NULL)
            *save++ = '\0';
        lineno++;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char *tok[MAX_TOKENS];
        int nt = 0;
        for (char *t = strtok(line, " \t\r"); t != NULL; t = strtok(NULL, " \t\r")) {
            if (nt == MAX_TOKENS)
                FAIL("too many words");
            tok[nt++] = t;
        }
        if (nt == 0)
            continue;
        const char *kw = tok[0];
        int node = g->nnodes - 1;
        double v, v2;

        if (strcmp(kw, "process") == 0) {
            if (nt < 2 || g->nprocs >= G_MAX_PROCS)
                FAIL("process needs a name (at most %d processes)", G_MAX_PROCS);
            struct g_proc *p = &g->procs[g->nprocs++];
            snprintf(p->name, sizeof p->name, "%s", tok[1]);
            p->threads = 1;
            p->fork_at = -1;
            p->fork_pub = -1;
            p->kill_at = -1;
            p->exit_at = -1;
            for (int i = 2; i < nt; i++) {
                if (strncmp(tok[i], "threads=", 8) == 0 && parse_num(tok[i] + 8, 1, 64, &v))
                    p->threads = (int)v;
                else if (strncmp(tok[i], "kill=", 5) == 0 && parse_num(tok[i] + 5, 0, 1e6, &v))
                    p->kill_at = v;
                else if (strncmp(tok[i], "exit=", 5) == 0 && parse_num(tok[i] + 5, 0, 1e6, &v))
                    p->exit_at = v;
                else if (strncmp(tok[i], "burn=", 5) == 0 && parse_num(tok[i] + 5, 0.001, 1, &v))
                    p->burn = v;
                else if (strncmp(tok[i], "msgcost=", 8) == 0 && parse_num(tok[i] + 8, 0, 100000, &v))
                    p->msgcost_us = v;
                else if (strncmp(tok[i], "env=", 4) == 0 && strchr(tok[i] + 5, '=') != NULL && p->nenv < G_MAX_ENV &&
                         strlen(tok[i] + 4) < G_NAME)
                    snprintf(p->env[p->nenv++], G_NAME, "%s", tok[i] + 4);
                else if (strncmp(tok[i], "argv=", 5) == 0 && tok[i][5] != '\0' && strlen(tok[i] + 5) < G_NAME)
                    snprintf(p->argv, G_NAME, "%s", tok[i] + 5);
                else
                    FAIL("unknown process option '%s'", tok[i]);
            }
            continue;
        }
        if (g->nprocs == 0)
            FAIL("'%s' before any 'process'", kw);
        struct g_proc *proc = &g->procs[g->nprocs - 1];

        if (strcmp(kw, "node") == 0) {
            if (nt < 2 || !valid_name(tok[1]) || g->nnodes >= G_MAX_NODES)
                FAIL("node needs a fully qualified name like /ns/name");
            struct g_node *n = &g->nodes[g->nnodes++];
            n->proc = g->nprocs - 1;
            char *slash = strrchr(tok[1], '/');
            snprintf(n->name, sizeof n->name, "%s", slash + 1);
            if (slash == tok[1])
                snprintf(n->ns, sizeof n->ns, "/");
            else
                snprintf(n->ns, sizeof n->ns, "%.*s", (int)(slash - tok[1]), tok[1]);
            for (int i = 2; i < nt; i++) {
                if (strcmp(tok[i], "intra") == 0)
                    n->intra = true;
                else if (strcmp(tok[i], "lang=py") == 0)
                    n->py = true;
                else if (strcmp(tok[i], "loop") == 0)
                    n->loop = true;
                else if (strcmp(tok[i], "samples") == 0)
                    n->samples = true;
                else if (strcmp(tok[i], "lang=cpp") != 0)
                    FAIL("unknown node option '%s'", tok[i]);
            }
            if (n->py && n->intra)
                FAIL("rclpy has no intra-process communication");
            if (add_param_events(g, g->nnodes - 1) != 0)
                FAIL("too many endpoints");
            continue;
        }
        if (node < 0 || g->nodes[node].proc != g->nprocs - 1)
            FAIL("'%s' needs a node in this process", kw);

        if (strcmp(kw, "pub") == 0 || strcmp(kw, "reuse_pub") == 0) {
            bool reuse = kw[0] == 'r';
            int need = reuse ? 5 : 3;
            if (nt < need || g->npubs >= G_MAX_PUBS || !valid_name(tok[1]) ||
                (reuse && !valid_name(tok[2])))
                FAIL("usage: pub TOPIC HZ [thread] [threads=N] [size=BYTES] | reuse_pub OLD NEW HZ AT_S");
            struct g_pub *p = new_pub(g, node, tok[1], "sim_msgs/msg/Sample");
            if (strcmp(tok[reuse ? 3 : 2], "max") == 0) {
                p->hz = 0; /* flat out: a dedicated thread publishes without sleeping */
                p->thread = true;
            } else if (!parse_num(tok[reuse ? 3 : 2], 0.01, 100000, &p->hz)) {
                FAIL("bad rate '%s' (Hz, or 'max')", tok[reuse ? 3 : 2]);
            }
            if (reuse) {
                snprintf(p->reuse_topic, sizeof p->reuse_topic, "%s", tok[2]);
                if (!parse_num(tok[4], 0.001, 1e6, &p->reuse_at))
                    FAIL("bad time '%s'", tok[4]);
                p->thread = true;
            }
            for (int i = need; i < nt; i++) {
                bool bad;
                if (qos_option(tok[i], &p->qos, &bad)) {
                    if (bad)
                        FAIL("bad QoS option '%s' (" QOS_USAGE ")", tok[i]);
                } else if (strcmp(tok[i], "thread") == 0)
                    p->thread = true;
                else if (strcmp(tok[i], "loaned") == 0 || strcmp(tok[i], "serialized") == 0) {
                    if (g->nodes[node].intra)
                        FAIL("loaned and serialized publishers are modelled without intra-process");
                    p->api = tok[i][0] == 'l' ? PUB_LOANED : PUB_SERIALIZED;
                }
                else if (strncmp(tok[i], "size=", 5) == 0 && parse_num(tok[i] + 5, 0, 16e6, &v))
                    p->size = (size_t)v;
                else if (strncmp(tok[i], "threads=", 8) == 0 && parse_num(tok[i] + 8, 1, 16, &v)) {
                    p->threads = (int)v; /* callbacks of a reentrant group publishing on one publisher */
                    p->thread = true;
                }
                else if (strncmp(tok[i], "burst=", 6) == 0 && parse_num(tok[i] + 6, 1, 1000, &v)) {
                    p->burst = (int)v;
                    p->thread = true;
                }
                else if (strncmp(tok[i], "stall=", 6) == 0 && strchr(tok[i], ':') != NULL) {
                    char *colon = strchr(tok[i], ':');
                    *colon = '\0';
                    if (!parse_num(tok[i] + 6, 0, 1e6, &p->stall_at) || !parse_num(colon + 1, 0.001, 1e6, &p->stall_for))
                        FAIL("usage: stall=AT_S:FOR_S");
                    p->thread = true;
                } else if (strncmp(tok[i], "sag=", 4) == 0 && strchr(tok[i], ':') != NULL) {
                    char *colon = strchr(tok[i], ':');
                    *colon = '\0';
                    if (!parse_num(tok[i] + 4, 0, 1e6, &p->sag_at) || !parse_num(colon + 1, 0.01, 100000, &p->sag_hz))
                        FAIL("usage: sag=AT_S:HZ");
                    p->thread = true;
                } else
                    FAIL("unknown pub option '%s'", tok[i]);
            }
        } else if (strcmp(kw, "sub") == 0 || strcmp(kw, "reuse_sub") == 0) {
            bool reuse = kw[0] == 'r';
            if ((reuse ? nt != 4 : nt < 2) || g->nsubs >= G_MAX_SUBS || !valid_name(tok[1]) ||
                (reuse && !valid_name(tok[2])))
                FAIL("usage: sub TOPIC [cost=MS] [delay=MS] [drop=FRACTION] [deaf] [throws=N] [reentrant] [spin] [serialized] [relay=TOPIC] | reuse_sub OLD NEW AT_S");
            struct g_sub *s = &g->subs[g->nsubs++];
            memset(s, 0, sizeof *s);
            s->node = node;
            s->reuse_at = -1;
            default_qos(&s->qos, "sim_msgs/msg/Sample");
            snprintf(s->topic, sizeof s->topic, "%s", tok[1]);
            for (int i = 2; !reuse && i < nt; i++) {
                bool bad;
                if (qos_option(tok[i], &s->qos, &bad)) {
                    if (bad)
                        FAIL("bad QoS option '%s' (" QOS_USAGE ")", tok[i]);
                    continue;
                }
                if (strncmp(tok[i], "cost=", 5) == 0 && parse_num(tok[i] + 5, 0.001, 10000, &s->cost_ms))
                    continue;
                if (strncmp(tok[i], "delay=", 6) == 0 && parse_num(tok[i] + 6, 0.001, 100000, &s->delay_ms))
                    continue;
                if (strncmp(tok[i], "drop=", 5) == 0 && parse_num(tok[i] + 5, 0.0001, 0.9999, &s->drop))
                    continue;
                if (strcmp(tok[i], "deaf") == 0) {
                    s->deaf = true;
                    continue;
                }
                double every;
                if (strncmp(tok[i], "throws=", 7) == 0 && parse_num(tok[i] + 7, 1, 1e6, &every)) {
                    s->throw_every = (int)every;
                    continue;
                }
                if (strcmp(tok[i], "reentrant") == 0 || strcmp(tok[i], "spin") == 0) {
                    *(tok[i][0] == 'r' ? &s->reentrant : &s->spin) = true;
                    continue;
                }
                if (strcmp(tok[i], "serialized") == 0) {
                    if (g->nodes[node].intra)
                        FAIL("serialized subscriptions are modelled without intra-process");
                    s->serialized = true;
                    continue;
                }
                if (strncmp(tok[i], "relay=", 6) == 0 && valid_name(tok[i] + 6)) {
                    for (int k = 0; k < g->npubs; k++)
                        if (g->pubs[k].node == node && strcmp(g->pubs[k].topic, tok[i] + 6) == 0)
                            FAIL("relay=%s: the node already publishes it", tok[i] + 6);
                    if (s->relay != 0 || g->npubs >= G_MAX_PUBS)
                        FAIL("relay=%s: one relay a subscription, and at most %d publishers", tok[i] + 6, G_MAX_PUBS);
                    /* published from the subscription's callback, never on a timer */
                    new_pub(g, node, tok[i] + 6, "sim_msgs/msg/Sample")->manual = true;
                    s->relay = g->npubs;
                    continue;
                }
                FAIL("bad sub option '%s' (cost=MS, delay=MS, drop=FRACTION, deaf, throws=N, reentrant, spin, serialized or relay=TOPIC)", tok[i]);
            }
            if (reuse) {
                snprintf(s->reuse_topic, sizeof s->reuse_topic, "%s", tok[2]);
                if (!parse_num(tok[3], 0.001, 1e6, &s->reuse_at))
                    FAIL("bad time '%s'", tok[3]);
            }
        } else if (strcmp(kw, "timer") == 0) {
            if (nt < 2 || g->ntimers >= G_MAX_TIMERS || !parse_num(tok[1], 0.01, 100000, &v))
                FAIL("usage: timer HZ [stall=AT_S:FOR_S] [cost=MS[:EVERY]]");
            struct g_timer *tm = &g->timers[g->ntimers++];
            *tm = (struct g_timer){node, v, 0, 0, 0, 1};
            for (int i = 2; i < nt; i++) {
                char *colon = strchr(tok[i], ':');
                if (strncmp(tok[i], "stall=", 6) == 0 && colon != NULL) {
                    *colon = '\0';
                    if (!parse_num(tok[i] + 6, 0, 1e6, &tm->stall_at) || !parse_num(colon + 1, 0.001, 1e6, &tm->stall_for))
                        FAIL("usage: timer HZ [stall=AT_S:FOR_S] [cost=MS[:EVERY]]");
                } else if (strncmp(tok[i], "cost=", 5) == 0) {
                    double every = 1;
                    if (colon != NULL)
                        *colon = '\0';
                    if (!parse_num(tok[i] + 5, 0.001, 100000, &tm->cost_ms) ||
                        (colon != NULL && !parse_num(colon + 1, 1, 1e6, &every)))
                        FAIL("usage: timer HZ [stall=AT_S:FOR_S] [cost=MS[:EVERY]]");
                    tm->cost_every = (int)every;
                } else {
                    FAIL("bad timer option '%s' (stall=AT_S:FOR_S or cost=MS[:EVERY])", tok[i]);
                }
            }
        } else if (strcmp(kw, "service") == 0) {
            if (nt < 2 || g->nservices >= G_MAX_SERVICES || !valid_name(tok[1]))
                FAIL("usage: service NAME [cost=MS] [drop=N]");
            struct g_service *s = &g->services[g->nservices++];
            memset(s, 0, sizeof *s);
            s->node = node;
            s->status_pub = s->feedback_pub = -1;
            snprintf(s->name, sizeof s->name, "%s", tok[1]);
            for (int i = 2; i < nt; i++) {
                double n;
                if (strncmp(tok[i], "cost=", 5) == 0 && parse_num(tok[i] + 5, 0.001, 100000, &s->cost_ms))
                    continue;
                if (strncmp(tok[i], "drop=", 5) == 0 && parse_num(tok[i] + 5, 2, 1e6, &n)) {
                    s->drop_every = (int)n;
                    continue;
                }
                FAIL("bad service option '%s' (cost=MS, drop=N)", tok[i]);
            }
        } else if (strcmp(kw, "client") == 0) {
            if (nt < 3 || g->nclients >= G_MAX_CLIENTS || !valid_name(tok[1]) ||
                !parse_num(tok[2], 0.01, 10000, &v))
                FAIL("usage: client NAME HZ [timeout=MS] [hold=MS]");
            struct g_client *c = &g->clients[g->nclients++];
            memset(c, 0, sizeof *c);
            c->node = node;
            c->hz = v;
            c->service = -1;
            c->then = -1;
            snprintf(c->name, sizeof c->name, "%s", tok[1]);
            for (int i = 3; i < nt; i++) {
                if (strncmp(tok[i], "timeout=", 8) == 0 && parse_num(tok[i] + 8, 0.001, 1e6, &c->timeout_ms))
                    continue;
                if (strncmp(tok[i], "hold=", 5) == 0 && parse_num(tok[i] + 5, 0.001, 1000, &c->hold_ms))
                    continue;
                FAIL("bad client option '%s' (timeout=MS, hold=MS)", tok[i]);
            }
        } else if (strcmp(kw, "action") == 0 || strcmp(kw, "action_client") == 0) {
            /*
             * An action as rcl_action makes it: three services (send_goal,
             * cancel_goal, get_result) and two topics (feedback, status) under
             * NAME/_action/. Its server accepts a goal in accept=MS and answers
             * get_result result=MS after taking it (deferred); its client sends
             * a goal HZ times a second and asks for the result once accepted.
             */
            bool server = strcmp(kw, "action") == 0;
            double accept = 0, result = 0;
            if (nt < 2 || !valid_name(tok[1]) || g->nservices + 3 > G_MAX_SERVICES || g->nclients + 3 > G_MAX_CLIENTS ||
                g->npubs + 2 > G_MAX_PUBS || g->nsubs + 2 > G_MAX_SUBS)
                FAIL("usage: action NAME [accept=MS] [result=MS] | action_client NAME HZ");
            if (!server && (nt != 3 || !parse_num(tok[2], 0.01, 1000, &v)))
                FAIL("usage: action_client NAME HZ");
            for (int i = 2; server && i < nt; i++) {
                if (strncmp(tok[i], "accept=", 7) == 0 && parse_num(tok[i] + 7, 0.001, 1e6, &accept))
                    continue;
                if (strncmp(tok[i], "result=", 7) == 0 && parse_num(tok[i] + 7, 0.001, 1e7, &result))
                    continue;
                FAIL("bad action option '%s' (accept=MS, result=MS)", tok[i]);
            }
            static const char *const parts[] = {"send_goal", "cancel_goal", "get_result"};
            static const char *const topics[] = {"feedback", "status"};
            int first_pub = g->npubs, first_client = g->nclients;
            for (int k = 0; server && k < 2; k++) {
                char topic[G_NAME];
                snprintf(topic, sizeof topic, "%s/_action/%s", tok[1], topics[k]);
                new_pub(g, node, topic, k == 0 ? "sim_msgs/action/Feedback" : "action_msgs/msg/GoalStatusArray")->manual = true;
            }
            for (int k = 0; !server && k < 2; k++) {
                struct g_sub *sb = &g->subs[g->nsubs++];
                memset(sb, 0, sizeof *sb);
                sb->node = node;
                sb->reuse_at = -1;
                default_qos(&sb->qos, k == 0 ? "sim_msgs/action/Feedback" : "action_msgs/msg/GoalStatusArray");
                snprintf(sb->topic, sizeof sb->topic, "%s/_action/%s", tok[1], topics[k]);
            }
            for (int k = 0; k < 3; k++) {
                if (server) {
                    struct g_service *sv = &g->services[g->nservices++];
                    memset(sv, 0, sizeof *sv);
                    sv->node = node;
                    snprintf(sv->name, sizeof sv->name, "%s/_action/%s", tok[1], parts[k]);
                    sv->status_pub = k == 1 ? -1 : first_pub + 1;
                    sv->feedback_pub = k == 0 ? first_pub : -1;
                    if (k == 0)
                        sv->cost_ms = accept;
                    if (k == 2)
                        sv->defer_ms = result;
                } else {
                    struct g_client *c = &g->clients[g->nclients++];
                    memset(c, 0, sizeof *c);
                    c->node = node;
                    c->service = -1;
                    c->then = k == 0 ? first_client + 2 : -1;
                    c->hz = k == 0 ? v : 0; /* only goals are sent on a timer */
                    snprintf(c->name, sizeof c->name, "%s/_action/%s", tok[1], parts[k]);
                }
            }
        } else if (strcmp(kw, "log") == 0) {
            if (nt != 2 || !parse_num(tok[1], 0.01, 1000, &v) || g->nodes[node].py)
                FAIL("usage: log HZ (C++ nodes)");
            g->nodes[node].log_hz = v;
        } else if (strcmp(kw, "fork") == 0) {
            if (nt != 4 || !valid_name(tok[1]) || g->npubs >= G_MAX_PUBS || proc->fork_at >= 0)
                FAIL("usage: fork TOPIC HZ AT_S (once per process)");
            struct g_pub *p = new_pub(g, node, tok[1], "sim_msgs/msg/Sample");
            p->forked = true;
            p->thread = true;
            if (!parse_num(tok[2], 0.01, 100000, &p->hz) || !parse_num(tok[3], 0, 1e6, &proc->fork_at))
                FAIL("bad fork rate or time");
            proc->fork_pub = g->npubs - 1;
        } else if (strcmp(kw, "churn") == 0) {
            /* entities made and destroyed before the node's own: handles cycle through two addresses, as malloc's */
            if (nt == 3 && strcmp(tok[1], "timers") == 0 && parse_num(tok[2], 1, 1e7, &v)) {
                g->nodes[node].churn_timers = (int)v;
            } else if (nt == 5 && strcmp(tok[1], "pubs") == 0 && valid_name(tok[2]) && parse_num(tok[3], 1, 1e6, &v) &&
                       parse_num(tok[4], 0, 1e6, &v2)) {
                g->nodes[node].churn_pubs = (int)v;
                g->nodes[node].churn_msgs = (int)v2;
                snprintf(g->nodes[node].churn_topic, sizeof g->nodes[node].churn_topic, "%s", tok[2]);
            } else {
                FAIL("usage: churn timers N | churn pubs TOPIC N MSGS");
            }
        } else if (strcmp(kw, "exit_storm") == 0) {
            if (nt != 2 || !parse_num(tok[1], 1, 64, &v))
                FAIL("usage: exit_storm THREADS");
            proc->exit_storm = (int)v;
        } else {
            FAIL("unknown directive '%s'", kw);
        }
    }
    free(copy);
    lineno = 0;
    /* a client of a service no node serves calls into the void: its calls are never answered */
    for (int i = 0; i < g->nclients; i++)
        for (int j = 0; j < g->nservices; j++)
            if (strcmp(g->clients[i].name, g->services[j].name) == 0)
                g->clients[i].service = j;
    if (g->nprocs == 0) {
        snprintf(err, errlen, "the graph declares no process");
        return false;
    }
    return true;
}
