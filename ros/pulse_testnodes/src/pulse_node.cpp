// pulse_node: an rclcpp test node for ros2_pulse's real-ROS lane. One process
// holds one or many nodes (--nodes N), each with the publishers, subscriptions,
// timers, services and actions its flags ask for, and keeps its own ground
// truth (truth.hpp), written as JSON at exit (--truth FILE).
//
//   --name N --nodes K --namespace NS --intra --multi THREADS --reentrant --best-effort --depth D
//   --pub TOPIC,HZ[,BYTES[,COUNT[,TYPE]]] (TYPE string, int32, stamped: a string that starts a chain,
//     varstring: a string whose length changes with each message, within 4 % below BYTES; with sensor_msgs, image:
//     an rgb8 sensor_msgs/Image of about BYTES, cloud: a sensor_msgs/PointCloud2 of about BYTES); each
//     publisher's truth has the bytes rclcpp serialized (rclcpp::Serialization, encapsulation included)
//   --sub TOPIC[,WORK_MS[,TYPE]] (TYPE string, int32, or with sensor_msgs image, cloud)   --timer HZ[,WORK_MS]
//   --relay IN,OUT[,WORK_MS]: a subscription to IN whose callback works, then publishes the message on OUT
//     (a pipeline node); each relayed message's age since its input's publish and since its chain began
//     is in the truth (ages_ns, path_ages_ns)
//   --sample IN,OUT,HZ: a subscription to IN and a timer that publishes on OUT from the latest message
//     (CARET's use_latest_message); each publish's age from the latest IN message's send and from the
//     first one's since the previous publish is in the truth (sampled_best_ns, sampled_worst_ns)
//   --server SERVICE[,WORK_MS]        --client SERVICE,HZ[,COUNT]   --exit-when-sent
//   --action-server ACTION[,WORK_MS]  --action-client ACTION,HZ[,COUNT]
//   --duration S   --truth FILE   --stamps (every message's time in the truth)
//   --reentrant: each node's timers and subscriptions in one Reentrant callback group (the stress farm's)
//   --node FQN: a node of its own (a component container holds many): the --pub, --sub, --timer,
//     --server, --client and --action-* flags after it are its own; those before any --node are
//     the --name node's (or the --nodes K nodes'), which exist only when there are any or no --node.
//
// A run ends after --duration seconds (publishing stops, in-flight work drains
// for half a second, then the document is written) or at SIGINT/SIGTERM. When
// every COUNT-limited publisher and client is done the document is written at
// once too, so a test may SIGKILL the process afterwards and still know what
// it did.
#include <rcl/service.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "example_interfaces/action/fibonacci.hpp"
#include "example_interfaces/srv/add_two_ints.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp/serialization.hpp"
#include "rclcpp_action/rclcpp_action.hpp"
#include "std_msgs/msg/int32.hpp"
#include "std_msgs/msg/string.hpp"
#include "truth.hpp"
#ifdef PULSE_HAVE_SENSOR_MSGS
#include "sensor_msgs/msg/image.hpp"
#include "sensor_msgs/msg/point_cloud2.hpp"
#endif

using namespace std::chrono_literals;
using AddTwoInts = example_interfaces::srv::AddTwoInts;
using Fibonacci = example_interfaces::action::Fibonacci;
using pulse_testnodes::Endpoint;
using pulse_testnodes::now_ns;

namespace
{

[[noreturn]] void usage(const std::string & why);

// What one node (or --nodes K alike) has.
struct Entities
{
  std::string name, ns;
  std::vector<std::vector<std::string>> pubs, subs, relays, samplers, timers, servers, clients, action_servers, action_clients;
  bool empty() const
  {
    return pubs.empty() && subs.empty() && relays.empty() && samplers.empty() && timers.empty() && servers.empty() && clients.empty() &&
           action_servers.empty() && action_clients.empty();
  }
};

struct Options
{
  std::string name = "pulse_node", ns, truth;
  int nodes = 1, threads = 0, depth = 10;
  bool intra = false, reentrant = false, best_effort = false, exit_when_sent = false, stamps = false;
  double duration = 0;
  Entities base;                 // the flags before any --node: --name's node(s)
  std::vector<Entities> named;   // one per --node
};

// FQN /a/b/c: namespace /a/b, name c.
Entities named_node(const std::string & fqn)
{
  size_t slash = fqn.rfind('/');
  if (fqn.empty() || fqn[0] != '/' || slash + 1 >= fqn.size()) {usage("--node needs a fully qualified name, /ns/name");}
  Entities e;
  e.name = fqn.substr(slash + 1);
  e.ns = slash == 0 ? "/" : fqn.substr(0, slash);
  return e;
}

std::vector<std::string> split(const std::string & s)
{
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) {
    out.push_back(part);
  }
  return out;
}

