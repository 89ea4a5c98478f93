/*
 * Creating and filling this process's segment. Everything here runs under
 * the probe's init mutex and never on the per-message path.
 */
#define _GNU_SOURCE
#include "segment_writer.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ALIGN64(x) (((x) + 63u) & ~(uint64_t)63u)

static uint64_t now_real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Makes sure cfg->dir exists and is safe to create files in. */
static bool prepare_dir(const struct rp_config *cfg)
{
    struct stat st;
    if (lstat(cfg->dir, &st) != 0) {
        if (errno != ENOENT) {
            rp_log("cannot use segment directory '%s' (%s); counting disabled", cfg->dir, strerror(errno));
            return false;
        }
        if (mkdir(cfg->dir, 0700) != 0 && errno != EEXIST) {
            rp_log("cannot create segment directory '%s' (%s); counting disabled", cfg->dir,
                   strerror(errno));
            return false;
        }
        if (lstat(cfg->dir, &st) != 0) {
            rp_log("cannot use segment directory '%s' (%s); counting disabled", cfg->dir, strerror(errno));
            return false;
        }
    }
    if (!cfg->dir_explicit) {
        /* The default lives in a world-writable place: refuse anything we did not make. */
        if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0022) != 0) {
            rp_log("refusing segment directory '%s' (not a directory owned by uid %u with mode 0700); "
                   "counting disabled",
                   cfg->dir, (unsigned)getuid());
            return false;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        /* An explicit directory may be a symlink the user chose; lstat saw the link itself. */
        if (!S_ISLNK(st.st_mode) || stat(cfg->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            rp_log("ROS_PULSE_DIR '%s' is not a directory; counting disabled", cfg->dir);
            return false;
        }
    }
    return true;
}

static void read_identity(struct rp_header *h)
{
    ssize_t n = readlink("/proc/self/exe", h->exe, RP_EXE_MAX - 1);
    h->exe[n > 0 ? n : 0] = '\0';

    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, h->cmdline, RP_CMDLINE_MAX - 1);
        h->cmdline_len = got > 0 ? (uint32_t)got : 0;
        h->cmdline[h->cmdline_len] = '\0';
        close(fd);
    }

    /* Field 22 of /proc/self/stat, counted after the ')' that ends the comm field. */
    char buf[1024];
    fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (got > 0) {
            buf[got] = '\0';
            char *p = strrchr(buf, ')');
            for (int field = 2; p != NULL && field < 22; field++)
                p = strchr(p + 1, ' ');
            if (p != NULL)
                h->proc_start_ticks = strtoull(p + 1, NULL, 10);
        }
    }
}

uint64_t rp_segment_size(const struct rp_config *cfg, uint32_t lanes)
{
    const uint32_t node_cap = cfg->node_capacity, ep_cap = cfg->endpoint_capacity;
    const bool gaps = cfg->gaps, latency = cfg->latency, timing = cfg->timing;
    uint64_t off = RP_HEADER_SIZE;
    off = ALIGN64(off + (uint64_t)node_cap * sizeof(struct rp_node));
    off = ALIGN64(off + (uint64_t)ep_cap * sizeof(struct rp_endpoint));
    off = ALIGN64(off + (uint64_t)lanes * ep_cap * RP_COUNTERS_PER_ENDPOINT * sizeof(uint64_t));
    if (gaps)
        off = ALIGN64(off + (uint64_t)ep_cap * sizeof(struct rp_gap));
    if (latency)
        off = ALIGN64(off + (uint64_t)ep_cap * sizeof(struct rp_gap));
    if (timing) {
        off = ALIGN64(off + (uint64_t)ep_cap * sizeof(struct rp_timing));
        off = ALIGN64(off + (uint64_t)(lanes - 1) * sizeof(struct rp_thread));
    }
    off = ALIGN64(off + (uint64_t)ep_cap * sizeof(struct rp_qos));
    if (timing)
        off = ALIGN64(off + (uint64_t)ep_cap * sizeof(struct rp_calls));
    if (cfg->links)
        off = ALIGN64(off + (uint64_t)RP_LINK_CAPACITY(ep_cap) * sizeof(struct rp_link));
    if (cfg->bytes)
        off = ALIGN64(off + (uint64_t)ep_cap * sizeof(struct rp_bytes));
    return off;
}

