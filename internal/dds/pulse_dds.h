/* The few CycloneDDS calls pulse bridge needs, in C so that cgo only passes
 * flat arrays. Types come from bridge/idl/ros2_msgs.idl through idlc. */
#ifndef PULSE_DDS_H
#define PULSE_DDS_H

#include <stddef.h>
#include <stdint.h>

#include "dds/dds.h"
#include "rmw_dds_common.h"
#include "ros2_msgs.h"

typedef struct pd_bridge {
    dds_entity_t domain; /* 0 when the default (CYCLONEDDS_URI) configuration is used */
    dds_entity_t participant;
    dds_entity_t statistics;     /* writer on rt/statistics */
    dds_entity_t diagnostics;    /* writer on rt/diagnostics */
    dds_entity_t discovery;      /* writer on ros_discovery_info */
    uint32_t gid_size;           /* 24 (Humble) or 16 (Iron and later) */
} pd_bridge;

/* The ROS node the bridge is, as ros_discovery_info names it. */
typedef struct pd_node {
    const char *name_space; /* absolute, "/" for none */
    const char *name;
} pd_node;

/* Opens domain `domain_id` as the ROS node `node`, whose distro's rmw_gid_t
 * holds gid_size bytes (24 on Humble, 16 from Iron on); `config` is
 * CycloneDDS XML or NULL. 0 on success, else a negative DDS return code and
 * a message in err. */
int pd_open(pd_bridge *b, uint32_t domain_id, const char *config, const pd_node *node, uint32_t gid_size, char *err,
            size_t errlen);
void pd_close(pd_bridge *b);

/* Publishes one ParticipantEntitiesInfo on ros_discovery_info: participant
 * `gid` holds one node that owns `nwriters` writers and no reader (GUIDs of
 * 16 bytes, zero-padded to the GID size as rmw_cyclonedds does).
 * pd_open publishes the bridge's own; the golden test publishes fixed ones. */
int pd_write_entities_info(const pd_bridge *b, const uint8_t gid[16], const pd_node *node, uint32_t nwriters,
                           const uint8_t (*writers)[16]);

/* One MetricsMessage. */
int pd_write_metrics(const pd_bridge *b, const char *source, const char *metric, const char *unit,
                     int32_t start_sec, uint32_t start_nsec, int32_t stop_sec, uint32_t stop_nsec,
                     const uint8_t *types, const double *data, uint32_t npoints);

/* One DiagnosticArray: n statuses; status i has nvalues[i] key-values, laid
 * out one after another in keys/values. */
int pd_write_diagnostics(const pd_bridge *b, int32_t sec, uint32_t nsec, const char *frame_id, uint32_t n,
                         const uint8_t *levels, char **names, char **messages, char **hardware_ids,
                         const uint32_t *nvalues, char **keys, char **values);

/* Matched readers of each writer (for tests and logs). */
int pd_matched(const pd_bridge *b, uint32_t *statistics, uint32_t *diagnostics);

#endif
