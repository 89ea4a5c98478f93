from ros2cli.plugin_system import PLUGIN_SYSTEM_VERSION
from ros2cli.plugin_system import satisfies_version

from ros2pulse import binary


class VerbExtension:
    """
    The extension point for 'pulse' verb extensions.

    The following properties must be defined:
    * `NAME` (will be set to the entry point name)

    The following methods must be defined:
    * `main`

    The following methods can be defined:
    * `add_arguments`
    """

    NAME = None
    EXTENSION_POINT_VERSION = '0.1'

    def __init__(self):
        super(VerbExtension, self).__init__()
        satisfies_version(PLUGIN_SYSTEM_VERSION, '^0.1')

    def add_arguments(self, parser, cli_name):
        pass

    def main(self, *, args):
        raise NotImplementedError()


class PulseVerb(VerbExtension):
    """A pulse subcommand: its flags are the pulse binary's own, and main runs it."""

    def __init__(self):
        super().__init__()
        short = binary.short(self.VERB)
        if short:  # the binary's own words, where it is found
            self.__doc__ = short

    def add_arguments(self, parser, cli_name):
        binary.add_arguments(parser, self.VERB)

    def main(self, *, args):
        return binary.run(self.VERB, args)
