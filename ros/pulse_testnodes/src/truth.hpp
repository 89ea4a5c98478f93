// Ground truth a test node keeps of itself: what it published, received,
// measured of its own callbacks, timers, services and actions. Written as one
// JSON document at exit (and whenever a node says its fixed work is done), for
// ros2_pulse's real-ROS tests to judge pulse's figures against.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace pulse_testnodes
{

inline int64_t now_ns()
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CLOCK_REALTIME ns: the clock DDS source timestamps are taken on.
inline int64_t real_ns()
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::system_clock::now().time_since_epoch()).count();
}

// Durations a node measured itself: count, sum and max, in ns.
struct Durations
{
  std::mutex mu;
  uint64_t n = 0, sum_ns = 0, max_ns = 0;
  void add(int64_t ns);
  std::string json();
};

struct Endpoint
{
  Endpoint(std::string kind, std::string node, std::string name)
  : kind(std::move(kind)), node(std::move(node)), name(std::move(name)) {}
  std::string kind;  // publisher, subscription, timer, service, client, action_server, action_client
  std::string node;  // fully qualified
  std::string name;  // topic, service or action; "" for a timer
  int64_t period_ns = 0;  // timer
  std::atomic<uint64_t> count{0};  // published, received, fired, handled, sent, goals
  std::atomic<uint64_t> bytes{0};  // publisher: serialized (CDR) bytes sent, encapsulation included
  std::atomic<uint64_t> answered{0};  // client: responses taken; action client: results
  std::atomic<uint64_t> failed{0};  // service: responses rcl_send_response refused
  std::atomic<int64_t> first_ns{0}, last_ns{0};  // publisher, subscription: steady clock of the first and last message
  bool keep_stamps = false;  // --stamps: every message's time, for tests that judge one window
  std::mutex stamps_mu;
  std::vector<int64_t> stamps;
  // --relay's publisher, per message relayed: its age at the publish since
  // the input left its publisher (the hop: transport and the node's work),
  // and since its chain's first publish (the path so far), realtime ns.
  std::vector<int64_t> ages, path_ages;
  // --sample's publisher, per publish: the age of its input's latest
  // message and of the first since its previous publish (realtime ns).
  std::vector<int64_t> sampled_best, sampled_worst;
  void sampled(int64_t best, int64_t worst)
  {
    std::lock_guard<std::mutex> lock(stamps_mu);
    sampled_best.push_back(best);
    sampled_worst.push_back(worst);
  }
  void aged(int64_t hop, int64_t path)
  {
    std::lock_guard<std::mutex> lock(stamps_mu);
    ages.push_back(hop);
    path_ages.push_back(path);
  }
  void counted()  // one message published or received, now
  {
    int64_t t = now_ns();
    int64_t none = 0;
    first_ns.compare_exchange_strong(none, t);
    last_ns = t;
    count++;
    if (keep_stamps) {
      std::lock_guard<std::mutex> lock(stamps_mu);
      stamps.push_back(t);
    }
  }
  Durations callback;  // the node's own callback body: subscription, timer; service: of the answers sent
  Durations late;  // timer: start lateness against its own schedule
  Durations round_trip;  // client: send to response
};

class Truth
{
public:
  Endpoint & add(const std::string & kind, const std::string & node, const std::string & name);
  // Writes the document to path (through a temporary file and a rename).
  void write(const std::string & path, const std::string & lang);

private:
  std::mutex mu_;
  std::deque<Endpoint> endpoints_;  // a deque: references stay valid as it grows
};

}  // namespace pulse_testnodes
