/*
 * The probe's configuration (part of the core): ROS_PULSE_* read from the
 * environment once per process, each bad value said in one line and replaced
 * by its default; and the probe's one way to say something, rp_log.
 */
#define _GNU_SOURCE
#include "segment_writer.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rp_log(const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "[ros2_pulse] ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, buf, len); /* one write: lines from many processes don't interleave */
    (void)w;
}

/* Parses a whole-token unsigned decimal in [lo, hi]; returns false on junk. */
static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > hi)
            return false;
    }
    if (v < lo)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* An on/off variable: exactly "1" is on, like upstream; unset, "" and "0" are off; anything
 * else ("yes", "true") is off too, and said once, so a user who meant "on" learns why not. */
static bool flag_on(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0)
        return false;
    if (strcmp(v, "1") == 0)
        return true;
    rp_log("invalid %s '%.32s' (expected exactly 1 to switch it on, or 0), using off", name, v);
    return false;
}

/* An on-by-default variable: unset, "" and "1" are on, "0" is off; anything else is on, and said once. */
static bool flag_not_off(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0' || strcmp(v, "1") == 0)
        return true;
    if (strcmp(v, "0") == 0)
        return false;
    rp_log("invalid %s '%.32s' (expected 0 to switch it off, or 1), using on", name, v);
    return true;
}

/* A number in [lo, hi] (a power of two when pow2); unset and "" give dflt; anything else gives dflt, and is said once. */
static uint32_t env_u32(const char *name, uint32_t lo, uint32_t hi, uint32_t dflt, bool pow2)
{
    const char *v = getenv(name);
    uint32_t out = dflt;
    if (v == NULL || *v == '\0')
        return dflt;
    if (!parse_u32(v, lo, hi, &out) || (pow2 && (out & (out - 1)) != 0)) {
        rp_log("invalid %s '%.64s' (expected %s in [%u, %u]), using %u", name, v, pow2 ? "a power of two" : "an integer",
               lo, hi, dflt);
        return dflt;
    }
    return out;
}

void rp_config_load(struct rp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->quiet = flag_on("ROS_TOPIC_STATS_QUIET");
    cfg->gaps = flag_on("ROS_TOPIC_STATS_JITTER");
    cfg->latency = flag_on("ROS_TOPIC_STATS_LATENCY");
    cfg->timing = flag_not_off("ROS_PULSE_TIMING");
    cfg->links = flag_on("ROS_PULSE_LINKS");
    if (cfg->links && !cfg->timing) {
        rp_log("ROS_PULSE_LINKS=1 needs callback timing (ROS_PULSE_TIMING=0 is set), using off");
        cfg->links = false;
    }

    cfg->bytes = flag_on("ROS_PULSE_BYTES");
    cfg->bytes_every = env_u32("ROS_PULSE_BYTES_EVERY", 1, RP_MAX_BYTES_EVERY, RP_DEFAULT_BYTES_EVERY, true);
    cfg->endpoint_capacity = env_u32("ROS_PULSE_MAX_ENDPOINTS", 16, RP_MAX_ENDPOINTS_LIMIT, RP_DEFAULT_ENDPOINTS, false);
    cfg->node_capacity = cfg->endpoint_capacity / 4;

    const char *dir = getenv("ROS_PULSE_DIR");
    if (dir != NULL && *dir != '\0') {
        if (dir[0] != '/') {
            rp_log("ROS_PULSE_DIR '%.128s' is not an absolute path, using the default directory", dir);
        } else if (strlen(dir) >= sizeof cfg->dir - 32) {
            rp_log("ROS_PULSE_DIR is longer than %zu bytes, using the default directory",
                   sizeof cfg->dir - 32);
        } else {
            snprintf(cfg->dir, sizeof cfg->dir, "%s", dir);
            cfg->dir_explicit = true;
        }
    }
    if (!cfg->dir_explicit)
        snprintf(cfg->dir, sizeof cfg->dir, "%s/ros2_pulse-%u", RP_DEFAULT_BASE, (unsigned)getuid());
}
