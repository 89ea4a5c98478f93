/*
 * Bytes (issue 48, design note 0033): how big each endpoint's messages are,
 * as serialized (4-byte encapsulation header plus XCDR1 body, what both
 * rmw_cyclonedds and rmw_fastrtps send), without serializing anything.
 * Only with ROS_PULSE_BYTES=1; off, no hook reaches this file.
 *
 * At rcl_publisher_init / rcl_subscription_init (qos.c's wrappers), the
 * type support the caller passed is read for its introspection members
 * (rosidl_typesupport_introspection_c for rclpy's C messages, _cpp for
 * rclcpp's): the library the dispatcher names is dlopen'ed (already loaded
 * under Cyclone DDS; under Fast DDS it loads, once per type), its getter
 * called; nothing goes through the dispatcher, so rcutils' error state is
 * never touched. A type without strings or sequences has one size, computed
 * then and written to the segment: its messages cost nothing more. Any other
 * type's messages are sized by walking their members, one in
 * RP_BYTES_EVERY of each thread's publishes (and of each subscription's
 * takes); a big message makes its endpoint skip samples in proportion to the
 * members it walked, so the walk's cost per message stays flat.
 *
 * The walk reads only what rosidl lays out: members' offsets, a string's
 * length in its second word (C and libstdc++ alike), a sequence's length
 * and elements through the introspection's size and get functions. It
 * calls no rmw and no generated serializer (the fastrtps one throws on an
 * over-long bounded sequence, which from C would end the process).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "ros2_pulse/tracetools_api.h"

/* Per endpoint, in process memory: how to size its messages (the segment's rp_bytes says whether it must). */
struct sizer {
    const rp_introspection_members_t *_Atomic type;
    _Atomic uint32_t skipping; /* samples to skip before the next walk: the last walk's members / RP_WALK_BUDGET */
    _Atomic uint32_t tried;    /* a first message was walked: no longer every message until one is */
};

static struct sizer *g_sizers;           /* [g_sizers_len], made with the first endpoint learnt */
static _Atomic uint32_t g_sizers_len;     /* published (release) after g_sizers and rp_bytes_mask */
static uint32_t rp_bytes_mask;            /* RP_BYTES_EVERY - 1 */
static pthread_once_t g_sizers_once = PTHREAD_ONCE_INIT;

#define RP_WALK_BUDGET 64u        /* members a walk may visit per sample without skipping the next */
#define RP_WALK_MAX (1u << 24)    /* a message beyond this many members is not sized (no sample) */
#define RP_SIZE_MAX (UINT64_C(1) << 32) /* CDR lengths are 32-bit: a larger one is a misread */

enum layout { LAYOUT_UNKNOWN = 0, LAYOUT_HUMBLE, LAYOUT_IRON, LAYOUT_NONE };
static _Atomic int g_layout;

/* Iron+ appended key flags to the introspection structs; librosidl_runtime_c says which it is. */
static int layout(void)
{
    int l = atomic_load_explicit(&g_layout, memory_order_acquire);
    if (l != LAYOUT_UNKNOWN)
        return l;
    void *h = dlopen("librosidl_runtime_c.so", RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL) {
        dlerror();
        l = LAYOUT_NONE; /* no rosidl in this process: no type support to read */
    } else {
        l = dlsym(h, "rosidl_get_zero_initialized_type_hash") != NULL ? LAYOUT_IRON : LAYOUT_HUMBLE;
        dlerror();
        dlclose(h); /* NOLOAD took a reference */
    }
    atomic_store_explicit(&g_layout, l, memory_order_release);
    return l;
}

static const rp_introspection_member_t *members_of(const rp_introspection_members_t *t)
{
    return layout() == LAYOUT_IRON ? t->at40 : t->at32;
}

static bool is_array(const rp_introspection_member_t *m)
{
    return layout() == LAYOUT_IRON ? m->at33 != 0 : m->at32 != 0;
}

/* A primitive's CDR size (its alignment too, up to 8); 0 for strings and messages. */
static uint32_t primitive_size(uint8_t type_id)
{
    switch (type_id) {
    case RP_ROSIDL_TYPE_CHAR: case RP_ROSIDL_TYPE_BOOLEAN: case RP_ROSIDL_TYPE_OCTET:
    case RP_ROSIDL_TYPE_UINT8: case RP_ROSIDL_TYPE_INT8:
        return 1;
    case RP_ROSIDL_TYPE_WCHAR: case RP_ROSIDL_TYPE_UINT16: case RP_ROSIDL_TYPE_INT16:
        return 2;
    case RP_ROSIDL_TYPE_FLOAT: case RP_ROSIDL_TYPE_UINT32: case RP_ROSIDL_TYPE_INT32:
        return 4;
    case RP_ROSIDL_TYPE_DOUBLE: case RP_ROSIDL_TYPE_UINT64: case RP_ROSIDL_TYPE_INT64:
        return 8;
    case RP_ROSIDL_TYPE_LONG_DOUBLE:
        return 16;
    default:
        return 0;
    }
}

