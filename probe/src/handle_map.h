/*
 * An open-addressing map from an address to a 64-bit value that grows.
 * Lookups are lock-free (acquire loads); inserts, overwrites and growth
 * happen only under the probe's init mutex. Entries are never deleted:
 * tracetools has no destroy tracepoints, so a re-created entity overwrites
 * its old address.
 *
 * Growth publishes a new, larger table with a release store and leaks the
 * old one: a reader may still be probing it. A reader that probes an old
 * table can miss a key inserted after it loaded the pointer; every insert is
 * followed by a generation bump, so such a miss is never cached.
 * Tables start small (RSS grows with the entities a process really has).
 */
#ifndef ROS2_PULSE_HANDLE_MAP_H
#define ROS2_PULSE_HANDLE_MAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define RP_MAP_INITIAL 64u     /* power of two */
#define RP_MAP_MAX (1u << 20)  /* a million live handles of one kind is not a ROS process */

/* A key and its value side by side: a lookup's hit is one cache line. */
struct rp_entry {
    _Atomic uintptr_t key;
    _Atomic uint64_t value;
};

struct rp_table {
    uint32_t capacity; /* power of two */
    uint32_t count;    /* written under the mutex only */
    uint64_t pad;      /* entries at 16-byte offsets: none straddles two lines */
    struct rp_entry entries[];
};
_Static_assert(sizeof(struct rp_table) == 16 && sizeof(struct rp_entry) == 16, "no entry straddles a line");

struct rp_map {
    _Atomic(struct rp_table *) table;
};

static inline uint32_t rp_map_hash(uintptr_t key, uint32_t capacity)
{
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(h >> 32) & (capacity - 1);
}

static inline uint64_t rp_table_get(const struct rp_table *t, uintptr_t key)
{
    uint32_t mask = t->capacity - 1;
    for (uint32_t n = 0, i = rp_map_hash(key, t->capacity); n < t->capacity; n++, i = (i + 1) & mask) {
        uintptr_t k = atomic_load_explicit(&t->entries[i].key, memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&t->entries[i].value, memory_order_acquire);
        if (k == 0)
            return 0;
    }
    return 0;
}

/* Returns the value for key, or 0 when absent. Safe from any thread. */
static inline uint64_t rp_map_get(struct rp_map *m, uintptr_t key)
{
    const struct rp_table *t = atomic_load_explicit(&m->table, memory_order_acquire);
    return t != NULL ? rp_table_get(t, key) : 0;
}

static inline struct rp_table *rp_table_new(uint32_t capacity)
{
    struct rp_table *t = calloc(1, sizeof *t + (size_t)capacity * sizeof t->entries[0]);
    if (t != NULL)
        t->capacity = capacity;
    return t;
}

/* Inserts into t, which has room; returns the previous value or 0. Caller holds the mutex. */
static inline uint64_t rp_table_put(struct rp_table *t, uintptr_t key, uint64_t value)
{
    uint32_t mask = t->capacity - 1;
    for (uint32_t n = 0, i = rp_map_hash(key, t->capacity); n < t->capacity; n++, i = (i + 1) & mask) {
        uintptr_t k = atomic_load_explicit(&t->entries[i].key, memory_order_relaxed);
        if (k == key) {
            uint64_t old = atomic_load_explicit(&t->entries[i].value, memory_order_relaxed);
            atomic_store_explicit(&t->entries[i].value, value, memory_order_release);
            return old;
        }
        if (k == 0) {
            atomic_store_explicit(&t->entries[i].value, value, memory_order_relaxed);
            atomic_store_explicit(&t->entries[i].key, key, memory_order_release);
            t->count++;
            return 0;
        }
    }
    return 0; /* unreachable: the caller keeps the load under 3/4 */
}

/*
 * Sets key to value (value must not be 0). Caller holds the init mutex.
 * Returns the previous value (0 if the key was new), or UINT64_MAX when the
 * map cannot grow (out of memory, or RP_MAP_MAX).
 */
static inline uint64_t rp_map_put(struct rp_map *m, uintptr_t key, uint64_t value)
{
    struct rp_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    if (t == NULL || (t->count + 1) * 4 > t->capacity * 3) {
        uint32_t cap = t == NULL ? RP_MAP_INITIAL : t->capacity * 2;
        if (t != NULL && rp_table_get(t, key) != 0) {
            return rp_table_put(t, key, value); /* an overwrite needs no room */
        }
        struct rp_table *bigger = cap <= RP_MAP_MAX ? rp_table_new(cap) : NULL;
        if (bigger == NULL)
            return UINT64_MAX;
        for (uint32_t i = 0; t != NULL && i < t->capacity; i++) {
            uintptr_t k = atomic_load_explicit(&t->entries[i].key, memory_order_relaxed);
            if (k != 0)
                rp_table_put(bigger, k, atomic_load_explicit(&t->entries[i].value, memory_order_relaxed));
        }
        atomic_store_explicit(&m->table, bigger, memory_order_release); /* the old table is leaked */
        t = bigger;
    }
    return rp_table_put(t, key, value);
}

/* Sets every entry whose value is value to 0 (absent). Caller holds the init mutex. */
static inline void rp_map_forget_value(struct rp_map *m, uint64_t value)
{
    struct rp_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    for (uint32_t i = 0; t != NULL && i < t->capacity; i++)
        if (atomic_load_explicit(&t->entries[i].value, memory_order_relaxed) == value)
            atomic_store_explicit(&t->entries[i].value, 0, memory_order_release);
}

#endif /* ROS2_PULSE_HANDLE_MAP_H */
