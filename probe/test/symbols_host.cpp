// A host that names callbacks as Humble's rclcpp does (tracetools::get_symbol,
// tracetools/utils.hpp: a function pointer through get_symbol_funcptr, a
// lambda or std::bind through demangle_symbol of its type's name), linked
// against a libtracetools that exports the two helpers. It prints each name
// beside what the LTTng build of the helpers would answer (dladdr, then
// __cxa_demangle), for probe/test/test_symbols.sh to compare.
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>

namespace tracetools::detail {
const char * demangle_symbol(const char * mangled);
const char * get_symbol_funcptr(void * funcptr);
}  // namespace tracetools::detail

struct Listener {
  void on_chatter(std::shared_ptr<const std::string> msg) { (void)msg; }
};

void on_scan(std::shared_ptr<const std::string> msg) { (void)msg; }

static std::string lttng_demangle(const char * mangled)
{
  int status = 1;
  char * d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 ? d : (mangled ? mangled : "UNKNOWN_demangling_failed");
  std::free(d);
  return out;
}

static int report(const char * what, const char * got, const std::string & want)
{
  std::printf("%s\t%s\t%s\n", what, got ? got : "(null)", want.c_str());
  return 0;
}

int main()
{
  Listener l;
  auto lambda = [&l](std::shared_ptr<const std::string> m) { l.on_chatter(m); };
  auto bound = std::bind(&Listener::on_chatter, &l, std::placeholders::_1);
  std::function<void(std::shared_ptr<const std::string>)> fn = on_scan;

  report("lambda", tracetools::detail::demangle_symbol(typeid(lambda).name()), lttng_demangle(typeid(lambda).name()));
  report("bind", tracetools::detail::demangle_symbol(typeid(bound).name()), lttng_demangle(typeid(bound).name()));
  void * ptr = reinterpret_cast<void *>(*fn.target<void (*)(std::shared_ptr<const std::string>)>());
  Dl_info info;
  std::string want = dladdr(ptr, &info) != 0 ? lttng_demangle(info.dli_sname) : "UNKNOWN";
  report("funcptr", tracetools::detail::get_symbol_funcptr(ptr), want);
  return 0;
}
