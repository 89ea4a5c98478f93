/*
 * What simgraph and the stand-in librcl share about an rcl timer: real rcl
 * keeps these in rcl_timer_impl_t (timer.c), behind the rcl_timer_t's one
 * impl pointer. Times are CLOCK_MONOTONIC ns (a steady-clock wall timer).
 */
#ifndef SIM_RCL_H
#define SIM_RCL_H

#include <poll.h>
#include <stdint.h>

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

#endif
