#include "truth.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace pulse_testnodes
{

void Durations::add(int64_t ns)
{
  std::lock_guard<std::mutex> lock(mu);
  uint64_t d = ns > 0 ? static_cast<uint64_t>(ns) : 0;
  n++;
  sum_ns += d;
  max_ns = d > max_ns ? d : max_ns;
}

std::string Durations::json()
{
  std::lock_guard<std::mutex> lock(mu);
  std::ostringstream o;
  o << "{\"n\":" << n << ",\"sum_ns\":" << sum_ns << ",\"max_ns\":" << max_ns << "}";
  return o.str();
}

Endpoint & Truth::add(const std::string & kind, const std::string & node, const std::string & name)
{
  std::lock_guard<std::mutex> lock(mu_);
  endpoints_.emplace_back(kind, node, name);
  return endpoints_.back();
}

static std::string quote(const std::string & s)
{
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

void Truth::write(const std::string & path, const std::string & lang)
{
  if (path.empty()) {
    return;
  }
  std::ostringstream o;
  // the process's own CPU so far (user + system), for the benchmarks that compare arms
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
    static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  o << "{\"pid\":" << getpid() << ",\"lang\":" << quote(lang) << ",\"cpu_s\":" << cpu << ",\"endpoints\":[";
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool first = true;
    for (auto & e : endpoints_) {
      o << (first ? "" : ",") << "\n {\"kind\":" << quote(e.kind) << ",\"node\":" << quote(e.node) <<
        ",\"name\":" << quote(e.name) << ",\"period_ns\":" << e.period_ns << ",\"count\":" << e.count.load() <<
        ",\"bytes\":" << e.bytes.load() << ",\"answered\":" << e.answered.load() << ",\"first_ns\":" << e.first_ns.load() << ",\"last_ns\":" << e.last_ns.load() << ",\"failed\":" <<
        e.failed.load() << ",\"callback\":" << e.callback.json() << ",\"late\":" << e.late.json() <<
        ",\"round_trip\":" << e.round_trip.json() << ",\"stamps_ns\":[";
      {
        std::lock_guard<std::mutex> slock(e.stamps_mu);
        auto list = [&o](const char * name, const std::vector<int64_t> & v) {
            o << name;
            for (size_t i = 0; i < v.size(); i++) {
              o << (i ? "," : "") << v[i];
            }
            o << "]";
          };
        list("", e.stamps);
        list(",\"ages_ns\":[", e.ages);
        list(",\"path_ages_ns\":[", e.path_ages);
        list(",\"sampled_best_ns\":[", e.sampled_best);
        list(",\"sampled_worst_ns\":[", e.sampled_worst);
      }
      o << "}";
      first = false;
    }
  }
  o << "\n]}\n";
  std::string tmp = path + ".tmp";
  FILE * f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    std::perror(tmp.c_str());
    std::exit(2);
  }
  std::fputs(o.str().c_str(), f);
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::perror(path.c_str());
    std::exit(2);
  }
}

}  // namespace pulse_testnodes
