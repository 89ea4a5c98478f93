#!/usr/bin/env python3
"""pulse_node.py: the rclpy twin of pulse_node (same flags, same ground truth).

    --name N --nodes K --namespace NS --multi THREADS --best-effort --depth D
    --pub TOPIC,HZ[,BYTES[,COUNT]]   --sub TOPIC[,WORK_MS]   --timer HZ[,WORK_MS]
    --server SERVICE[,WORK_MS]        --client SERVICE,HZ[,COUNT]   --exit-when-sent
    --action-server ACTION[,WORK_MS]  --action-client ACTION,HZ[,COUNT]
    --spin-once   (a spin_once loop instead of an executor's spin)
    --node FQN    a node of its own: the entity flags after it are its own (as pulse_node)
    --duration S  --truth FILE

A service's refused answers are not known here (rclpy sends the response
after the callback returns): its "failed" is -1. Run with Debian's
/usr/bin/python3, the interpreter rclpy was built for.
"""
import argparse
import json
import os
import resource
import sys
import threading
import time

import rclpy
from rclpy.serialization import serialize_message
from example_interfaces.action import Fibonacci
from example_interfaces.srv import AddTwoInts
from rclpy.action import ActionClient, ActionServer, GoalResponse
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String


class Durations:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = self.sum_ns = self.max_ns = 0

    def add(self, ns):
        ns = max(ns, 0)
        with self.lock:
            self.n += 1
            self.sum_ns += ns
            self.max_ns = max(self.max_ns, ns)

    def doc(self):
        return {'n': self.n, 'sum_ns': self.sum_ns, 'max_ns': self.max_ns}


class Endpoint:
    def __init__(self, kind, node, name):
        self.kind, self.node, self.name = kind, node, name
        self.period_ns = self.count = self.bytes = self.answered = self.failed = 0
        self.first_ns = self.last_ns = 0
        self.callback, self.late, self.round_trip = Durations(), Durations(), Durations()

    def doc(self):
        return {'kind': self.kind, 'node': self.node, 'name': self.name, 'period_ns': self.period_ns,
                'count': self.count, 'bytes': self.bytes, 'answered': self.answered, 'failed': self.failed,
                'first_ns': self.first_ns, 'last_ns': self.last_ns,
                'callback': self.callback.doc(), 'late': self.late.doc(), 'round_trip': self.round_trip.doc()}


    def counted(self):
        """One message published or received, now."""
        t = time.monotonic_ns()
        self.first_ns = self.first_ns or t
        self.last_ns = t
        self.count += 1


class Truth:
    def __init__(self, path):
        self.path, self.endpoints, self.lock = path, [], threading.Lock()

    def add(self, kind, node, name):
        e = Endpoint(kind, node, name)
        with self.lock:
            self.endpoints.append(e)
        return e

    def write(self):
        if not self.path:
            return
        with self.lock:
            ru = resource.getrusage(resource.RUSAGE_SELF)  # the process's own CPU, for the benchmarks
            doc = {'pid': os.getpid(), 'lang': 'rclpy', 'cpu_s': ru.ru_utime + ru.ru_stime, 'endpoints': [e.doc() for e in self.endpoints]}
        with open(self.path + '.tmp', 'w') as f:
            json.dump(doc, f)
        os.replace(self.path + '.tmp', self.path)


def work(ms):
    until = time.monotonic_ns() + int(ms * 1e6)
    while time.monotonic_ns() < until:
        pass


def fields(spec, n):
    parts = spec.split(',')
    return parts + [''] * (n - len(parts))


def num(s, default):
    return float(s) if s else default