[[noreturn]] void usage(const std::string & why)
{
  std::fprintf(stderr, "pulse_node: %s (see the comment at the top of pulse_node.cpp)\n", why.c_str());
  std::exit(2);
}

Options parse(const std::vector<std::string> & args)
{
  Options o;
  auto cur = [&o]() -> Entities & {return o.named.empty() ? o.base : o.named.back();};
  for (size_t i = 1; i < args.size(); i++) {
    const std::string & a = args[i];
    auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) {usage(a + " needs a value");}
        return args[++i];
      };
    if (a == "--name") {o.name = value();} else if (a == "--namespace") {o.ns = value();} else if (a == "--truth") {
      o.truth = value();
    } else if (a == "--nodes") {o.nodes = std::stoi(value());} else if (a == "--multi") {
      o.threads = std::stoi(value());
    } else if (a == "--depth") {o.depth = std::stoi(value());} else if (a == "--duration") {
      o.duration = std::stod(value());
    } else if (a == "--stamps") {o.stamps = true;} else if (a == "--intra") {o.intra = true;} else if (a == "--reentrant") {o.reentrant = true;} else if (a == "--best-effort") {o.best_effort = true;} else if (
      a == "--exit-when-sent")
    {
      o.exit_when_sent = true;
    } else if (a == "--node") {o.named.push_back(named_node(value()));} else if (a == "--pub") {
      cur().pubs.push_back(split(value()));
    } else if (a == "--sub") {cur().subs.push_back(split(value()));} else if (a == "--relay") {
      cur().relays.push_back(split(value()));
    } else if (a == "--sample") {
      cur().samplers.push_back(split(value()));
    } else if (a == "--timer") {
      cur().timers.push_back(split(value()));
    } else if (a == "--server") {cur().servers.push_back(split(value()));} else if (a == "--client") {
      cur().clients.push_back(split(value()));
    } else if (a == "--action-server") {cur().action_servers.push_back(split(value()));} else if (
      a == "--action-client")
    {
      cur().action_clients.push_back(split(value()));
    } else {
      usage("unknown argument " + a);
    }
  }
  return o;
}

double field(const std::vector<std::string> & f, size_t i, double dflt)
{
  return f.size() > i && !f[i].empty() ? std::stod(f[i]) : dflt;
}

std::chrono::nanoseconds period_of(double hz)
{
  if (hz <= 0) {usage("a rate must be positive");}
  return std::chrono::nanoseconds(static_cast<int64_t>(1e9 / hz));
}

// The callback's own work: a busy loop, so its duration is CPU the executor spends.
void work(double ms)
{
  int64_t until = now_ns() + static_cast<int64_t>(ms * 1e6);
  while (now_ns() < until) {
  }
}

// Something COUNT-limited that finishes; the document is written when all have.
struct Finish
{
  std::atomic<int> pending{0};
  std::function<void()> all_done;
  void one_done()
  {
    if (--pending == 0 && all_done) {all_done();}
  }
};

