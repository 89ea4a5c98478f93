"""The launch test's robot (internal/realros/launch_test.go).

An rclcpp talker and an rclpy listener (pulse_node, pulse_node.py), and with
components:=true a component container holding two PulseComponents (a
talker and a listener in one process). Each writes its ground truth into
truth_dir. probe:=true puts ros2pulse's PulseProbe first, so that every node
runs under the probe without LD_PRELOAD anywhere else; sabotage:=true gives
the listener its own LD_PRELOAD (additional_env), which replaces the probe.
"""
import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def robot(context):
    truth = LaunchConfiguration('truth_dir').perform(context)
    count = LaunchConfiguration('count').perform(context)
    actions = []
    if LaunchConfiguration('probe').perform(context) == 'true':
        from ros2pulse.launch import PulseProbe
        actions.append(PulseProbe())
    actions.append(Node(package='pulse_testnodes', executable='pulse_node', name='launch_talker', arguments=[
        '--name', 'launch_talker', '--pub', f'/launch/chatter,50,64,{count}', '--duration', '60',
        '--truth', os.path.join(truth, 'launch_talker.json')]))
    listener_env = {'LD_PRELOAD': 'libm.so.6'} if LaunchConfiguration('sabotage').perform(context) == 'true' else None
    actions.append(Node(package='pulse_testnodes', executable='pulse_node.py', name='launch_listener', arguments=[
        '--name', 'launch_listener', '--sub', '/launch/chatter', '--duration', '60',
        '--truth', os.path.join(truth, 'launch_listener.json')], additional_env=listener_env))
    if LaunchConfiguration('components').perform(context) == 'true':
        from launch_ros.actions import ComposableNodeContainer
        from launch_ros.descriptions import ComposableNode
        actions.append(ComposableNodeContainer(
            name='pulse_container', namespace='', package='rclcpp_components', executable='component_container',
            composable_node_descriptions=[
                ComposableNode(package='pulse_testnodes', plugin='pulse_testnodes::PulseComponent', name='comp_talker',
                               parameters=[{'pub': '/comp/chatter', 'hz': 50.0, 'count': int(count),
                                            'truth': os.path.join(truth, 'comp_talker.json')}]),
                ComposableNode(package='pulse_testnodes', plugin='pulse_testnodes::PulseComponent', name='comp_listener',
                               parameters=[{'sub': '/comp/chatter', 'truth': os.path.join(truth, 'comp_listener.json')}]),
            ]))
    return actions


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('truth_dir'),
        DeclareLaunchArgument('count', default_value='150'),
        DeclareLaunchArgument('probe', default_value='false'),
        DeclareLaunchArgument('sabotage', default_value='false'),
        DeclareLaunchArgument('components', default_value='false'),
        OpaqueFunction(function=robot),
    ])
