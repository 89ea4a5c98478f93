/*
 * A fixed-size open-addressing map from an address to a 64-bit value.
 * Lookups are lock-free (acquire loads); inserts and overwrites happen only
 * under the probe's init mutex. Entries are never deleted: tracetools has no
 * destroy tracepoints, so a re-created entity overwrites its old address.
 */
#ifndef ROS2_PULSE_HANDLE_MAP_H
#define ROS2_PULSE_HANDLE_MAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define RP_MAP_CAPACITY 2048u /* power of two */

struct rp_map {
    _Atomic uintptr_t keys[RP_MAP_CAPACITY];
    _Atomic uint64_t values[RP_MAP_CAPACITY];
};

static inline uint32_t rp_map_hash(uintptr_t key)
{
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(h >> 40) & (RP_MAP_CAPACITY - 1);
}

/* Returns the value for key, or 0 when absent. Safe from any thread. */
static inline uint64_t rp_map_get(struct rp_map *m, uintptr_t key)
{
    uint32_t i = rp_map_hash(key);
    for (uint32_t n = 0; n < RP_MAP_CAPACITY; n++, i = (i + 1) & (RP_MAP_CAPACITY - 1)) {
        uintptr_t k = atomic_load_explicit(&m->keys[i], memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&m->values[i], memory_order_acquire);
        if (k == 0)
            return 0;
    }
    return 0;
}

/*
 * Sets key to value (value must not be 0). Caller holds the init mutex.
 * Returns the previous value (0 if the key was new), or UINT64_MAX when the
 * map is full.
 */
static inline uint64_t rp_map_put(struct rp_map *m, uintptr_t key, uint64_t value)
{
    uint32_t i = rp_map_hash(key);
    for (uint32_t n = 0; n < RP_MAP_CAPACITY; n++, i = (i + 1) & (RP_MAP_CAPACITY - 1)) {
        uintptr_t k = atomic_load_explicit(&m->keys[i], memory_order_relaxed);
        if (k == key) {
            uint64_t old = atomic_load_explicit(&m->values[i], memory_order_relaxed);
            atomic_store_explicit(&m->values[i], value, memory_order_release);
            return old;
        }
        if (k == 0) {
            atomic_store_explicit(&m->values[i], value, memory_order_relaxed);
            atomic_store_explicit(&m->keys[i], key, memory_order_release);
            return 0;
        }
    }
    return UINT64_MAX;
}

#endif /* ROS2_PULSE_HANDLE_MAP_H */
