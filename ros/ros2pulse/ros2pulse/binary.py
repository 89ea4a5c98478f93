"""Find the pulse binary, learn its verbs' flags from it, and run it.

Kept apart from ros2cli so that it can be tested without ROS. The flags come
from `pulse gen-docs --ros2cli -` at run time: `ros2 pulse top -h` and
argcomplete show exactly what the installed binary takes, and nothing here
has to follow pulse's flags by hand.
"""

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys

NOT_FOUND = 127  # as a shell says of a command it cannot find; pulse check's 1 and 2 mean verdicts
ARGV = '_pulse_argv'  # the flags as given, in order
REST = '_pulse_rest'  # the positional arguments and everything after them


def find():
    """The pulse binary: $PULSE_BIN, else pulse on PATH; None when neither exists."""
    given = os.environ.get('PULSE_BIN')
    if given:
        return given if os.access(given, os.X_OK) else None
    return shutil.which('pulse')


@functools.lru_cache(maxsize=None)
def verbs():
    """The binary's verbs and their flags ({} when there is no binary or it cannot say)."""
    pulse = find()
    if pulse is None:
        return {}
    try:
        out = subprocess.run([pulse, 'gen-docs', '--ros2cli', '-'], capture_output=True,
                             timeout=20, check=True).stdout
        return json.loads(out).get('verbs', {})
    except (OSError, subprocess.SubprocessError, ValueError, AttributeError):
        return {}  # an older pulse: its verbs are passed through without help


def environment(pulse=None):
    """What `pulse env --format envfile` says a probed process needs ({name: value}), or None without a pulse."""
    pulse = pulse or find()
    if pulse is None:
        return None
    try:
        out = subprocess.run([pulse, 'env', '--format', 'envfile'], capture_output=True, text=True,
                             timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    env = {}
    for line in out.splitlines():
        name, eq, value = line.partition('=')
        if eq and name and not name.startswith('#'):
            env[name.strip()] = value
    return env or None


def preload(probe, existing):
    """LD_PRELOAD with probe first and what was there kept (once)."""
    rest = [p for p in (existing or '').replace(' ', ':').split(':') if p and p != probe]
    return ':'.join([probe] + rest)


def short(verb):
    return verbs().get(verb, {}).get('short', '')


class _Recorded(argparse.Action):
    """Records a flag as given so that pulse gets it back: --name=value, or --name."""

    def __call__(self, parser, namespace, values, option_string=None):
        name = next(s for s in self.option_strings if s.startswith('--'))
        argv = list(getattr(namespace, ARGV, None) or [])
        argv.append(name if self.nargs == 0 else f'{name}={values}')
        setattr(namespace, ARGV, argv)


def add_arguments(parser, verb):
    """Give parser the verb's flags, as the pulse binary describes them, and its arguments."""
    v = verbs().get(verb)
    if v is None or v.get('passthrough'):
        # Flags nobody here knows (no binary, or pulse-bridge's): every word
        # is passed through as it is, -h too. argparse reads a word as a flag
        # only when it starts with one of prefix_chars, so none does.
        parser.prefix_chars = '\0'
        parser.epilog = (f'pulse {verb}: its flags are its own (pulse {verb} --help)' if v is not None else
                         'no pulse binary found: install the ros2-pulse package, or set PULSE_BIN')
    else:
        parser.epilog = f'usage of the pulse binary: pulse {v.get("usage", verb)}'
        if v.get('verbs'):
            parser.epilog += '\n' + f'its own verbs: {", ".join(v["verbs"])} (ros2 pulse {verb} <verb> --help)'
        for f in v.get('flags', []):
            names = ['--' + f['name']] + (['-' + f['shorthand']] if f.get('shorthand') else [])
            help_text = f.get('usage', '').replace('%', '%%')
            if f.get('default'):
                help_text += f' (default {f["default"]})'.replace('%', '%%')
            parser.add_argument(*names, action=_Recorded, dest='_pulse_' + f['name'].replace('-', '_'),
                                nargs=None if f.get('value') else 0, default=argparse.SUPPRESS,
                                metavar=f['name'].split('-')[-1].upper(), help=help_text)
    parser.add_argument(REST, nargs=argparse.REMAINDER, metavar='ARG',
                        help=f'the arguments of pulse {verb} (for run: -- COMMAND …)')


def argv_of(verb, args):
    """The pulse command line that args (parsed by add_arguments' parser) stand for."""
    rest = list(getattr(args, REST, None) or [])
    if verb == 'run' and rest and rest[0] != '--':
        rest.insert(0, '--')  # run's positionals are the command: its flags stay its own
    return [verb] + list(getattr(args, ARGV, None) or []) + rest


def run(verb, args):
    """Replace this process by pulse: its terminal, signals and exit status are the user's."""
    pulse = find()
    if pulse is None:
        print(f'ros2 pulse {verb}: no pulse binary found (install the ros2-pulse package, '
              'or set PULSE_BIN=/path/to/pulse)', file=sys.stderr)
        return NOT_FOUND
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(pulse, [pulse] + argv_of(verb, args))