static uint64_t align(uint64_t off, uint32_t a)
{
    a = a > 8 ? 8 : a; /* XCDR1 aligns to at most 8 */
    return (off + a - 1) & ~(uint64_t)(a - 1);
}

/* One walk: where the body ends (from the header's end), members visited, and whether it went wrong. */
struct walk {
    uint64_t off;
    uint32_t steps;
    bool bad;
};

static const rp_introspection_members_t *nested(const rp_introspection_member_t *m)
{
    return m->members != NULL ? m->members->data : NULL;
}

static void walk_message(const rp_introspection_members_t *t, const char *msg, struct walk *w);

/* One value of member m at p (an element of an array member, or the member itself). */
static void walk_value(const rp_introspection_member_t *m, const char *p, struct walk *w)
{
    uint32_t size = primitive_size(m->type_id);
    if (size != 0) {
        w->off = align(w->off, size) + size;
        return;
    }
    if (m->type_id == RP_ROSIDL_TYPE_MESSAGE) {
        const rp_introspection_members_t *sub = nested(m);
        if (sub == NULL)
            w->bad = true;
        else
            walk_message(sub, p, w);
        return;
    }
    uint64_t len = *(const uint64_t *)(p + RP_STRING_LENGTH_OFFSET);
    if (len >= RP_SIZE_MAX) {
        w->bad = true;
        return;
    }
    /* string: u32 length (with the NUL) + chars + NUL; wstring: u32 length + 16-bit chars */
    w->off = align(w->off, 4) + 4 + (m->type_id == RP_ROSIDL_TYPE_WSTRING ? 2 * len : len + 1);
}

static void walk_message(const rp_introspection_members_t *t, const char *msg, struct walk *w)
{
    const rp_introspection_member_t *ms = members_of(t);
    for (uint32_t i = 0; i < t->member_count && !w->bad; i++) {
        const rp_introspection_member_t *m = &ms[i];
        const char *field = msg + m->offset;
        if (++w->steps > RP_WALK_MAX) {
            w->bad = true;
            return;
        }
        if (!is_array(m)) {
            walk_value(m, field, w);
            continue;
        }
        bool sequence = m->array_size == 0 || m->is_upper_bound;
        size_t n = m->size_function(field);
        if (sequence)
            w->off = align(w->off, 4) + 4;
        else if (n != m->array_size) {
            w->bad = true;
            return;
        }
        uint32_t size = primitive_size(m->type_id);
        if (size != 0) {
            if (n >= RP_SIZE_MAX) {
                w->bad = true;
                return;
            }
            if (n != 0)
                w->off = align(w->off, size) + n * size;
            continue;
        }
        w->steps += n > RP_WALK_MAX ? RP_WALK_MAX : (uint32_t)n;
        for (size_t k = 0; k < n && !w->bad; k++)
            walk_value(m, m->get_const_function(field, k), w);
    }
}

/*
 * Reads a type once, without a message: true when every member it has (and
 * its nested messages have) is usable by the walk; *fixed is its body size
 * when it has no strings or sequences, else 0; *wide when it has wchar or
 * wstring members.
 */
static bool check_type(const rp_introspection_members_t *t, uint64_t *off, bool *variable, bool *wide, int depth)
{
    if (t == NULL || depth > 32 || (members_of(t) == NULL && t->member_count != 0))
        return false;
    const rp_introspection_member_t *ms = members_of(t);
    for (uint32_t i = 0; i < t->member_count; i++) {
        const rp_introspection_member_t *m = &ms[i];
        if (m->type_id < RP_ROSIDL_TYPE_FLOAT || m->type_id > RP_ROSIDL_TYPE_MESSAGE)
            return false;
        if (m->type_id == RP_ROSIDL_TYPE_WCHAR || m->type_id == RP_ROSIDL_TYPE_WSTRING)
            *wide = true;
        bool array = is_array(m);
        if (array && m->size_function == NULL)
            return false;
        if (array && primitive_size(m->type_id) == 0 && m->get_const_function == NULL)
            return false;
        bool sequence = array && (m->array_size == 0 || m->is_upper_bound);
        if (sequence || m->type_id == RP_ROSIDL_TYPE_STRING || m->type_id == RP_ROSIDL_TYPE_WSTRING)
            *variable = true;
        size_t n = array ? m->array_size : 1;
        uint32_t size = primitive_size(m->type_id);
        if (m->type_id == RP_ROSIDL_TYPE_MESSAGE) {
            /* each element walks on from where the last ended: alignment may differ between them */
            for (size_t k = 0; k < (sequence ? 1 : n); k++)
                if (!check_type(nested(m), off, variable, wide, depth + 1))
                    return false;
        } else if (size != 0 && !sequence) {
            *off = align(*off, size) + n * size;
        }
    }
    return true;
}

