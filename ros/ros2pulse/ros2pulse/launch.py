"""PulseProbe: every node a launch file starts after it runs under ros2_pulse's probe.

Python launch files::

    from ros2pulse.launch import PulseProbe
    LaunchDescription([PulseProbe(), Node(package='demo_nodes_cpp', executable='talker'), ...])

XML (``<pulse_probe/>``) and YAML (``- pulse_probe: {}``) launch files too.

It sets what ``pulse env`` prints (LD_PRELOAD with the probe first, and
ROS_PULSE_DIR) in the launch's environment, which every process started
after it inherits. ``ros2 launch`` itself stays unprobed: the probe skips
ROS's own tooling. Unlike ``--launch-prefix``, a node's own ``prefix=``
(gdb, valgrind) keeps the probe; a node whose ``additional_env`` or ``env``
sets LD_PRELOAD replaces it (``pulse doctor`` names such a node).
Design note 0034.
"""

from launch.action import Action
from launch.actions import SetEnvironmentVariable
from launch.frontend import expose_action
import launch.logging

from ros2pulse import binary


@expose_action('pulse_probe')
class PulseProbe(Action):
    """Runs the nodes launched after it under the probe (the pulse binary says where it is)."""

    def __init__(self, *, pulse=None, **kwargs):
        super().__init__(**kwargs)
        self.__pulse = pulse  # a pulse binary; default $PULSE_BIN, else pulse on PATH

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        pulse = entity.get_attr('pulse', optional=True)
        if pulse is not None:
            kwargs['pulse'] = pulse
        return cls, kwargs

    def execute(self, context):
        env = binary.environment(self.__pulse)
        if env is None or 'LD_PRELOAD' not in env:
            launch.logging.get_logger('ros2pulse').warning(
                'PulseProbe: no pulse binary found (install the ros2-pulse package, or set PULSE_BIN): '
                'the nodes run without the probe')
            return None
        env['LD_PRELOAD'] = binary.preload(env['LD_PRELOAD'], context.environment.get('LD_PRELOAD'))
        return [SetEnvironmentVariable(name, value) for name, value in env.items()]