class TestNode(Node):
    def __init__(self, name, namespace, has, o, truth, finish):
        super().__init__(name, namespace=namespace or None)
        self.truth, self.finish, self.stoppable = truth, finish, []
        qos = QoSProfile(depth=o.depth)
        if o.best_effort:
            qos.reliability = ReliabilityPolicy.BEST_EFFORT
        fq = self.get_fully_qualified_name()
        for spec in has.pub:
            self.add_publisher(fq, spec, qos)
        for spec in has.sub:
            topic, ms = fields(spec, 2)[:2]
            e = truth.add('subscription', fq, '')
            sub = self.create_subscription(String, topic, lambda m, e=e, ms=num(ms, 0): self.on_message(e, ms), qos)
            e.name = sub.topic_name
        for spec in has.timer:
            self.add_timer(fq, spec)
        for spec in has.server:
            name, ms = fields(spec, 2)[:2]
            e = truth.add('service', fq, '')
            e.failed = -1
            srv = self.create_service(AddTwoInts, name, lambda req, res, e=e, ms=num(ms, 0): self.on_request(e, ms, req, res))
            e.name = srv.srv_name
        for spec in has.client:
            self.add_client(fq, spec, o.exit_when_sent)
        for spec in has.action_server:
            self.add_action_server(fq, spec)
        for spec in has.action_client:
            self.add_action_client(fq, spec)

    def add_action_server(self, fq, spec):
        name, ms = fields(spec, 2)[:2]
        e = self.truth.add('action_server', fq, name)

        def goal_callback(_goal):
            e.count += 1
            return GoalResponse.ACCEPT

        def execute(goal):
            time.sleep(num(ms, 0) / 1000)
            goal.succeed()
            e.answered += 1
            return Fibonacci.Result(sequence=[0, 1])
        self.action_server = ActionServer(self, Fibonacci, name, execute, goal_callback=goal_callback)

    def add_action_client(self, fq, spec):
        name, hz, count = fields(spec, 3)[:3]
        client = ActionClient(self, Fibonacci, name)
        e = self.truth.add('action_client', fq, name)
        count = int(num(count, 0))
        if count > 0:
            self.finish.pending += 1

        def result_done(_future, t0):
            e.answered += 1
            e.round_trip.add(time.monotonic_ns() - t0)

        def accepted(future, t0):
            handle = future.result()
            if handle.accepted:
                handle.get_result_async().add_done_callback(lambda f: result_done(f, t0))

        def tick():
            if not client.server_is_ready() or (count > 0 and e.count >= count):
                return
            t0 = time.monotonic_ns()
            client.send_goal_async(Fibonacci.Goal(order=2)).add_done_callback(lambda f: accepted(f, t0))
            e.count += 1
            if count > 0 and e.count == count:
                timer.cancel()
                self.finish.one_done()
        timer = self.create_timer(1.0 / num(hz, 1), tick)
        self.stoppable.append(timer)
        self.action_client = client

    def add_publisher(self, fq, spec, qos):
        topic, hz, size, count = fields(spec, 4)[:4]
        pub = self.create_publisher(String, topic, qos)
        e = self.truth.add('publisher', fq, pub.topic_name)
        size, count = int(num(size, 16)), int(num(count, 0))
        if count > 0:
            self.finish.pending += 1
        msg = String(data='x' * size)
        wire = len(serialize_message(msg))  # its serialized (CDR) size, encapsulation included

        def tick():
            if count > 0 and e.count >= count:
                return
            pub.publish(msg)
            e.counted()
            e.bytes += wire
            if count > 0 and e.count == count:
                timer.cancel()
                self.finish.one_done()
        timer = self.create_timer(1.0 / num(hz, 10), tick)
        self.stoppable.append(timer)

    def on_message(self, e, ms):
        t0 = time.monotonic_ns()
        e.counted()
        work(ms)
        e.callback.add(time.monotonic_ns() - t0)

    def add_timer(self, fq, spec):
        hz, ms = fields(spec, 2)[:2]
        period_ns = int(1e9 / num(hz, 10))
        e = self.truth.add('timer', fq, '')
        e.period_ns = period_ns

        # Each call's scheduled time is the next call time rcl set at the
        # previous call (or at creation); rcl skips whole periods after a late call.
        scheduled = [0]

        def tick():
            t0 = time.monotonic_ns()
            e.late.add(t0 - scheduled[0])
            scheduled[0] = time.monotonic_ns() + timer.time_until_next_call()
            e.count += 1
            work(num(ms, 0))
            e.callback.add(time.monotonic_ns() - t0)
        timer = self.create_timer(period_ns / 1e9, tick)
        scheduled[0] = time.monotonic_ns() + timer.time_until_next_call()

    def on_request(self, e, ms, req, res):
        t0 = time.monotonic_ns()
        e.count += 1
        work(ms)
        res.sum = req.a + req.b
        e.callback.add(time.monotonic_ns() - t0)
        return res

    def add_client(self, fq, spec, exit_when_sent):
        name, hz, count = fields(spec, 3)[:3]
        client = self.create_client(AddTwoInts, name)
        e = self.truth.add('client', fq, client.srv_name)
        count = int(num(count, 0))
        if count > 0:
            self.finish.pending += 1

        def answered(_future, t0):
            e.answered += 1
            e.round_trip.add(time.monotonic_ns() - t0)

        def tick():
            if not client.service_is_ready() or (count > 0 and e.count >= count):
                return
            t0 = time.monotonic_ns()
            future = client.call_async(AddTwoInts.Request(a=e.count, b=1))
            future.add_done_callback(lambda f, t0=t0: answered(f, t0))
            e.count += 1
            if count > 0 and e.count == count:
                timer.cancel()
                if exit_when_sent:  # gone before its answers, as a client leaves
                    self.truth.write()
                    rclpy.try_shutdown()
                    return
                self.finish.one_done()
        timer = self.create_timer(1.0 / num(hz, 10), tick)
        self.stoppable.append(timer)

    def stop(self):
        if not rclpy.ok():
            return  # shut down already: its timers went with the context
        for t in self.stoppable:
            t.cancel()