/* The sizers, one per endpoint slot, made once per process when the first
 * endpoint is learnt (its segment exists then); a fork child keeps its
 * parent's, whose table has the same capacity. */
static void make_sizers(void)
{
    uint32_t n = g_seg.header->endpoint_capacity;
    rp_bytes_mask = g_cfg.bytes_every - 1;
    g_sizers = calloc(n, sizeof *g_sizers);
    atomic_store_explicit(&g_sizers_len, g_sizers != NULL ? n : 0, memory_order_release);
}

/* The sizers' length; 0 until made (or when their allocation failed). */
static inline uint32_t sizers_len(void) { return atomic_load_explicit(&g_sizers_len, memory_order_acquire); }

/* dlopen lib from dir, the directory of the object holding addr; NULL when that fails. */
static void *open_in_dir_of(const char *lib, const void *addr)
{
    Dl_info info;
    if (addr == NULL || dladdr(addr, &info) == 0 || info.dli_fname == NULL)
        return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    char path[4096];
    if (slash == NULL ||
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, lib) >= (int)sizeof path)
        return NULL;
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (h == NULL)
        dlerror();
    return h;
}

/*
 * A package's type support library by name: the loaded one (Cyclone DDS
 * loaded the introspection one), else through the search path (a sourced
 * setup.bash puts the prefix's lib in LD_LIBRARY_PATH), else beside the
 * library holding the dispatcher ts (the package's own typesupport_c/_cpp:
 * an install found through RUNPATH), else beside librosidl_runtime_c. Never
 * closed.
 */
static void *open_beside(const char *lib, const void *ts)
{
    void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
    if (h != NULL)
        return h;
    dlerror();
    if ((h = open_in_dir_of(lib, ts)) != NULL)
        return h;
    void *rt = dlopen("librosidl_runtime_c.so", RTLD_LAZY | RTLD_NOLOAD);
    if (rt == NULL) {
        dlerror();
        return NULL;
    }
    h = open_in_dir_of(lib, dlsym(rt, "get_message_typesupport_handle"));
    dlerror();
    dlclose(rt);
    return h;
}

/* The introspection type support of lang ("c"/"cpp") behind ts, or NULL. */
static const rp_rosidl_message_type_support_t *introspection_of(const rp_rosidl_message_type_support_t *ts)
{
    const char *id = ts->typesupport_identifier;
    const char *want;
    if (strcmp(id, "rosidl_typesupport_cpp") == 0 || strcmp(id, "rosidl_typesupport_introspection_cpp") == 0)
        want = "rosidl_typesupport_introspection_cpp";
    else if (strcmp(id, "rosidl_typesupport_c") == 0 || strcmp(id, "rosidl_typesupport_introspection_c") == 0)
        want = "rosidl_typesupport_introspection_c";
    else
        return NULL; /* a build with one other type support only */
    if (strcmp(id, want) == 0)
        return ts;
    const rp_type_support_map_t *map = ts->data;
    if (map == NULL || map->package_name == NULL)
        return NULL;
    for (size_t i = 0; i < map->size; i++) {
        if (map->typesupport_identifier[i] == NULL || strcmp(map->typesupport_identifier[i], want) != 0)
            continue;
        char lib[512];
        if (snprintf(lib, sizeof lib, "lib%s__%s.so", map->package_name, want) >= (int)sizeof lib)
            return NULL;
        void *h = open_beside(lib, ts);
        void *getter = h != NULL ? dlsym(h, map->symbol_name[i]) : NULL;
        if (getter == NULL) {
            dlerror();
            return NULL;
        }
        const rp_rosidl_message_type_support_t *its = ((const rp_rosidl_message_type_support_t *(*)(void))getter)();
        if (its == NULL || its->typesupport_identifier == NULL || strcmp(its->typesupport_identifier, want) != 0)
            return NULL;
        return its;
    }
    return NULL;
}

