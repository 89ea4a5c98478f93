#!/usr/bin/env python3
"""pulse_bw.py: what `ros2 topic bw` measures, for the lanes that have no ros2cli.

    pulse_bw.py --topic /t --type pkg/msg/Type --duration S --out FILE

Subscribes as `ros2 topic bw` does (the message's serialized bytes, raw=True,
with the sensor-data QoS) and adds up len() of every message it takes. At
exit it writes {"pid", "received", "bytes"} to FILE.
"""
import argparse
import importlib
import json
import os
import sys
import time

import rclpy
from rclpy.qos import qos_profile_sensor_data


def message_type(name):
    pkg, kind, cls = name.split('/')
    return getattr(importlib.import_module('%s.%s' % (pkg, kind)), cls)


def main():
    args = rclpy.utilities.remove_ros_args(sys.argv)
    p = argparse.ArgumentParser(prog='pulse_bw.py')
    p.add_argument('--topic', required=True)
    p.add_argument('--type', required=True)
    p.add_argument('--duration', type=float, required=True)
    p.add_argument('--out', required=True)
    o = p.parse_args(args[1:])
    rclpy.init()
    node = rclpy.create_node('pulse_bw')
    seen = {'received': 0, 'bytes': 0}

    def taken(data):
        seen['received'] += 1
        seen['bytes'] += len(data)

    node.create_subscription(message_type(o.type), o.topic, taken, qos_profile_sensor_data, raw=True)
    end = time.monotonic() + o.duration
    while rclpy.ok() and time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    with open(o.out + '.tmp', 'w') as f:
        json.dump({'pid': os.getpid(), 'received': seen['received'], 'bytes': seen['bytes']}, f)
    os.replace(o.out + '.tmp', o.out)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