/* Copies an environment variable into field (NUL-terminated) and sets bit when it is set. */
static void env_value(struct rp_env *env, const char *name, char *field, size_t size, uint32_t bit)
{
    const char *v = getenv(name);
    if (v == NULL)
        return;
    env->flags |= bit;
    size_t n = strnlen(v, size);
    if (n >= size) {
        n = size - 1;
        env->flags |= RP_ENV_TRUNCATED;
    }
    memcpy(field, v, n);
    field[n] = '\0';
}

static void read_env(struct rp_env *env)
{
    env_value(env, "ROS_DOMAIN_ID", env->domain_id, sizeof env->domain_id, RP_ENV_DOMAIN_ID);
    env_value(env, "RMW_IMPLEMENTATION", env->rmw_implementation, sizeof env->rmw_implementation, RP_ENV_RMW);
    env_value(env, "ROS_LOCALHOST_ONLY", env->localhost_only, sizeof env->localhost_only, RP_ENV_LOCALHOST_ONLY);
    env_value(env, "ROS_AUTOMATIC_DISCOVERY_RANGE", env->discovery_range, sizeof env->discovery_range,
              RP_ENV_DISCOVERY_RANGE);
    env_value(env, "ROS_STATIC_PEERS", env->static_peers, sizeof env->static_peers, RP_ENV_STATIC_PEERS);
    if (getenv("CYCLONEDDS_URI") != NULL)
        env->flags |= RP_ENV_CYCLONEDDS_URI;
    if (getenv("FASTRTPS_DEFAULT_PROFILES_FILE") != NULL || getenv("FASTDDS_DEFAULT_PROFILES_FILE") != NULL)
        env->flags |= RP_ENV_FASTDDS_PROFILE;
    if (getenv("ZENOH_SESSION_CONFIG_URI") != NULL || getenv("ZENOH_ROUTER_CONFIG_URI") != NULL)
        env->flags |= RP_ENV_ZENOH_CONFIG;
}

