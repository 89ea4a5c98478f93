/* Ground truth counters of a simgraph process (truth.h). */
#define _GNU_SOURCE
#include "truth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char truth_dir[512];
static struct truth_header *hdr;
static struct truth_record *recs;
static _Atomic int ages_fd = -1; /* DIR/ages-<pid>.bin, opened on the first age */

static const size_t truth_size = sizeof(struct truth_header) + TRUTH_CAPACITY * sizeof(struct truth_record);

static void *map_new(const char *process)
{
    char path[600];
    snprintf(path, sizeof path, "%s/truth-%d.bin", truth_dir, (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)truth_size) != 0) {
        fprintf(stderr, "simgraph: cannot create %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    void *p = mmap(NULL, truth_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr, "simgraph: cannot map %s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct truth_header *h = p;
    h->version = TRUTH_VERSION;
    h->capacity = TRUTH_CAPACITY;
    h->pid = (int32_t)getpid();
    h->ppid = (int32_t)getppid();
    snprintf(h->process, sizeof h->process, "%s", process);
    /* the magic last: a reader that sees it sees a complete header */
    atomic_thread_fence(memory_order_release);
    memcpy(h->magic, TRUTH_MAGIC, sizeof h->magic);
    return p;
}

void truth_open(const char *dir, const char *process)
{
    if (dir == NULL || dir[0] == '\0')
        return;
    snprintf(truth_dir, sizeof truth_dir, "%s", dir);
    void *p = map_new(process);
    if (p == NULL)
        return;
    hdr = p;
    recs = (struct truth_record *)(hdr + 1);
}

void truth_after_fork(void)
{
    if (hdr == NULL)
        return;
    struct truth_header *old = hdr;
    struct truth_record *old_recs = recs;
    hdr = NULL;
    recs = NULL;
    void *p = map_new(old->process);
    if (p == NULL)
        return;
    struct truth_header *h = p;
    struct truth_record *r = (struct truth_record *)(h + 1);
    uint32_t used = atomic_load_explicit(&old->used, memory_order_acquire);
    for (uint32_t i = 0; i < used; i++) {
        memcpy(r[i].kind, old_recs[i].kind, sizeof r[i].kind);
        memcpy(r[i].lang, old_recs[i].lang, sizeof r[i].lang);
        memcpy(r[i].topic, old_recs[i].topic, sizeof r[i].topic);
        memcpy(r[i].node, old_recs[i].node, sizeof r[i].node);
    }
    atomic_store_explicit(&h->used, used, memory_order_release);
    munmap(old, truth_size); /* the parent's file stays the parent's */
    int fd = atomic_exchange(&ages_fd, -1); /* and so do its ages: the child opens its own */
    if (fd >= 0)
        close(fd);
    hdr = h;
    recs = r;
}

int truth_add(const char *kind, const char *lang, const char *node, const char *topic)
{
    static _Atomic uint32_t next;
    if (hdr == NULL)
        return -1;
    uint32_t i = atomic_fetch_add(&next, 1);
    if (i >= TRUTH_CAPACITY) {
        fprintf(stderr, "simgraph: truth file full (%u records)\n", TRUTH_CAPACITY);
        return -1;
    }
    snprintf(recs[i].kind, sizeof recs[i].kind, "%s", kind);
    snprintf(recs[i].lang, sizeof recs[i].lang, "%s", lang);
    snprintf(recs[i].node, sizeof recs[i].node, "%s", node);
    snprintf(recs[i].topic, sizeof recs[i].topic, "%s", topic);
    /* publish in order: used only moves past records that are complete */
    uint32_t want = i;
    while (!atomic_compare_exchange_weak_explicit(&hdr->used, &want, i + 1, memory_order_release,
                                                  memory_order_relaxed))
        want = i;
    return (int)i;
}

void truth_inc(int slot, enum truth_count c)
{
    if (slot < 0 || recs == NULL)
        return;
    /* release: the tracepoint's count (the probe's store) is visible before this one */
    atomic_fetch_add_explicit(&recs[slot].count[c], 1, memory_order_release);
}

static void store_max(_Atomic uint64_t *m, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(m, &cur, v, memory_order_release, memory_order_relaxed))
        ;
}