class TestNode : public rclcpp::Node
{
public:
  TestNode(
    const std::string & name, const std::string & ns, const Entities & has, const Options & o,
    pulse_testnodes::Truth & truth, Finish & finish)
  : rclcpp::Node(name, ns, rclcpp::NodeOptions().use_intra_process_comms(o.intra)), truth_(truth), finish_(finish),
    stamps_(o.stamps)
  {
    rclcpp::QoS qos(o.depth);
    if (o.best_effort) {qos.best_effort();}
    if (o.reentrant) {group_ = create_callback_group(rclcpp::CallbackGroupType::Reentrant);}
    for (auto & f : has.pubs) {add_publisher(f, qos);}
    for (auto & f : has.subs) {add_subscription(f, qos);}
    for (auto & f : has.relays) {add_relay(f, qos);}
    for (auto & f : has.samplers) {add_sampler(f, qos);}
    for (auto & f : has.timers) {add_timer(f);}
    for (auto & f : has.servers) {add_server(f);}
    for (auto & f : has.clients) {add_client(f, o.exit_when_sent);}
    for (auto & f : has.action_servers) {add_action_server(f);}
    for (auto & f : has.action_clients) {add_action_client(f);}
  }

  // Stops every publisher and client: no publish races the context's shutdown.
  void stop()
  {
    for (auto & t : stoppable_) {t->cancel();}
  }

private:
  void add_publisher(const std::vector<std::string> & f, const rclcpp::QoS & qos)
  {
    if (f.size() > 4 && f[4] == "int32") {
      add_int_publisher(f, qos);
      return;
    }
    if (f.size() > 4 && f[4] == "varstring") {
      add_sized_publisher<std_msgs::msg::String>(f, qos, [](std_msgs::msg::String & m, size_t max, uint64_t n) {
          m.data.assign(max - (n * 7919) % (max / 25 + 1), 'v');  // a length within 4 % below max, scattered
        });
      return;
    }
#ifdef PULSE_HAVE_SENSOR_MSGS
    if (f.size() > 4 && f[4] == "image") {
      add_sized_publisher<sensor_msgs::msg::Image>(f, qos, [](sensor_msgs::msg::Image & m, size_t max, uint64_t n) {
          m.header.frame_id = n % 2 ? "camera" : "camera_optical";
          m.encoding = "rgb8";
          m.width = static_cast<uint32_t>(std::max<size_t>(1, max / 3 / 120));
          m.height = 120 - static_cast<uint32_t>(n % 2);  // a frame cropped by a row every other one
          m.step = 3 * m.width;
          m.data.assign(static_cast<size_t>(m.step) * m.height, static_cast<uint8_t>(n));
        });
      return;
    }
    if (f.size() > 4 && f[4] == "cloud") {
      add_sized_publisher<sensor_msgs::msg::PointCloud2>(f, qos, [](sensor_msgs::msg::PointCloud2 & m, size_t max, uint64_t n) {
          m.header.frame_id = "lidar";
          for (const char * name : {"x", "y", "z", "intensity"}) {
            sensor_msgs::msg::PointField pf;
            pf.name = name;
            pf.offset = static_cast<uint32_t>(4 * m.fields.size());
            pf.datatype = sensor_msgs::msg::PointField::FLOAT32;
            pf.count = 1;
            m.fields.push_back(pf);
          }
          m.point_step = 16;
          m.width = static_cast<uint32_t>(std::max<size_t>(1, max / 16 - n % 64));  // returns vary
          m.height = 1;
          m.row_step = m.point_step * m.width;
          m.data.assign(m.row_step, 0);
          m.is_dense = true;
        });
      return;
    }
#endif
    bool stamped = f.size() > 4 && f[4] == "stamped";
    if (f.size() > 4 && f[4] != "string" && !stamped) {usage("a publisher's type is string, int32, stamped, varstring, image or cloud");}
    auto pub = create_publisher<std_msgs::msg::String>(f.at(0), qos);
    Endpoint & e = truth_.add("publisher", get_fully_qualified_name(), pub->get_topic_name());
    e.keep_stamps = stamps_;
    size_t bytes = static_cast<size_t>(field(f, 2, 16));
    uint64_t count = static_cast<uint64_t>(field(f, 3, 0));
    if (count > 0) {finish_.pending++;}
    if (stamped) {bytes = std::max(bytes, kStampsLen);}
    size_t wire = serialized_size<std_msgs::msg::String>([bytes](auto & m) {m.data.assign(bytes, 'x');});
    auto timer = std::make_shared<rclcpp::TimerBase::SharedPtr>();
    *timer = create_wall_timer(period_of(field(f, 1, 10)), [this, pub, &e, bytes, count, timer, wire, stamped]() {
          std_msgs::msg::String msg;
          msg.data.assign(bytes, 'x');
          if (stamped) {
            int64_t t = pulse_testnodes::real_ns();
            write_stamps(msg.data, t, t);
          }
          pub->publish(msg);
          e.counted();
          e.bytes += wire;
          if (count > 0 && e.count == count) {
            (*timer)->cancel();
            finish_.one_done();
          }
        }, group_);
    stoppable_.push_back(*timer);
  }

