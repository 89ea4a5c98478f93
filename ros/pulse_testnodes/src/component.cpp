// PulseComponent: a composable node (rclcpp_components) for ros2_pulse's
// real-ROS lane, so that a test can load several into one component
// container, as robots run their drivers. Parameters: pub (a topic it
// publishes std_msgs/String on), hz, count (then it stops), sub (a topic it
// takes), truth (the JSON file of its ground truth, rewritten every half
// second and when it is destroyed).
#include <chrono>
#include <memory>
#include <string>

#include "rclcpp/rclcpp.hpp"
#include "rclcpp_components/register_node_macro.hpp"
#include "std_msgs/msg/string.hpp"
#include "truth.hpp"

namespace pulse_testnodes
{

class PulseComponent : public rclcpp::Node
{
public:
  explicit PulseComponent(const rclcpp::NodeOptions & options)
  : Node("pulse_component", options)
  {
    const auto fq = std::string(get_fully_qualified_name());
    truth_path_ = declare_parameter<std::string>("truth", "");
    const auto pub = declare_parameter<std::string>("pub", "");
    const auto sub = declare_parameter<std::string>("sub", "");
    const double hz = declare_parameter<double>("hz", 20.0);
    count_ = declare_parameter<int64_t>("count", 0);
    if (!pub.empty()) {
      publisher_ = create_publisher<std_msgs::msg::String>(pub, 10);
      sent_ = &truth_.add("publisher", fq, publisher_->get_topic_name());
      timer_ = create_wall_timer(std::chrono::duration<double>(1.0 / hz), [this]() {publish();});
    }
    if (!sub.empty()) {
      subscription_ = create_subscription<std_msgs::msg::String>(
        sub, 10, [this](std_msgs::msg::String::ConstSharedPtr) {received_->counted();});
      received_ = &truth_.add("subscription", fq, subscription_->get_topic_name());
    }
    writer_ = create_wall_timer(std::chrono::milliseconds(500), [this]() {write();});
  }

  ~PulseComponent() override {write();}

private:
  void publish()
  {
    if (count_ > 0 && sent_->count >= static_cast<uint64_t>(count_)) {
      return;
    }
    std_msgs::msg::String m;
    m.data = "pulse component message " + std::to_string(sent_->count.load());
    try {
      publisher_->publish(m);
    } catch (const std::exception &) {
      return;  // e.g. at shutdown: not sent, not counted
    }
    sent_->counted();
  }

  void write()
  {
    if (!truth_path_.empty()) {
      truth_.write(truth_path_, "rclcpp");
    }
  }

  Truth truth_;
  std::string truth_path_;
  int64_t count_ = 0;
  Endpoint * sent_ = nullptr;
  Endpoint * received_ = nullptr;
  rclcpp::Publisher<std_msgs::msg::String>::SharedPtr publisher_;
  rclcpp::Subscription<std_msgs::msg::String>::SharedPtr subscription_;
  rclcpp::TimerBase::SharedPtr timer_, writer_;
};

}  // namespace pulse_testnodes

RCLCPP_COMPONENTS_REGISTER_NODE(pulse_testnodes::PulseComponent)