void rp_bytes_learn(uint64_t ep, const void *type_support)
{
    if (g_seg.bytes == NULL || ep == 0)
        return;
    pthread_once(&g_sizers_once, make_sizers);
    if (ep > sizers_len())
        return;
    struct rp_bytes *b = &g_seg.bytes[ep - 1];
    const rp_rosidl_message_type_support_t *ts = type_support;
    const rp_rosidl_message_type_support_t *its =
        ts != NULL && ts->typesupport_identifier != NULL && layout() != LAYOUT_NONE ? introspection_of(ts) : NULL;
    const rp_introspection_members_t *t = its != NULL ? its->data : NULL;
    uint64_t body = 0;
    bool variable = false, wide = false;
    if (t == NULL || !check_type(t, &body, &variable, &wide, 0)) {
        atomic_fetch_or_explicit(&b->flags, RP_BYTES_UNREADABLE, memory_order_release);
        return;
    }
    struct sizer *s = &g_sizers[ep - 1];
    atomic_store_explicit(&s->skipping, 0, memory_order_relaxed);
    atomic_store_explicit(&s->tried, 0, memory_order_relaxed);
    atomic_store_explicit(&s->type, variable ? t : NULL, memory_order_relaxed);
    if (!variable) {
        uint64_t size = 4 + (body != 0 ? body : 1); /* an empty body is one byte on the wire */
        atomic_store_explicit(&b->fixed_size, (uint32_t)(size < UINT32_MAX ? size : UINT32_MAX), memory_order_relaxed);
        atomic_store_explicit(&b->max_size, (uint32_t)(size < UINT32_MAX ? size : UINT32_MAX), memory_order_relaxed);
    }
    atomic_store_explicit(&b->every, rp_bytes_mask + 1, memory_order_relaxed);
    atomic_fetch_or_explicit(&b->flags, RP_BYTES_TYPED | (wide ? RP_BYTES_WIDE : 0u), memory_order_release);
    rp_mappings_changed(); /* cached slots re-resolve: the variable ones now sample */
}

bool rp_bytes_sampled(uint64_t ep)
{
    if (g_seg.bytes == NULL || ep == 0 || ep > sizers_len())
        return false;
    return (atomic_load_explicit(&g_seg.bytes[ep - 1].flags, memory_order_acquire) & RP_BYTES_TYPED) &&
           atomic_load_explicit(&g_sizers[ep - 1].type, memory_order_relaxed) != NULL;
}

static void add_size(struct rp_bytes *b, uint64_t size, _Atomic uint64_t *sum, _Atomic uint64_t *n)
{
    atomic_fetch_add_explicit(sum, size, memory_order_relaxed);
    atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
    uint32_t s32 = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;
    uint32_t max = atomic_load_explicit(&b->max_size, memory_order_relaxed);
    while (s32 > max && !atomic_compare_exchange_weak_explicit(&b->max_size, &max, s32, memory_order_relaxed,
                                                               memory_order_relaxed)) {
    }
}

/* This thread's sampling draws (xorshift32): a random one in RP_BYTES_EVERY,
 * so no size pattern that repeats with the publish count (a key frame every
 * 8th) is sampled at one phase only. */
static __thread uint32_t tls_draw;

static RP_COLD uint32_t first_draw(void)
{
    uint32_t x = (uint32_t)((uintptr_t)&tls_draw >> 4) * 2654435761u ^ (uint32_t)rp_mono_ns();
    return x != 0 ? x : 1;
}

void rp_bytes_message(uint64_t ep, const void *message)
{
    if (ep == 0 || ep > sizers_len())
        return;
    uint32_t x = tls_draw != 0 ? tls_draw : first_draw();
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    tls_draw = x;
    /* until an endpoint has been walked once, every message is its turn: a slow topic has a size at once */
    if ((x & rp_bytes_mask) != 0 && atomic_load_explicit(&g_sizers[ep - 1].tried, memory_order_relaxed) != 0)
        return;
    rp_bytes_sample(ep, message);
}

