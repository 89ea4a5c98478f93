/* The probe's one clock read, inlined where it is used (message gaps, call timing, creation times). */
#ifndef ROS2_PULSE_CLOCK_H
#define ROS2_PULSE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns (through the vDSO: no system call). */
static inline uint64_t rp_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
