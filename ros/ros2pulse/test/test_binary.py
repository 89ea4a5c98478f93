"""ros2pulse.binary against the real pulse binary (PULSE_BIN, set by make test-python).

Runs without ROS: ros2cli's part (ros2pulse.command, ros2pulse.verb) is
tested in the real-ROS lane (internal/realros, TestROS2Pulse).
"""

import argparse
import io
import os
import subprocess
import sys
import unittest
from contextlib import redirect_stderr

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from ros2pulse import binary  # noqa: E402

PULSE = os.environ.get('PULSE_BIN', '')


def setUpModule():
    if not os.access(PULSE, os.X_OK):
        raise RuntimeError(f'PULSE_BIN={PULSE!r} is not an executable pulse (make test-python sets it)')


def parser_for(verb):
    # as ros2cli makes a verb's parser (add_subparsers_on_demand)
    p = argparse.ArgumentParser(prog=f'ros2 pulse {verb}', formatter_class=argparse.RawDescriptionHelpFormatter)
    binary.add_arguments(p, verb)
    return p


class Verbs(unittest.TestCase):
    def test_every_verb_and_flag_registers(self):
        verbs = binary.verbs()
        self.assertIn('top', verbs)
        self.assertIn('check', verbs)
        for verb, v in verbs.items():
            help_text = parser_for(verb).format_help()
            for f in v['flags']:
                self.assertIn('--' + f['name'], help_text, verb)

    def test_flags_come_back_as_given(self):
        args = parser_for('check').parse_args(['--spec', 'robot.yaml', '--live', '--for', '2s', '--dir=/tmp/x'])
        self.assertEqual(binary.argv_of('check', args),
                         ['check', '--spec=robot.yaml', '--live', '--for=2s', '--dir=/tmp/x'])

    def test_a_value_that_looks_like_a_flag(self):
        args = parser_for('record').parse_args(['--retain=-1s'])
        self.assertEqual(binary.argv_of('record', args), ['record', '--retain=-1s'])

    def test_positionals_and_what_follows_pass_through(self):
        args = parser_for('check').parse_args(['--spec', 's.yaml', 'a.log', '--skip-last', 'b.log'])
        self.assertEqual(binary.argv_of('check', args), ['check', '--spec=s.yaml', 'a.log', '--skip-last', 'b.log'])

    def test_run_keeps_its_command_apart(self):
        for given in (['--bytes', '--', 'ros2', 'launch', 'x.py', '--debug'], ['--bytes', 'ros2', 'launch', 'x.py', '--debug']):
            args = parser_for('run').parse_args(given)
            self.assertEqual(binary.argv_of('run', args), ['run', '--bytes', '--', 'ros2', 'launch', 'x.py', '--debug'])

    def test_subverbs_pass_through(self):
        args = parser_for('bench').parse_args(['hotpath', '--help'])
        self.assertEqual(binary.argv_of('bench', args), ['bench', 'hotpath', '--help'])
        self.assertIn('hotpath', parser_for('bench').format_help())

    def test_passthrough_verbs_pass_every_word(self):
        # pulse bridge hands its flags to pulse-bridge: none is checked here, -h included
        for given in (['--statistics', '--for', '1s'], ['-h']):
            args = parser_for('bridge').parse_args(given)
            self.assertEqual(binary.argv_of('bridge', args), ['bridge'] + given)

    def test_unknown_flag_is_an_error(self):
        with redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit) as e:
            parser_for('top').parse_args(['--no-such-flag'])
        self.assertEqual(e.exception.code, 2)
        self.assertIn('--no-such-flag', err.getvalue())


class Environment(unittest.TestCase):
    def test_the_binarys_own(self):
        env = binary.environment()
        direct = subprocess.run([PULSE, 'env', '--format', 'envfile'], capture_output=True, text=True, check=True).stdout
        self.assertEqual(env, dict(line.split('=', 1) for line in direct.splitlines()))
        self.assertTrue(env['LD_PRELOAD'].endswith('libros2_pulse.so'), env)

    def test_no_binary(self):
        self.assertIsNone(binary.environment('/nonexistent/pulse'))

    def test_preload_keeps_what_was_there(self):
        self.assertEqual(binary.preload('/p.so', None), '/p.so')
        self.assertEqual(binary.preload('/p.so', '/a.so:/p.so /b.so'), '/p.so:/a.so:/b.so')


RUN = '''
import argparse, sys
sys.path.insert(0, sys.argv[1])
from ros2pulse import binary
p = argparse.ArgumentParser()
binary.add_arguments(p, sys.argv[2])
sys.exit(binary.run(sys.argv[2], p.parse_args(sys.argv[3:])))
'''


def via_ros2pulse(verb, *args, env=None):
    here = os.path.join(os.path.dirname(__file__), '..')
    return subprocess.run([sys.executable, '-c', RUN, here, verb, *args], capture_output=True, text=True,
                          env=env, timeout=60)


class Run(unittest.TestCase):
    def test_exit_status_and_output_are_pulses(self):
        # pulse check's own exit status (2: cannot judge, the spec is missing) and words
        direct = subprocess.run([PULSE, 'check', '--spec', '/nonexistent/spec.yaml', '--live'],
                                capture_output=True, text=True, timeout=60)
        ours = via_ros2pulse('check', '--spec', '/nonexistent/spec.yaml', '--live')
        self.assertNotEqual(direct.returncode, 0)
        self.assertEqual((ours.returncode, ours.stdout, ours.stderr), (direct.returncode, direct.stdout, direct.stderr))

    def test_success_is_zero(self):
        ours = via_ros2pulse('env', '--format', 'shell')
        direct = subprocess.run([PULSE, 'env', '--format', 'shell'], capture_output=True, text=True, timeout=60)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        self.assertEqual(ours.stdout, direct.stdout)

    def test_no_binary_says_so_in_one_line(self):
        env = dict(os.environ, PULSE_BIN='/nonexistent/pulse')
        ours = via_ros2pulse('top', '--window', '2s', env=env)
        self.assertEqual(ours.returncode, binary.NOT_FOUND)
        self.assertEqual(len(ours.stderr.strip().splitlines()), 1, ours.stderr)
        self.assertIn('no pulse binary found', ours.stderr)


if __name__ == '__main__':
    unittest.main()