bool rp_segment_create(struct rp_segment *seg, const struct rp_config *cfg, uint32_t distro)
{
    memset(seg, 0, sizeof *seg);
    seg->fd = -1;
    if (!prepare_dir(cfg))
        return false;

    const uint32_t lanes = RP_LANES;
    const uint64_t size = rp_segment_size(cfg, lanes);
    const int pid = (int)getpid();

    int fd = -1;
    for (unsigned attempt = 0; attempt < 8 && fd < 0; attempt++) {
        snprintf(seg->path, sizeof seg->path, "%s/%d.%u.pulse", cfg->dir, pid, attempt);
        fd = open(seg->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) {
            rp_log("cannot create segment '%s' (%s); counting disabled", seg->path, strerror(errno));
            return false;
        }
        if (fd < 0)
            rp_log("segment path '%s' already exists, not touching it", seg->path);
    }
    if (fd < 0) {
        rp_log("no free segment name for pid %d in '%s'; counting disabled", pid, cfg->dir);
        return false;
    }

    /* Reserve every page now: a full tmpfs must fail here, not SIGBUS the host later. */
    int err = posix_fallocate(fd, 0, (off_t)size);
    if (err != 0) {
        rp_log("cannot reserve %llu bytes for segment '%s' (%s); counting disabled",
               (unsigned long long)size, seg->path, strerror(err));
        unlink(seg->path);
        close(fd);
        return false;
    }
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
        rp_log("cannot map segment '%s' (%s); counting disabled", seg->path, strerror(errno));
        unlink(seg->path);
        close(fd);
        return false;
    }

    struct rp_header *h = mem;
    h->abi_major = RP_ABI_MAJOR;
    h->abi_minor = RP_ABI_MINOR;
    h->header_size = RP_HEADER_SIZE;
    h->total_size = size;
    h->pid = pid;
    h->ppid = (int32_t)getppid();
    h->distro = distro;
    h->start_mono_ns = rp_mono_ns();
    h->start_real_ns = now_real_ns();
    h->lane_count = lanes;
    h->node_capacity = cfg->node_capacity;
    h->endpoint_capacity = cfg->endpoint_capacity;
    read_identity(h);
    read_env(&h->env);

    uint64_t off = RP_HEADER_SIZE;
    struct rp_section *s = h->sections;
    s[0] = (struct rp_section){RP_SECTION_NODES, cfg->node_capacity, off, sizeof(struct rp_node)};
    off = ALIGN64(off + (uint64_t)cfg->node_capacity * sizeof(struct rp_node));
    s[1] = (struct rp_section){RP_SECTION_ENDPOINTS, cfg->endpoint_capacity, off, sizeof(struct rp_endpoint)};
    off = ALIGN64(off + (uint64_t)cfg->endpoint_capacity * sizeof(struct rp_endpoint));
    s[2] = (struct rp_section){RP_SECTION_LANES, lanes, off,
                               (uint64_t)cfg->endpoint_capacity * RP_COUNTERS_PER_ENDPOINT * sizeof(uint64_t)};
    h->section_count = 3;
    off = ALIGN64(off + (uint64_t)lanes * cfg->endpoint_capacity * RP_COUNTERS_PER_ENDPOINT * sizeof(uint64_t));
    if (cfg->gaps) {
        s[h->section_count++] = (struct rp_section){RP_SECTION_GAPS, cfg->endpoint_capacity, off, sizeof(struct rp_gap)};
        seg->gaps = (struct rp_gap *)((char *)mem + off);
        off = ALIGN64(off + (uint64_t)cfg->endpoint_capacity * sizeof(struct rp_gap));
    }
    if (cfg->latency) {
        s[h->section_count++] = (struct rp_section){RP_SECTION_LATENCY, cfg->endpoint_capacity, off, sizeof(struct rp_gap)};
        seg->latency = (struct rp_gap *)((char *)mem + off);
        off = ALIGN64(off + (uint64_t)cfg->endpoint_capacity * sizeof(struct rp_gap));
    }
    if (cfg->timing) {
        s[h->section_count++] = (struct rp_section){RP_SECTION_TIMING, cfg->endpoint_capacity, off, sizeof(struct rp_timing)};
        seg->timing = (struct rp_timing *)((char *)mem + off);
        off = ALIGN64(off + (uint64_t)cfg->endpoint_capacity * sizeof(struct rp_timing));
        s[h->section_count++] = (struct rp_section){RP_SECTION_THREADS, lanes - 1, off, sizeof(struct rp_thread)};
        seg->threads = (struct rp_thread *)((char *)mem + off);
        for (uint32_t i = 0; i < lanes - 1; i++)
            seg->threads[i].endpoint_index = RP_NO_NODE;
        off = ALIGN64(off + (uint64_t)(lanes - 1) * sizeof(struct rp_thread));
    }
    s[h->section_count++] = (struct rp_section){RP_SECTION_QOS, cfg->endpoint_capacity, off, sizeof(struct rp_qos)};
    seg->qos = (struct rp_qos *)((char *)mem + off);
    off = ALIGN64(off + (uint64_t)cfg->endpoint_capacity * sizeof(struct rp_qos));
    if (cfg->timing) {
        /* Beyond sections[]'s eight places go the ABI 1.6 extension's (older readers do not look there). */
        struct rp_section calls = {RP_SECTION_CALLS, cfg->endpoint_capacity, off, sizeof(struct rp_calls)};
        if (h->section_count < RP_MAX_SECTIONS)
            s[h->section_count++] = calls;
        else
            h->ext_sections[h->ext_section_count++] = calls;
        seg->calls = (struct rp_calls *)((char *)mem + off);
        off = ALIGN64(off + (uint64_t)cfg->endpoint_capacity * sizeof(struct rp_calls));
    }
    if (cfg->links) { /* after calls: always in the extension's places */
        seg->link_capacity = RP_LINK_CAPACITY(cfg->endpoint_capacity);
        h->ext_sections[h->ext_section_count++] =
            (struct rp_section){RP_SECTION_LINKS, seg->link_capacity, off, sizeof(struct rp_link)};
        seg->links = (struct rp_link *)((char *)mem + off);
        off = ALIGN64(off + (uint64_t)seg->link_capacity * sizeof(struct rp_link));
    }
    if (cfg->bytes) {
        h->ext_sections[h->ext_section_count++] =
            (struct rp_section){RP_SECTION_BYTES, cfg->endpoint_capacity, off, sizeof(struct rp_bytes)};
        seg->bytes = (struct rp_bytes *)((char *)mem + off);
    }

    seg->header = h;
    seg->nodes = (struct rp_node *)((char *)mem + s[0].offset);
    seg->endpoints = (struct rp_endpoint *)((char *)mem + s[1].offset);
    seg->lanes = (_Atomic uint64_t *)((char *)mem + s[2].offset);
    seg->size = size;
    seg->fd = fd;

    /* Liveness: a write lock held for the life of this process image. Readers ask with F_GETLK. */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_SETLK, &fl) != 0)
        rp_log("cannot lock segment '%s' (%s); readers will report this process as exited", seg->path,
               strerror(errno));

    /* The magic goes last: a reader that sees it sees a complete header. */
    atomic_store_explicit((_Atomic uint64_t *)&h->magic, RP_MAGIC, memory_order_release);
    atomic_store_explicit(&h->state, RP_SEGMENT_READY, memory_order_release);
    return true;
}