void truth_callback(int slot, uint64_t d_ns, uint64_t period_ns)
{
    if (slot < 0 || recs == NULL)
        return;
    _Atomic uint64_t *t = recs[slot].timing;
    atomic_fetch_add_explicit(&t[TT_CALLBACK_NS], d_ns, memory_order_release);
    store_max(&t[TT_CALLBACK_MAX], d_ns);
    if (period_ns != 0 && d_ns > period_ns)
        atomic_fetch_add_explicit(&t[TT_OVERRUNS], 1, memory_order_release);
    atomic_fetch_add_explicit(&t[TT_CALLBACKS], 1, memory_order_release); /* last: a reader that sees n sees the n-th's sum */
}

void truth_thrown(int slot)
{
    if (slot >= 0 && recs != NULL)
        atomic_fetch_add_explicit(&recs[slot].timing[TT_THROWN], 1, memory_order_release);
}

void truth_late(int slot, uint64_t late_ns)
{
    if (slot < 0 || recs == NULL)
        return;
    _Atomic uint64_t *t = recs[slot].timing;
    atomic_fetch_add_explicit(&t[TT_LATE_NS], late_ns, memory_order_release);
    store_max(&t[TT_LATE_MAX], late_ns);
    atomic_fetch_add_explicit(&t[TT_LATE_N], 1, memory_order_release);
}

void truth_call(int slot, uint64_t d_ns) { truth_late(slot, d_ns); } /* the same fields (truth.h) */

void truth_e2e(int slot, uint64_t age_ns) { truth_late(slot, age_ns); } /* the same fields (truth.h) */

void truth_bytes(int slot, uint64_t size)
{
    if (slot >= 0 && recs != NULL)
        atomic_fetch_add_explicit(&recs[slot].timing[TT_BYTES], size, memory_order_release);
}

static void age_record(int slot, uint32_t tag, uint64_t age_ns)
{
    if (slot < 0 || recs == NULL)
        return;
    int fd = atomic_load(&ages_fd);
    if (fd < 0) {
        char path[600];
        snprintf(path, sizeof path, "%s/ages-%d.bin", truth_dir, (int)getpid());
        int nfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (nfd < 0) {
            fprintf(stderr, "simgraph: cannot create %s: %s\n", path, strerror(errno));
            return;
        }
        int expected = -1;
        if (atomic_compare_exchange_strong(&ages_fd, &expected, nfd))
            fd = nfd;
        else {
            close(nfd);
            fd = expected;
        }
    }
    struct {
        uint32_t slot, tag;
        uint64_t age;
    } rec = {(uint32_t)slot, tag, age_ns};
    ssize_t w = write(fd, &rec, sizeof rec); /* O_APPEND: one record a write, never interleaved */
    (void)w;
}

void truth_age(int slot, uint64_t age_ns) { age_record(slot, AGE_RELAYED, age_ns); }

void truth_sampled(int slot, uint64_t best_ns, uint64_t worst_ns)
{
    age_record(slot, AGE_SAMPLED_BEST, best_ns);
    age_record(slot, AGE_SAMPLED_WORST, worst_ns);
}

void truth_publish_at(int slot, _Atomic uint64_t *last, uint64_t now)
{
    if (slot < 0 || recs == NULL)
        return;
    uint64_t prev = atomic_load_explicit(last, memory_order_relaxed);
    do {
        if (now <= prev)
            return;
    } while (!atomic_compare_exchange_weak_explicit(last, &prev, now, memory_order_relaxed, memory_order_relaxed));
    if (prev != 0)
        store_max(&recs[slot].timing[TT_GAP_MAX], now - prev);
}

void truth_exit(void)
{
    if (hdr != NULL)
        atomic_store_explicit(&hdr->exited, 1, memory_order_release);
}
