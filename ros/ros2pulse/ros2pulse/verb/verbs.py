# One class per verb, named by setup.py's entry points. The first line of
# each docstring is what `ros2 pulse -h` shows where no pulse binary is found;
# with one, its own description replaces it.
from ros2pulse.verb import PulseVerb


class BenchVerb(PulseVerb):
    """Measure the probe's cost."""

    VERB = 'bench'


class BridgeVerb(PulseVerb):
    """Publish the machine's windows as /statistics and /diagnostics."""

    VERB = 'bridge'


class CheckVerb(PulseVerb):
    """Judge the machine or recorded logs against a spec (exit 0, 1 or 2)."""

    VERB = 'check'


class CpuVerb(PulseVerb):
    """Sample the CPU and memory of every ROS process as CSV."""

    VERB = 'cpu'


class DemoVerb(PulseVerb):
    """Run the built-in simulated robot under the probe."""

    VERB = 'demo'


class DoctorVerb(PulseVerb):
    """Check that the probe can load and list probed processes."""

    VERB = 'doctor'


class DumpVerb(PulseVerb):
    """Print every segment's raw counters as JSON lines."""

    VERB = 'dump'


class EnvVerb(PulseVerb):
    """Print the environment that preloads the probe."""

    VERB = 'env'


class ExportVerb(PulseVerb):
    """Serve the machine's counters to Prometheus."""

    VERB = 'export'


class GraphVerb(PulseVerb):
    """The live computation graph with rates and liveness."""

    VERB = 'graph'


class RecordVerb(PulseVerb):
    """Write a window of every probed process every period."""

    VERB = 'record'


class RunVerb(PulseVerb):
    """Run a command (e.g. ros2 launch) with the probe preloaded and summarise it."""

    VERB = 'run'


class TopVerb(PulseVerb):
    """Live dashboard of topic rates, nodes and warnings."""

    VERB = 'top'


class WebVerb(PulseVerb):
    """The live computation graph in a browser."""

    VERB = 'web'
