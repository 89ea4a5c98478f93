/* simgraph's graph description: parsed from a .graph file (syntax in sim/graphs/demo.graph). */
#ifndef SIMGRAPH_GRAPH_H
#define SIMGRAPH_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#define G_MAX_PROCS 64
#define G_MAX_NODES 512
#define G_MAX_PUBS 2048
#define G_MAX_SUBS 2048
#define G_MAX_TIMERS 512
#define G_MAX_SERVICES 256
#define G_MAX_CLIENTS 256
#define G_NAME 128
#define G_MAX_ENV 8

/*
 * What a publisher or subscription asks of the middleware (rmw_qos_profile_t
 * values: 0 is the system default) and its message type.
 */
struct g_qos {
    int reliability;    /* 1 reliable, 2 best effort */
    int durability;     /* 1 transient local, 2 volatile */
    int liveliness;     /* 1 automatic, 3 manual by topic */
    double deadline_ms; /* 0: none */
    double lease_ms;    /* 0: none */
    int depth;          /* history depth (keep last) */
    char type[G_NAME];  /* "pkg/msg/Type" */
};

struct g_proc {
    char name[G_NAME];
    int threads;
    double fork_at; /* <0: no fork */
    int fork_pub;   /* publisher the forked child drives */
    int exit_storm; /* threads publishing flat out at exit; 0: none */
    double kill_at;  /* kill=AT_S: the process dies by SIGKILL (a crash); <0: never */
    double exit_at;  /* exit=AT_S: the process returns normally at AT_S (a client that leaves); <0: at the end */
    double burn;     /* burn=FRACTION: a thread keeps this share of one core busy (a known CPU cost) */
    double msgcost_us; /* msgcost=US: thread CPU each publish and delivery spends, as a real middleware's would */
    int nenv;        /* env=NAME=VALUE: set in the process before it starts (domain, rmw, discovery) */
    char env[G_MAX_ENV][G_NAME];
    char argv[G_NAME]; /* argv=W1,W2,...: the command line it shows, as a real ROS process's (e.g. ros2 launch) */
};

struct g_node {
    int proc;
    char ns[G_NAME];
    char name[G_NAME];
    bool py;
    bool intra;
    bool loop;     /* loop: one timer publishes all of its publishers of one rate, as a node's main loop does */
    bool samples;  /* samples: its timers' publishes keep their sampled-link truth (two records each) */
    double log_hz;
    int churn_timers;              /* churn timers N: rclpy's spin_once(timeout) makes and frees an rcl timer N times */
    int churn_pubs, churn_msgs;    /* churn pubs TOPIC N MSGS: N publishers made, used for MSGS messages, freed */
    char churn_topic[G_NAME];
};

enum { PUB_TYPED = 0, PUB_LOANED, PUB_SERIALIZED };

struct g_pub {
    int node;
    char topic[G_NAME];
    char reuse_topic[G_NAME]; /* reuse_pub: topic after the re-creation */
    double hz;
    double reuse_at; /* <0: no reuse */
    double stall_at, stall_for; /* stall=AT:FOR: the publisher goes silent (stall_for 0: never) */
    double sag_at, sag_hz;      /* sag=AT:HZ: from AT on the publisher runs at HZ (sag_hz 0: never) */
    bool thread;     /* dedicated publishing thread instead of an executor timer */
    int threads;     /* threads=N: N such threads publish on it, each at HZ on the same schedule (0: one) */
    bool forked;     /* published only by the fork child */
    bool builtin;    /* /parameter_events: published at startup only */
    bool manual;     /* an action's feedback or status: published by its server's goal handling, never on a timer */
    int api;         /* PUB_TYPED, or publish(LoanedMessage) / publish(SerializedMessage) through rcl */
    size_t size;
    int burst;       /* burst=N: each tick publishes N messages back to back (a burst publisher) */
    struct g_qos qos;
};

struct g_sub {
    int node;
    char topic[G_NAME];
    char reuse_topic[G_NAME];
    double reuse_at;
    double cost_ms;  /* cost=MS: each callback takes MS ms; the socket queue (KEEP_LAST-like) drops the excess */
    double delay_ms; /* delay=MS: messages arrive MS ms after their source timestamp (a known latency) */
    double drop;     /* drop=FRACTION: a best-effort reader that never receives that share of the samples */
    bool deaf;       /* deaf: never matched (a QoS, type, domain or name mismatch): receives nothing at all */
    int throw_every; /* throws=N: every N-th callback throws (no callback_end; the executor carries on) */
    bool reentrant;  /* reentrant: a reentrant callback group: every executor thread of the process takes its messages */
    bool spin;       /* spin: its callback spins its node's other subscriptions (nested callbacks) before returning */
    bool serialized; /* serialized: takes serialized messages (rclcpp's GenericSubscription, rosbag2; rclpy raw=True) through rcl_take_serialized_message */
    int relay;       /* relay=TOPIC: its callback publishes each message on to TOPIC (a chain's link): the
                        publisher's index + 1, a publisher no timer drives; 0: none */
    struct g_qos qos;
};

struct g_timer {
    int node;
    double hz;
    double stall_at, stall_for; /* stall=AT:FOR: the timer stops firing (a wedged control loop) */
    double cost_ms;             /* cost=MS[:EVERY]: every EVERY-th callback takes MS ms (an overrun when longer than the period) */
    int cost_every;
};

struct g_service {
    int node;
    char name[G_NAME];
    double cost_ms; /* cost=MS: each request takes MS ms to handle */
    int drop_every; /* drop=N: every N-th request is taken and never answered */
    double defer_ms; /* an action's get_result: answered MS ms after it was taken (a deferred response) */
    int status_pub, feedback_pub; /* an action's send_goal and get_result publish its status (and feedback); -1 none */
};

struct g_client {
    int node;
    int service; /* index into services, resolved after parsing; -1: no node serves it */
    char name[G_NAME];
    double hz;
    double timeout_ms; /* timeout=MS: the graph counts the answers that came later (its own timeout) */
    double hold_ms;    /* hold=MS: rcl_send_request returns MS after its write, as a preempted sender would */
    int then;          /* an action client's send_goal: the client called once its answer comes (get_result); -1 none */
};

struct graph {
    int nprocs, nnodes, npubs, nsubs, ntimers, nservices, nclients;
    struct g_proc procs[G_MAX_PROCS];
    struct g_node nodes[G_MAX_NODES];
    struct g_pub pubs[G_MAX_PUBS];
    struct g_sub subs[G_MAX_SUBS];
    struct g_timer timers[G_MAX_TIMERS];
    struct g_service services[G_MAX_SERVICES];
    struct g_client clients[G_MAX_CLIENTS];
};

/* Parses text into g. On error writes "line N: reason" into err and returns false. */
bool graph_parse(const char *text, struct graph *g, char *err, size_t errlen);

/* Text of a built-in graph ("demo", "stress"), or NULL. */
const char *graph_builtin(const char *name);

#endif