static void copy_name(char *dst, const char *src, bool *truncated)
{
    if (src == NULL)
        src = "";
    size_t n = strnlen(src, RP_NAME_MAX);
    *truncated = n >= RP_NAME_MAX;
    if (*truncated)
        n = RP_NAME_MAX - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int32_t rp_segment_add_node(struct rp_segment *seg, const char *ns, const char *name)
{
    struct rp_header *h = seg->header;
    uint32_t idx = atomic_load_explicit(&h->node_count, memory_order_relaxed);
    if (idx >= h->node_capacity) {
        atomic_fetch_add_explicit(&h->dropped_nodes, 1, memory_order_relaxed);
        return -1;
    }
    struct rp_node *n = &seg->nodes[idx];
    char full[2 * RP_NAME_MAX];
    if (ns == NULL || *ns == '\0' || strcmp(ns, "/") == 0)
        snprintf(full, sizeof full, "/%s", name ? name : "");
    else
        snprintf(full, sizeof full, "%s/%s", ns, name ? name : "");
    bool truncated;
    copy_name(n->name, full, &truncated);
    n->flags = truncated ? RP_EP_NAME_TRUNCATED : 0;
    n->created_mono_ns = rp_mono_ns();
    atomic_store_explicit(&n->state, RP_RECORD_READY, memory_order_release);
    atomic_store_explicit(&h->node_count, idx + 1, memory_order_release);
    return (int32_t)idx;
}

int32_t rp_segment_add_endpoint(struct rp_segment *seg, uint16_t kind, const char *name, uint64_t aux,
                                uint32_t node_index)
{
    struct rp_header *h = seg->header;
    uint32_t idx = atomic_load_explicit(&h->endpoint_count, memory_order_relaxed);
    if (idx >= h->endpoint_capacity) {
        atomic_fetch_add_explicit(&h->dropped_endpoints, 1, memory_order_relaxed);
        return -1;
    }
    struct rp_endpoint *e = &seg->endpoints[idx];
    bool truncated;
    copy_name(e->name, name, &truncated);
    e->kind = kind;
    e->aux = aux;
    e->created_mono_ns = rp_mono_ns();
    if (seg->timing != NULL)
        seg->timing[idx].period_ns = kind == RP_KIND_TIMER ? aux : 0;
    atomic_store_explicit(&e->node_index, node_index, memory_order_relaxed);
    atomic_store_explicit(&e->flags, truncated ? RP_EP_NAME_TRUNCATED : 0u, memory_order_relaxed);
    atomic_store_explicit(&e->state, RP_RECORD_READY, memory_order_release);
    atomic_store_explicit(&h->endpoint_count, idx + 1, memory_order_release);
    return (int32_t)idx;
}

int32_t rp_segment_reuse_endpoint(struct rp_segment *seg, uint32_t idx, uint16_t kind, const char *name, uint64_t aux,
                                  uint32_t node_index)
{
    struct rp_header *h = seg->header;
    if (idx >= atomic_load_explicit(&h->endpoint_count, memory_order_relaxed))
        return -1;
    struct rp_endpoint *e = &seg->endpoints[idx];
    /* Readers that saw READY before this re-check it after reading, and skip the record. */
    atomic_store_explicit(&e->state, RP_RECORD_EMPTY, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    uint64_t sums[3] = {0, 0, 0};
    for (uint32_t lane = 0; lane < h->lane_count; lane++) {
        _Atomic uint64_t *c = seg->lanes + ((size_t)lane * h->endpoint_capacity + idx) * RP_COUNTERS_PER_ENDPOINT;
        for (int k = 0; k < 3; k++)
            sums[k] += atomic_load_explicit(&c[k], memory_order_relaxed);
    }
    bool truncated;
    copy_name(e->name, name, &truncated);
    e->kind = kind;
    e->aux = aux;
    e->created_mono_ns = rp_mono_ns();
    for (int k = 0; k < 3; k++)
        e->base[k] = sums[k];
    /* Histograms start afresh: readers take a new generation's as new (their buckets are not counters of the slot). */
    if (seg->gaps != NULL)
        memset(&seg->gaps[idx], 0, sizeof seg->gaps[idx]);
    if (seg->latency != NULL)
        memset(&seg->latency[idx], 0, sizeof seg->latency[idx]);
    if (seg->timing != NULL) {
        memset(&seg->timing[idx], 0, sizeof seg->timing[idx]);
        seg->timing[idx].period_ns = kind == RP_KIND_TIMER ? aux : 0;
    }
    if (seg->calls != NULL)
        memset(&seg->calls[idx], 0, sizeof seg->calls[idx]);
    if (seg->bytes != NULL) /* its type is learnt again, after its init returns */
        memset(&seg->bytes[idx], 0, sizeof seg->bytes[idx]);
    atomic_store_explicit(&e->node_index, node_index, memory_order_relaxed);
    atomic_store_explicit(&e->flags, truncated ? RP_EP_NAME_TRUNCATED : 0u, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->generation, 1, memory_order_relaxed);
    atomic_store_explicit(&e->state, RP_RECORD_READY, memory_order_release);
    return (int32_t)idx;
}

void rp_segment_name_callback(struct rp_segment *seg, uint32_t idx, const char *symbol)
{
    struct rp_timing *t = &seg->timing[idx];
    if (atomic_load_explicit(&t->symbol_len, memory_order_relaxed) != 0)
        return; /* the first name stays: an intra-process twin names the same function */
    size_t n = strnlen(symbol, RP_SYMBOL_MAX);
    t->symbol_truncated = n >= RP_SYMBOL_MAX;
    if (n >= RP_SYMBOL_MAX)
        n = RP_SYMBOL_MAX - 1;
    memcpy(t->symbol, symbol, n);
    t->symbol[n] = '\0';
    atomic_store_explicit(&t->symbol_len, (uint32_t)n, memory_order_release);
}

bool rp_segment_clone_records(struct rp_segment *dst, const struct rp_segment *src)
{
    const struct rp_header *sh = src->header;
    uint32_t nn = atomic_load_explicit(&((struct rp_header *)sh)->node_count, memory_order_acquire);
    uint32_t ne = atomic_load_explicit(&((struct rp_header *)sh)->endpoint_count, memory_order_acquire);
    if (nn > dst->header->node_capacity || ne > dst->header->endpoint_capacity)
        return false;
    uint64_t now = dst->header->start_mono_ns;
    for (uint32_t i = 0; i < nn; i++) {
        struct rp_node *d = &dst->nodes[i];
        memcpy(d->name, src->nodes[i].name, RP_NAME_MAX);
        d->flags = src->nodes[i].flags;
        d->created_mono_ns = now;
        atomic_store_explicit(&d->state, RP_RECORD_READY, memory_order_release);
    }
    atomic_store_explicit(&dst->header->node_count, nn, memory_order_release);
    for (uint32_t i = 0; i < ne; i++) {
        struct rp_endpoint *d = &dst->endpoints[i];
        const struct rp_endpoint *s = &src->endpoints[i];
        memcpy(d->name, s->name, RP_NAME_MAX);
        d->kind = s->kind;
        d->aux = s->aux;
        d->created_mono_ns = now; /* the child's counts start at its own birth */
        atomic_store_explicit(&d->node_index,
                              atomic_load_explicit(&((struct rp_endpoint *)s)->node_index, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&d->flags, atomic_load_explicit(&((struct rp_endpoint *)s)->flags, memory_order_relaxed),
                              memory_order_relaxed);
        if (atomic_load_explicit(&((struct rp_qos *)&src->qos[i])->seq, memory_order_acquire) % 2 == 0 &&
            src->qos[i].generation == atomic_load_explicit(&((struct rp_endpoint *)s)->generation, memory_order_relaxed)) {
            struct rp_qos q = src->qos[i]; /* the parent's thread is gone (fork): nobody writes it now */
            q.generation = 0;
            rp_segment_set_qos(dst, i, &q);
        }
        if (dst->timing != NULL && src->timing != NULL) {
            dst->timing[i].period_ns = src->timing[i].period_ns;
            uint32_t len = atomic_load_explicit(&src->timing[i].symbol_len, memory_order_acquire);
            if (len != 0)
                rp_segment_name_callback(dst, i, src->timing[i].symbol);
        }
        if (dst->bytes != NULL && src->bytes != NULL) { /* what the type is, not what the parent sized */
            struct rp_bytes *db = &dst->bytes[i], *sb = &src->bytes[i];
            atomic_store_explicit(&db->fixed_size, atomic_load_explicit(&sb->fixed_size, memory_order_relaxed), memory_order_relaxed);
            atomic_store_explicit(&db->every, atomic_load_explicit(&sb->every, memory_order_relaxed), memory_order_relaxed);
            atomic_store_explicit(&db->flags, atomic_load_explicit(&sb->flags, memory_order_relaxed), memory_order_relaxed);
        }
        atomic_store_explicit(&d->state, RP_RECORD_READY, memory_order_release);
    }
    atomic_store_explicit(&dst->header->endpoint_count, ne, memory_order_release);
    return true;
}

void rp_segment_set_qos(struct rp_segment *seg, uint32_t idx, const struct rp_qos *facts)
{
    struct rp_qos *q = &seg->qos[idx];
    uint32_t seq = atomic_load_explicit(&q->seq, memory_order_relaxed);
    atomic_store_explicit(&q->seq, seq + 1, memory_order_relaxed); /* odd: being written */
    atomic_thread_fence(memory_order_release);
    q->generation = facts->generation;
    q->history = facts->history;
    q->reliability = facts->reliability;
    q->durability = facts->durability;
    q->liveliness = facts->liveliness;
    q->depth = facts->depth;
    q->deadline_ns = facts->deadline_ns;
    q->lifespan_ns = facts->lifespan_ns;
    q->lease_ns = facts->lease_ns;
    q->domain_id = facts->domain_id;
    q->flags = facts->flags;
    memcpy(q->rmw, facts->rmw, sizeof q->rmw);
    memcpy(q->type, facts->type, sizeof q->type);
    atomic_store_explicit(&q->seq, seq + 2, memory_order_release); /* even: complete */
}
