// A real Fast DDS subscriber for the bridge's tests, standing where an
// rmw_fastrtps node stands: it reads rt/statistics and rt/diagnostics with
// types that fastddsgen generates from bridge/idl/ros2_msgs.idl, and prints
// every sample as one JSON line, in dds_sub's format.
//
// usage: fastdds_sub SECONDS PROFILE   (ROS_DOMAIN_ID from the environment)
//
// PROFILE is the participant an rmw_fastrtps node of that row builds, written
// out by hand from rmw_fastrtps_shared_cpp src/participant.cpp
// (create_participant) on the humble and jazzy branches:
//
//   default           Humble without ROS_LOCALHOST_ONLY, and Jazzy's SUBNET and
//                     SYSTEM_DEFAULT ranges without static peers: the default
//                     participant QoS (Fast DDS's multicast discovery, its
//                     builtin UDPv4 and shared-memory transports).
//   humble-localhost  Humble, ROS_LOCALHOST_ONLY=1: builtin transports off; a
//                     UDPv4 transport whose interface whitelist is 127.0.0.1,
//                     and a shared-memory transport.
//   jazzy-localhost   Jazzy, range LOCALHOST: no metatraffic multicast locator,
//                     one default unicast locator (so Fast DDS makes no
//                     multicast one), 127.0.0.1 as an initial peer.
//
// Every profile also gets what create_participant always sets: USER_DATA
// "enclave=/;", the participant name "/", and the builtin endpoints' history
// memory PREALLOCATED_WITH_REALLOC. Types carry no type object or type
// information (rmw_fastrtps_shared_cpp TypeSupport's constructor). Readers
// take the default ROS QoS: reliable, volatile, keep-last 10.
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "ros2_msgsPubSubTypes.h"

using namespace eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;

static void json_string(const std::string &s)
{
    std::putchar('"');
    for (unsigned char c : s) {
        if (c == '"' || c == '\\')
            std::printf("\\%c", c);
        else if (c < 0x20)
            std::printf("\\u%04x", c);
        else
            std::putchar(c);
    }
    std::putchar('"');
}

static void json_double(double d)
{
    if (std::isnan(d))
        std::printf("null");
    else
        std::printf("%.9g", d);
}

static void print(const statistics_msgs::msg::dds_::MetricsMessage_ &m)
{
    std::printf("{\"topic\":\"statistics\",\"source\":");
    json_string(m.measurement_source_name());
    std::printf(",\"metric\":");
    json_string(m.metrics_source());
    std::printf(",\"unit\":");
    json_string(m.unit());
    std::printf(",\"start\":[%d,%u],\"stop\":[%d,%u],\"points\":[", m.window_start().sec(), m.window_start().nanosec(),
                m.window_stop().sec(), m.window_stop().nanosec());
    for (size_t i = 0; i < m.statistics().size(); i++) {
        std::printf("%s[%u,", i ? "," : "", m.statistics()[i].data_type());
        json_double(m.statistics()[i].data());
        std::putchar(']');
    }
    std::printf("]}\n");
}

static void print(const diagnostic_msgs::msg::dds_::DiagnosticArray_ &a)
{
    std::printf("{\"topic\":\"diagnostics\",\"stamp\":[%d,%u],\"frame_id\":", a.header().stamp().sec(),
                a.header().stamp().nanosec());
    json_string(a.header().frame_id());
    std::printf(",\"status\":[");
    for (size_t i = 0; i < a.status().size(); i++) {
        const auto &s = a.status()[i];
        std::printf("%s{\"level\":%u,\"name\":", i ? "," : "", s.level());
        json_string(s.name());
        std::printf(",\"message\":");
        json_string(s.message());
        std::printf(",\"hardware_id\":");
        json_string(s.hardware_id());
        std::printf(",\"values\":{");
        for (size_t j = 0; j < s.values().size(); j++) {
            std::printf("%s", j ? "," : "");
            json_string(s.values()[j].key());
            std::putchar(':');
            json_string(s.values()[j].value());
        }
        std::printf("}}");
    }
    std::printf("]}\n");
}

