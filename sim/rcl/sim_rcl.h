/*
 * What simgraph and the stand-in librcl share about an rcl timer: real rcl
 * keeps these in rcl_timer_impl_t (timer.c), behind the rcl_timer_t's one
 * impl pointer. Times are CLOCK_MONOTONIC ns (a steady-clock wall timer).
 */
#ifndef SIM_RCL_H
#define SIM_RCL_H

#include <poll.h>
#include <stdint.h>

#include "ros2_pulse/tracetools_api.h"

struct sim_timer_impl {
    int64_t period_ns;
    _Atomic int64_t next_call_ns; /* the schedule: ready once now >= next_call_ns */
    int64_t last_call_ns;
};

/* A wait set: what the executor waits on (real rcl keeps rmw handles; the stand-in, file descriptors). */
struct sim_wait_set {
    struct pollfd *fds;
    int nfds;
};

#define SIM_RCL_RET_TIMEOUT 2 /* RCL_RET_TIMEOUT */
#define SIM_RCL_RET_ALREADY_INIT 100 /* RCL_RET_ALREADY_INIT */

/*
 * rcl_publisher_options_t / rcl_subscription_options_t begin with the QoS the
 * caller asks for (rcl/publisher.h); the rest (allocator, rmw options) the
 * stand-in does not read.
 */
struct sim_endpoint_options {
    rp_rmw_qos_profile_t qos;
};

/*
 * What the stand-in librcl keeps behind an rcl publisher's or subscription's
 * impl pointer: the rmw handle first (the publish functions read it there, as
 * real rcl keeps it inside impl), then the actual QoS the "rmw" resolved.
 */
struct sim_endpoint_impl {
    void *rmw_handle;
    rp_rmw_qos_profile_t actual_qos;
};

/* The rmw handle: rmw_publisher_t and rmw_subscription_t start with the implementation identifier. */
struct sim_rmw_endpoint {
    const char *implementation_identifier;
    void *data;
    const char *topic_name;
};

/* A service request or response on the wire: the request id as rmw keeps it. */
struct sim_call_msg {
    rp_rmw_request_id_t id; /* the client's GUID and the call's sequence number */
    int64_t src_real_ns;    /* CLOCK_REALTIME when it was sent */
};

/*
 * What the stand-in librcl keeps behind an rcl_service_t's or rcl_client_t's
 * impl pointer (real rcl keeps its rmw handle there): a bound, non-blocking
 * datagram socket where its requests (service) or responses (client)
 * arrive, and where it sends its own.
 */
struct sim_call_impl {
    void *rmw_handle;
    int sock;
    _Atomic int64_t seq;  /* client: the last sequence number it sent (rmw numbers from 1) */
    uint8_t gid[16];      /* client: its writer GUID; bytes 0-3 hold its socket's index */
    char peer_path[108];  /* client: the service's socket; service: the directory of the clients' "c<index>.sock" */
    uint64_t hold_ns;     /* client: rcl_send_request returns this long after its write (a sender preempted there) */
    /* service, rmw_fastrtps: the clients (bit = socket index < 64) one of whose requests was taken after they had
     * gone; the stand-in librcl keeps it, as rmw_fastrtps keeps the client's reader in its map (see rcl.c) */
    _Atomic uint64_t taken_after_gone;
};

/* rmw_fastrtps waits this long for a client's response reader before it gives up (the response writer's
 * reliability max_blocking_time, Fast DDS's default 100 ms) */
#define SIM_RESPONSE_MAX_BLOCKING_NS 100000000u

#endif