  // A publisher whose messages change size (fill sets message n of at most
  // about BYTES): each message is serialized by rclcpp for the truth, off
  // nothing but the test's own time.
  template<typename Msg, typename Fill>
  void add_sized_publisher(const std::vector<std::string> & f, const rclcpp::QoS & qos, Fill fill)
  {
    auto pub = create_publisher<Msg>(f.at(0), qos);
    Endpoint & e = truth_.add("publisher", get_fully_qualified_name(), pub->get_topic_name());
    size_t max = static_cast<size_t>(std::max(1.0, field(f, 2, 1000)));
    uint64_t count = static_cast<uint64_t>(field(f, 3, 0));
    if (count > 0) {finish_.pending++;}
    auto timer = std::make_shared<rclcpp::TimerBase::SharedPtr>();
    *timer = create_wall_timer(period_of(field(f, 1, 10)), [this, pub, &e, max, count, timer, fill]() {
          Msg msg;
          fill(msg, max, e.count.load());
          rclcpp::SerializedMessage out;
          rclcpp::Serialization<Msg>().serialize_message(&msg, &out);
          pub->publish(msg);
          e.counted();
          e.bytes += out.size();
          if (count > 0 && e.count == count) {
            (*timer)->cancel();
            finish_.one_done();
          }
        }, group_);
    stoppable_.push_back(*timer);
  }

  // std_msgs/Int32, for a subscription of the same name and another type.
  void add_int_publisher(const std::vector<std::string> & f, const rclcpp::QoS & qos)
  {
    auto pub = create_publisher<std_msgs::msg::Int32>(f.at(0), qos);
    Endpoint & e = truth_.add("publisher", get_fully_qualified_name(), pub->get_topic_name());
    size_t wire = serialized_size<std_msgs::msg::Int32>([](auto &) {});
    stoppable_.push_back(create_wall_timer(period_of(field(f, 1, 10)), [pub, &e, wire]() {
        std_msgs::msg::Int32 msg;
        msg.data = static_cast<int32_t>(e.count.load());
        pub->publish(msg);
        e.counted();
        e.bytes += wire;
      }));
  }

  // A message's serialized (CDR) size, encapsulation included: what the
  // publishers' truth counts as bytes sent. Their messages keep one size, so
  // it is measured once, off the publishing path.
  template<typename Msg, typename Fill>
  static size_t serialized_size(Fill fill)
  {
    Msg msg;
    fill(msg);
    rclcpp::SerializedMessage out;
    rclcpp::Serialization<Msg>().serialize_message(&msg, &out);
    return out.size();
  }

  void add_subscription(const std::vector<std::string> & f, const rclcpp::QoS & qos)
  {
    const std::string type = f.size() > 2 ? f[2] : "string";
    if (type == "string") {
      add_typed_subscription<std_msgs::msg::String>(f, qos);
    } else if (type == "int32") {
      add_typed_subscription<std_msgs::msg::Int32>(f, qos);
#ifdef PULSE_HAVE_SENSOR_MSGS
    } else if (type == "image") {
      add_typed_subscription<sensor_msgs::msg::Image>(f, qos);
    } else if (type == "cloud") {
      add_typed_subscription<sensor_msgs::msg::PointCloud2>(f, qos);
#endif
    } else {
      usage("a subscription's type is string, int32, image or cloud");
    }
  }

  template<typename Msg>
  void add_typed_subscription(const std::vector<std::string> & f, const rclcpp::QoS & qos)
  {
    double ms = field(f, 1, 0);
    Endpoint & e = truth_.add("subscription", get_fully_qualified_name(), "");
    e.keep_stamps = stamps_;
    rclcpp::SubscriptionOptions options;
    options.callback_group = group_;
    auto sub = create_subscription<Msg>(f.at(0), qos,
        [&e, ms](typename Msg::ConstSharedPtr) {
          int64_t t0 = now_ns();
          e.counted();
          work(ms);
          e.callback.add(now_ns() - t0);
        }, options);
    e.name = sub->get_topic_name();
    subs_.push_back(sub);
  }

