# The ros2cli extension of ros2_pulse: `ros2 pulse <verb>` runs the pulse
# binary (design note 0034). One entry point per verb: a verb pulse gains is
# added here too (cmd/pulse's TestROS2CLIVerbs compares the two).
from setuptools import find_packages
from setuptools import setup

package_name = 'ros2pulse'
verbs = ['bench', 'bridge', 'check', 'cpu', 'demo', 'doctor', 'dump', 'env',
         'export', 'graph', 'record', 'run', 'top', 'web']

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/' + package_name, ['package.xml']),
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
    ],
    install_requires=['ros2cli'],
    zip_safe=True,
    maintainer='ros2_pulse developers',
    maintainer_email='dev@ros2-pulse.invalid',
    description='The pulse command for ROS 2 command line tools.',
    license='Apache-2.0',
    entry_points={
        'ros2cli.command': ['pulse = ros2pulse.command.pulse:PulseCommand'],
        'ros2cli.extension_point': ['ros2pulse.verb = ros2pulse.verb:VerbExtension'],
        'ros2pulse.verb': [f'{v} = ros2pulse.verb.verbs:{v.capitalize()}Verb' for v in verbs],
        # PulseProbe as <pulse_probe/> in XML and YAML launch files
        'launch.frontend.launch_extension': ['ros2pulse = ros2pulse.launch'],
    },
)
