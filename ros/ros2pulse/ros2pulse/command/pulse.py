from ros2cli.command import add_subparsers_on_demand
from ros2cli.command import CommandExtension


class PulseCommand(CommandExtension):
    """Topic rates, node liveness, bytes and latency from ros2_pulse's probe, without subscribing."""

    def add_arguments(self, parser, cli_name):
        self._subparser = parser
        add_subparsers_on_demand(parser, cli_name, '_verb', 'ros2pulse.verb', required=False)

    def main(self, *, parser, args):
        if not hasattr(args, '_verb'):
            self._subparser.print_help()
            return 0
        return getattr(args, '_verb').main(args=args)