  // A chain's message starts with two realtime stamps, fixed width: when its
  // chain began and when this hop's publisher sent it.
  static constexpr size_t kStampsLen = 40;
  static void write_stamps(std::string & data, int64_t origin, int64_t sent)
  {
    char head[kStampsLen + 1];
    std::snprintf(head, sizeof head, "%019lld %019lld ", static_cast<long long>(origin), static_cast<long long>(sent));
    data.replace(0, kStampsLen, head, kStampsLen);
  }

  // A pipeline node: takes IN, works, publishes the same message on OUT with
  // its own send stamp; its truth is each message's age at that publish.
  void add_relay(const std::vector<std::string> & f, const rclcpp::QoS & qos)
  {
    double ms = field(f, 2, 0);
    Endpoint & in = truth_.add("subscription", get_fully_qualified_name(), "");
    auto pub = create_publisher<std_msgs::msg::String>(f.at(1), qos);
    Endpoint & out = truth_.add("publisher", get_fully_qualified_name(), pub->get_topic_name());
    rclcpp::SubscriptionOptions options;
    options.callback_group = group_;
    auto sub = create_subscription<std_msgs::msg::String>(f.at(0), qos,
        [&in, &out, pub, ms](std_msgs::msg::String::ConstSharedPtr msg) {
          int64_t t0 = now_ns();
          in.counted();
          long long origin = 0, sent = 0;
          bool chained = std::sscanf(msg->data.c_str(), "%lld %lld", &origin, &sent) == 2;
          work(ms);
          std_msgs::msg::String next = *msg;
          int64_t t = pulse_testnodes::real_ns();
          if (chained) {write_stamps(next.data, origin, t);}
          pub->publish(next);
          out.counted();
          if (chained) {out.aged(t - sent, t - origin);}
          in.callback.add(now_ns() - t0);
        }, options);
    in.name = sub->get_topic_name();
    subs_.push_back(sub);
  }

  // A node that samples: its subscription keeps the latest message's send
  // stamp and the first one's since the timer last published; its timer
  // publishes on OUT and keeps both ages at that publish.
  void add_sampler(const std::vector<std::string> & f, const rclcpp::QoS & qos)
  {
    Endpoint & in = truth_.add("subscription", get_fully_qualified_name(), "");
    auto pub = create_publisher<std_msgs::msg::String>(f.at(1), qos);
    Endpoint & out = truth_.add("publisher", get_fully_qualified_name(), pub->get_topic_name());
    auto latest = std::make_shared<std::atomic<int64_t>>(0), first = std::make_shared<std::atomic<int64_t>>(0);
    auto sub = create_subscription<std_msgs::msg::String>(f.at(0), qos,
        [&in, latest, first](std_msgs::msg::String::ConstSharedPtr msg) {
          in.counted();
          long long origin = 0, sent = 0;
          if (std::sscanf(msg->data.c_str(), "%lld %lld", &origin, &sent) == 2) {
            *latest = sent;
            int64_t none = 0;
            first->compare_exchange_strong(none, sent);
          }
        });
    in.name = sub->get_topic_name();
    subs_.push_back(sub);
    stoppable_.push_back(create_wall_timer(period_of(field(f, 2, 4)), [pub, &out, latest, first]() {
        std_msgs::msg::String msg;
        msg.data.assign(kStampsLen, 'x');
        int64_t t = pulse_testnodes::real_ns();
        write_stamps(msg.data, t, t);
        pub->publish(msg);
        out.counted();
        int64_t last = latest->load();
        if (last > 0) {
          int64_t f0 = first->exchange(0);
          out.sampled(t - last, t - (f0 > 0 ? f0 : last));
        }
      }));
  }