RP_COLD void rp_bytes_sample(uint64_t ep, const void *message)
{
    struct sizer *s = &g_sizers[ep - 1];
    const rp_introspection_members_t *t = atomic_load_explicit(&s->type, memory_order_relaxed);
    if (t == NULL || message == NULL)
        return;
    if (atomic_load_explicit(&s->tried, memory_order_relaxed) == 0)
        atomic_store_explicit(&s->tried, 1, memory_order_relaxed);
    uint32_t left = atomic_load_explicit(&s->skipping, memory_order_relaxed);
    if (left != 0) { /* a racing thread may skip one sample more or fewer: a sample, not a count */
        atomic_store_explicit(&s->skipping, left - 1, memory_order_relaxed);
        return;
    }
    struct walk w = {0, 0, false};
    walk_message(t, message, &w);
    if (w.bad)
        return;
    uint32_t skip = w.steps / RP_WALK_BUDGET;
    atomic_store_explicit(&s->skipping, skip, memory_order_relaxed);
    struct rp_bytes *b = &g_seg.bytes[ep - 1];
    atomic_store_explicit(&b->every, (rp_bytes_mask + 1) * (skip + 1), memory_order_relaxed);
    add_size(b, 4 + (w.off != 0 ? w.off : 1), &b->sampled_bytes, &b->sampled);
    atomic_thread_fence(memory_order_release); /* a publish is sized before it counts (rp_bytes_exact) */
}

/*
 * A serialized message's size is added before the message is counted (the
 * count is what says "a message flowed"): a reader that sees a count sees
 * its size. Counted first, a window read in between would find a message
 * nothing sized and call the endpoint's bytes not measured: Jazzy counts a
 * serialized publish at the rcl_publish it fires inside the call, and the
 * DDS write that follows leaves that gap open for microseconds (TestBytes
 * failed so once in four CI runs). The fence orders the sizes before the
 * count's relaxed bump on arm64 too.
 */
void rp_bytes_exact(uint64_t ep, uint64_t size)
{
    if (g_seg.bytes == NULL || ep == 0)
        return;
    pthread_once(&g_sizers_once, make_sizers);
    if (ep > sizers_len())
        return;
    struct rp_bytes *b = &g_seg.bytes[ep - 1];
    add_size(b, size, &b->exact_bytes, &b->exact);
    atomic_thread_fence(memory_order_release);
}

/* A failed publish counts nothing: its size goes too (its max_size stays,
 * the largest message offered). */
void rp_bytes_exact_undo(uint64_t ep, uint64_t size)
{
    if (g_seg.bytes == NULL || ep == 0 || ep > sizers_len())
        return;
    struct rp_bytes *b = &g_seg.bytes[ep - 1];
    atomic_fetch_sub_explicit(&b->exact_bytes, size, memory_order_relaxed);
    atomic_fetch_sub_explicit(&b->exact, 1, memory_order_relaxed);
}

/* The serialized message this thread is taking (its wrapper's argument),
 * and whether the rmw_take inside sized it already. */
static __thread const rp_serialized_message_t *tls_taking;
static __thread bool tls_taken_sized;

RP_COLD void rp_bytes_serialized_take(uint64_t ep)
{
    if (tls_taking == NULL || tls_taken_sized)
        return;
    rp_bytes_exact(ep, tls_taking->buffer_length); /* both RMWs set it before their rmw_take fires */
    tls_taken_sized = true;
}

/*
 * A serialized take (rclcpp's GenericSubscription, rosbag2, rclpy raw)
 * knows its size: exact bytes. On Jazzy and Kilted both RMWs fire rmw_take
 * inside it with the *serialized* message, which the take hook must not
 * walk as a typed one: the thread is marked for the call. The ordinary
 * take path is not touched. No librcl: an error, nothing taken.
 */
EXPORT rp_rcl_ret_t rcl_take_serialized_message(const void *subscription, void *serialized_message, void *message_info,
                                                void *allocation)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    rp_rcl_take_serialized_fn real = (rp_rcl_take_serialized_fn)rp_real(&real_fn, "rcl_take_serialized_message", "librcl.so");
    if (real == NULL)
        return RP_RCL_RET_ERROR;
    tls_taking = serialized_message;
    tls_taken_sized = false;
    rp_tls_hot.bytes_serialized++;
    rp_rcl_ret_t ret = real(subscription, serialized_message, message_info, allocation);
    rp_tls_hot.bytes_serialized--;
    tls_taking = NULL;
    /* Sized here unless counted inside (then sized there, before the count):
     * an rclcpp subscription counts it at the callback_start that follows. */
    if (ret == RP_RCL_RET_OK && !tls_taken_sized && subscription != NULL && serialized_message != NULL &&
        rp_lanes() != NULL && g_seg.bytes != NULL) {
        uint64_t ep = rp_endpoint_of(false, subscription);
        if (ep != 0)
            rp_bytes_exact(ep, ((const rp_serialized_message_t *)serialized_message)->buffer_length);
    }
    return ret;
}