class Finish:
    def __init__(self, truth):
        self.pending, self.truth, self.lock = 0, truth, threading.Lock()

    def one_done(self):
        with self.lock:
            self.pending -= 1
            if self.pending == 0:
                self.truth.write()


def main():
    args = rclpy.utilities.remove_ros_args(sys.argv)
    p = argparse.ArgumentParser(prog='pulse_node.py')
    p.add_argument('--name', default='pulse_node_py')
    p.add_argument('--namespace', default='')
    p.add_argument('--nodes', type=int, default=1)
    p.add_argument('--multi', type=int, default=0)
    p.add_argument('--depth', type=int, default=10)
    p.add_argument('--best-effort', action='store_true')
    p.add_argument('--exit-when-sent', action='store_true')
    p.add_argument('--spin-once', action='store_true')
    p.add_argument('--duration', type=float, default=0)
    p.add_argument('--truth', default='')
    entity = argparse.ArgumentParser(prog='pulse_node.py --node FQN')
    for parser in (p, entity):
        for flag in ('pub', 'sub', 'timer', 'server', 'client', 'action-server', 'action-client'):
            parser.add_argument('--' + flag, action='append', default=[])
    # --node FQN starts a node of its own: split the arguments at each.
    # Process-wide flags (--duration, --multi, ...) may come anywhere.
    argv = args[1:]
    first = argv.index('--node') if '--node' in argv else len(argv)
    named, rest, process_wide = [], argv[first:], []
    while rest:
        if rest[0] != '--node' or len(rest) < 2 or not rest[1].startswith('/'):
            p.error('--node needs a fully qualified name, /ns/name')
        end = rest.index('--node', 2) if '--node' in rest[2:] else len(rest)
        fqn, (has, more) = rest[1], entity.parse_known_args(rest[2:end])
        ns, _, has.name = fqn.rpartition('/')
        has.namespace = ns or '/'
        named.append(has)
        process_wide += more
        rest = rest[end:]
    o = p.parse_args(argv[:first] + process_wide)

    rclpy.init()
    truth = Truth(o.truth)
    finish = Finish(truth)
    base = any(getattr(o, k) for k in ('pub', 'sub', 'timer', 'server', 'client', 'action_server', 'action_client'))
    nodes = [TestNode(o.name if o.nodes == 1 else '%s_%d' % (o.name, i), o.namespace, o, o, truth, finish)
             for i in range(o.nodes) if base or not named]
    nodes += [TestNode(h.name, h.namespace, h, o, truth, finish) for h in named]
    executor = MultiThreadedExecutor(num_threads=o.multi) if o.multi > 0 else SingleThreadedExecutor()
    for n in nodes:
        executor.add_node(n)
    end = time.monotonic() + o.duration if o.duration > 0 else float('inf')
    try:
        while rclpy.ok() and time.monotonic() < end:
            if o.spin_once:
                rclpy.spin_once(nodes[0], timeout_sec=0.05)
            else:
                executor.spin_once(timeout_sec=0.05)
        for n in nodes:
            n.stop()
        drain = time.monotonic() + 0.5  # answers and messages in flight arrive
        while rclpy.ok() and time.monotonic() < drain:
            try:
                executor.spin_once(timeout_sec=0.05)
            except Exception as e:  # a timer stopped after the wait that found it ready (rclpy raises)
                if 'timer is canceled' not in str(e):
                    raise
    except KeyboardInterrupt:
        for n in nodes:
            n.stop()
    truth.write()
    for n in nodes:
        n.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
