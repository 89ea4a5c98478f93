#!/usr/bin/env python3
"""pulse_listen.py: an rclpy subscriber that keeps every message of one topic.

    pulse_listen.py --topic /statistics --type statistics_msgs/msg/MetricsMessage --duration S --out FILE

At exit it writes {"pid", "received", "messages": [each message as a dict]}
to FILE: what a real ROS node heard, for the tests of pulse bridge.
"""
import argparse
import importlib
import json
import math
import os
import sys
import time

import rclpy
from rclpy.qos import QoSProfile
from rosidl_runtime_py.convert import message_to_ordereddict


def message_type(name):
    pkg, kind, cls = name.split('/')
    return getattr(importlib.import_module('%s.%s' % (pkg, kind)), cls)


def finite(v):
    """v with every NaN or infinity replaced by None: JSON has no NaN."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    return v


def main():
    args = rclpy.utilities.remove_ros_args(sys.argv)
    p = argparse.ArgumentParser(prog='pulse_listen.py')
    p.add_argument('--topic', required=True)
    p.add_argument('--type', required=True)
    p.add_argument('--duration', type=float, required=True)
    p.add_argument('--out', required=True)
    o = p.parse_args(args[1:])
    rclpy.init()
    node = rclpy.create_node('pulse_listen')
    kept = []
    node.create_subscription(message_type(o.type), o.topic, lambda m: kept.append(finite(message_to_ordereddict(m))),
                             QoSProfile(depth=10))
    end = time.monotonic() + o.duration
    while rclpy.ok() and time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    with open(o.out + '.tmp', 'w') as f:
        json.dump({'pid': os.getpid(), 'received': len(kept), 'messages': kept}, f)
    os.replace(o.out + '.tmp', o.out)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