  void add_timer(const std::vector<std::string> & f)
  {
    auto period = period_of(field(f, 0, 10));
    double ms = field(f, 1, 0);
    Endpoint & e = truth_.add("timer", get_fully_qualified_name(), "");
    e.period_ns = period.count();
    auto timer = std::make_shared<rclcpp::TimerBase::SharedPtr>();
    // Its lateness against its own schedule: each call's scheduled time is
    // the next call time rcl set at the previous call (or at creation), read
    // back as now + time_until_trigger(); rcl skips whole periods after a
    // call later than one, so "period - time until the next" would not do.
    auto scheduled = std::make_shared<int64_t>(0);
    *timer = create_wall_timer(period, [&e, ms, timer, scheduled]() {
          int64_t t0 = now_ns();
          e.late.add(t0 - *scheduled);
          *scheduled = now_ns() + (*timer)->time_until_trigger().count();
          e.count++;
          work(ms);
          e.callback.add(now_ns() - t0);
        });
    *scheduled = now_ns() + (*timer)->time_until_trigger().count();
    timers_.push_back(*timer);
  }

  // Answers through rcl_send_response itself, so it knows which answers rcl
  // refused (Fast DDS: RCL_RET_TIMEOUT when the client has gone).
  void add_server(const std::vector<std::string> & f)
  {
    double ms = field(f, 1, 0);
    Endpoint & e = truth_.add("service", get_fully_qualified_name(), "");
    auto srv = create_service<AddTwoInts>(f.at(0),
        [&e, ms](std::shared_ptr<rclcpp::Service<AddTwoInts>> service, std::shared_ptr<rmw_request_id_t> header,
        std::shared_ptr<AddTwoInts::Request> req) {
          int64_t t0 = now_ns();
          e.count++;
          work(ms);
          AddTwoInts::Response res;
          res.sum = req->a + req->b;
          rcl_ret_t ret = rcl_send_response(service->get_service_handle().get(), header.get(), &res);
          if (ret != RCL_RET_OK) {
            rcl_reset_error();
            e.failed++;
            return;  // a refused answer's time (Fast DDS waits 100 ms first) is no handling time
          }
          e.callback.add(now_ns() - t0);
        });
    e.name = srv->get_service_name();
    services_.push_back(srv);
  }

  void add_client(const std::vector<std::string> & f, bool exit_when_sent)
  {
    auto client = create_client<AddTwoInts>(f.at(0));
    Endpoint & e = truth_.add("client", get_fully_qualified_name(), client->get_service_name());
    uint64_t count = static_cast<uint64_t>(field(f, 2, 0));
    if (count > 0) {finish_.pending++;}
    auto timer = std::make_shared<rclcpp::TimerBase::SharedPtr>();
    *timer = create_wall_timer(period_of(field(f, 1, 10)), [this, client, &e, count, timer, exit_when_sent]() {
          if (!client->service_is_ready()) {return;}
          auto req = std::make_shared<AddTwoInts::Request>();
          req->a = static_cast<int64_t>(e.count.load());
          req->b = 1;
          int64_t t0 = now_ns();
          client->async_send_request(req, [&e, t0](rclcpp::Client<AddTwoInts>::SharedFuture) {
            e.answered++;
            e.round_trip.add(now_ns() - t0);
          });
          e.count++;
          if (count > 0 && e.count == count) {
            (*timer)->cancel();
            if (exit_when_sent) {  // gone before its answers, as a client leaves: its DDS reader is deleted
              finish_.all_done();
              rclcpp::shutdown();
              return;
            }
            finish_.one_done();
          }
        });
    stoppable_.push_back(*timer);
    clients_.push_back(client);
  }