// The participant QoS of PROFILE (see the table above); false if unknown.
static bool participant_qos(const std::string &profile, DomainParticipantQos &qos)
{
    DomainParticipantFactory::get_instance()->load_profiles();
    qos = DomainParticipantFactory::get_instance()->get_default_participant_qos();
    if (profile == "humble-localhost") {
        qos.transport().use_builtin_transports = false;
        auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
        udp->interfaceWhiteList.emplace_back("127.0.0.1");
        qos.transport().user_transports.push_back(udp);
        qos.transport().user_transports.push_back(std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>());
    } else if (profile == "jazzy-localhost") {
        qos.wire_protocol().builtin.metatrafficMulticastLocatorList.clear();
        qos.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(rtps::Locator_t());
        rtps::Locator_t peer;
        rtps::IPLocator::setIPv4(peer, "127.0.0.1");
        qos.wire_protocol().builtin.initialPeersList.push_back(peer);
    } else if (profile != "default") {
        return false;
    }
    static const char enclave[] = "enclave=/;";
    qos.user_data().resize(sizeof enclave);
    std::memcpy(qos.user_data().data(), enclave, sizeof enclave);
    qos.name("/");
    qos.wire_protocol().builtin.readerHistoryMemoryPolicy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    qos.wire_protocol().builtin.writerHistoryMemoryPolicy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    return true;
}

template <typename PubSubType>
static DataReader *make_reader(DomainParticipant *pp, Subscriber *sub, const char *topic)
{
    TypeSupport type(new PubSubType());
    type->auto_fill_type_object(false);
    type->auto_fill_type_information(false);
    if (type.register_type(pp) != ReturnCode_t::RETCODE_OK)
        return nullptr;
    Topic *t = pp->create_topic(topic, type.get_type_name(), TOPIC_QOS_DEFAULT);
    if (t == nullptr)
        return nullptr;
    DataReaderQos qos = sub->get_default_datareader_qos();
    qos.reliability().kind = RELIABLE_RELIABILITY_QOS;
    qos.durability().kind = VOLATILE_DURABILITY_QOS;
    qos.history().kind = KEEP_LAST_HISTORY_QOS;
    qos.history().depth = 10;
    qos.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    return sub->create_datareader(t, qos);
}

template <typename Msg>
static void drain(DataReader *r)
{
    Msg m;
    SampleInfo info;
    while (r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK)
        if (info.valid_data)
            print(m);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: fastdds_sub SECONDS default|humble-localhost|jazzy-localhost\n");
        return 2;
    }
    double seconds = std::atof(argv[1]);
    DomainParticipantQos pqos;
    if (!participant_qos(argv[2], pqos)) {
        std::fprintf(stderr, "fastdds_sub: unknown profile %s\n", argv[2]);
        return 2;
    }
    const char *d = std::getenv("ROS_DOMAIN_ID");
    DomainId_t domain = d && *d ? std::atoi(d) : 0;
    DomainParticipant *pp = DomainParticipantFactory::get_instance()->create_participant(domain, pqos);
    if (pp == nullptr) {
        std::fprintf(stderr, "fastdds_sub: cannot create the participant\n");
        return 1;
    }
    Subscriber *sub = pp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    DataReader *rs = make_reader<statistics_msgs::msg::dds_::MetricsMessage_PubSubType>(pp, sub, "rt/statistics");
    DataReader *rd = make_reader<diagnostic_msgs::msg::dds_::DiagnosticArray_PubSubType>(pp, sub, "rt/diagnostics");
    if (rs == nullptr || rd == nullptr) {
        std::fprintf(stderr, "fastdds_sub: cannot create the readers\n");
        return 1;
    }
    std::fprintf(stderr, "fastdds_sub: listening on domain %d, profile %s\n", (int)domain, argv[2]);
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        drain<statistics_msgs::msg::dds_::MetricsMessage_>(rs);
        drain<diagnostic_msgs::msg::dds_::DiagnosticArray_>(rd);
        std::fflush(stdout);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pp->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(pp);
    return 0;
}
