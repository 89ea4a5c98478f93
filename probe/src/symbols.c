/*
 * Callback names where tracetools cannot give them (issue 44).
 *
 * rclcpp names each callback once, at registration, through
 * tracetools::get_symbol(): a template compiled into the caller that calls
 * one of two helpers exported by libtracetools,
 *   tracetools::detail::demangle_symbol(const char *mangled)   (lambdas, std::bind: a type's name)
 *   tracetools::detail::get_symbol_funcptr(void *funcptr)      (a plain function pointer)
 * Humble's libtracetools built without lttng-ust (source builds, many
 * containers) answers the placeholders "DISABLED__demangle_symbol" and
 * "DISABLED__get_symbol_funcptr": every callback would be named that. The
 * probe exports both helpers under their C++ names and forwards; only when
 * the real helper answers a placeholder (or is nowhere) does it do what the
 * LTTng build does: dladdr for a pointer, then the C++ runtime's
 * __cxa_demangle, looked up in the process at run time (the probe links no
 * C++ runtime; a process without one keeps the mangled name, as a failed
 * demangle does in the LTTng build).
 *
 * Jazzy's demangle_symbol has the same mangled name (a return type is not
 * part of it) but returns a malloc'd string its caller frees, or NULL; its
 * get_symbol_funcptr takes a const void * (another name, not interposed).
 * Jazzy's helpers never answer a placeholder, so the probe only forwards
 * there; and what the probe answers in place of a placeholder is malloc'd,
 * which both contracts accept (Humble's callers never free it: the LTTng
 * build leaks the same way, once per registered callback).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define DEMANGLE_SYMBOL "_ZN10tracetools6detail15demangle_symbolEPKc"
#define GET_SYMBOL_FUNCPTR "_ZN10tracetools6detail18get_symbol_funcptrEPv"
#define PLACEHOLDER "DISABLED__" /* what Humble's helpers answer without LTTng */
#define UNKNOWN "UNKNOWN"         /* tracetools' TRACETOOLS_SYMBOL_UNKNOWN */

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
typedef const char *(*demangle_symbol_fn)(const char *mangled);
typedef const char *(*get_symbol_funcptr_fn)(void *funcptr);

EXPORT const char *rp_demangle_symbol(const char *mangled) __asm__(DEMANGLE_SYMBOL);
EXPORT const char *rp_get_symbol_funcptr(void *funcptr) __asm__(GET_SYMBOL_FUNCPTR);

/* A real helper's answer the probe keeps: anything but Humble's placeholder. */
static bool usable(const char *s)
{
    return s == NULL || strncmp(s, PLACEHOLDER, sizeof PLACEHOLDER - 1) != 0;
}

/* The LTTng build's demangle, in memory the caller may free (or never free). */
static const char *demangle(const char *mangled)
{
    if (mangled == NULL)
        return strdup(UNKNOWN "_demangling_failed");
    cxa_demangle_fn cxa = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *out = cxa != NULL ? cxa(mangled, NULL, NULL, &status) : NULL;
    if (out != NULL && status == 0)
        return out;
    free(out);
    return strdup(mangled); /* not a C++ name, or no C++ runtime here: the name as the binary has it */
}

EXPORT const char *rp_demangle_symbol(const char *mangled)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    demangle_symbol_fn real = (demangle_symbol_fn)rp_real(&real_fn, DEMANGLE_SYMBOL, "libtracetools.so");
    if (real != NULL) {
        const char *name = real(mangled);
        if (usable(name))
            return name;
    }
    return demangle(mangled);
}

EXPORT const char *rp_get_symbol_funcptr(void *funcptr)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    get_symbol_funcptr_fn real = (get_symbol_funcptr_fn)rp_real(&real_fn, GET_SYMBOL_FUNCPTR, "libtracetools.so");
    if (real != NULL) {
        const char *name = real(funcptr);
        if (usable(name))
            return name;
    }
    Dl_info info;
    if (funcptr == NULL || dladdr(funcptr, &info) == 0)
        return strdup(UNKNOWN);
    return demangle(info.dli_sname);
}