  void add_action_server(const std::vector<std::string> & f)
  {
    double ms = field(f, 1, 0);
    Endpoint & e = truth_.add("action_server", get_fully_qualified_name(), f.at(0));
    action_servers_.push_back(rclcpp_action::create_server<Fibonacci>(this, f.at(0),
      [&e](const rclcpp_action::GoalUUID &, std::shared_ptr<const Fibonacci::Goal>) {
        e.count++;
        return rclcpp_action::GoalResponse::ACCEPT_AND_EXECUTE;
      },
      [](std::shared_ptr<rclcpp_action::ServerGoalHandle<Fibonacci>>) {
        return rclcpp_action::CancelResponse::ACCEPT;
      },
      [&e, ms](std::shared_ptr<rclcpp_action::ServerGoalHandle<Fibonacci>> goal) {
        std::thread([&e, ms, goal]() {
          std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(ms * 1000)));
          auto result = std::make_shared<Fibonacci::Result>();
          result->sequence = {0, 1};
          goal->succeed(result);
          e.answered++;
        }).detach();
      }));
  }

  void add_action_client(const std::vector<std::string> & f)
  {
    auto client = rclcpp_action::create_client<Fibonacci>(this, f.at(0));
    Endpoint & e = truth_.add("action_client", get_fully_qualified_name(), f.at(0));
    uint64_t count = static_cast<uint64_t>(field(f, 2, 0));
    if (count > 0) {finish_.pending++;}
    auto timer = std::make_shared<rclcpp::TimerBase::SharedPtr>();
    *timer = create_wall_timer(period_of(field(f, 1, 1)), [this, client, &e, count, timer]() {
          if (!client->action_server_is_ready()) {return;}
          Fibonacci::Goal goal;
          goal.order = 2;
          rclcpp_action::Client<Fibonacci>::SendGoalOptions opts;
          int64_t t0 = now_ns();
          opts.result_callback = [&e, t0](const rclcpp_action::ClientGoalHandle<Fibonacci>::WrappedResult &) {
              e.answered++;
              e.round_trip.add(now_ns() - t0);
            };
          client->async_send_goal(goal, opts);
          e.count++;
          if (count > 0 && e.count == count) {
            (*timer)->cancel();
            finish_.one_done();
          }
        });
    stoppable_.push_back(*timer);
    action_clients_.push_back(client);
  }

  pulse_testnodes::Truth & truth_;
  Finish & finish_;
  rclcpp::CallbackGroup::SharedPtr group_;  // --reentrant; null: the node's default group
  bool stamps_;
  std::vector<rclcpp::TimerBase::SharedPtr> stoppable_, timers_;
  std::vector<rclcpp::SubscriptionBase::SharedPtr> subs_;
  std::vector<rclcpp::ServiceBase::SharedPtr> services_;
  std::vector<rclcpp::ClientBase::SharedPtr> clients_;
  std::vector<rclcpp_action::ServerBase::SharedPtr> action_servers_;
  std::vector<rclcpp_action::ClientBase::SharedPtr> action_clients_;
};

}  // namespace

int main(int argc, char ** argv)
{
  auto args = rclcpp::init_and_remove_ros_arguments(argc, argv);
  Options o = parse(args);
  pulse_testnodes::Truth truth;
  Finish finish;
  finish.all_done = [&]() {truth.write(o.truth, "rclcpp");};

  std::vector<std::shared_ptr<TestNode>> nodes;
  std::unique_ptr<rclcpp::Executor> exec;
  if (o.threads > 0) {
    exec = std::make_unique<rclcpp::executors::MultiThreadedExecutor>(rclcpp::ExecutorOptions(), o.threads);
  } else {
    exec = std::make_unique<rclcpp::executors::SingleThreadedExecutor>();
  }
  for (int i = 0; i < o.nodes && (o.named.empty() || !o.base.empty()); i++) {
    std::string name = o.nodes == 1 ? o.name : o.name + "_" + std::to_string(i);
    nodes.push_back(std::make_shared<TestNode>(name, o.ns, o.base, o, truth, finish));
    exec->add_node(nodes.back());
  }
  for (auto & n : o.named) {
    nodes.push_back(std::make_shared<TestNode>(n.name, n.ns, n, o, truth, finish));
    exec->add_node(nodes.back());
  }
  std::thread spinner([&exec]() {exec->spin();});
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.duration);
  while (rclcpp::ok() && (o.duration <= 0 || std::chrono::steady_clock::now() < end)) {
    std::this_thread::sleep_for(20ms);
  }
  for (auto & n : nodes) {n->stop();}
  if (rclcpp::ok()) {
    std::this_thread::sleep_for(500ms);  // answers and messages in flight arrive
  }
  exec->cancel();
  spinner.join();
  for (auto & n : nodes) {n->stop();}
  truth.write(o.truth, "rclcpp");
  exec.reset();
  nodes.clear();
  rclcpp::shutdown();
  return 0;
}
