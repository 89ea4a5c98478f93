# Sourced by scripts/test-ros.sh and scripts/bench-ros.sh: finds the ROS 2
# prefix (ROS_PREFIX, else the first of /opt/ros/{jazzy,humble,kilted}),
# checks it, and builds ros/ (pulse_testnodes, ros2pulse) against it in build/ros/<distro>-<hash>.
# Needs root, build, short, me (its name in messages) and say_none (one line
# and exit) from its caller.
# Sets prefix, distro, lttng (with/without), rmws and ws.
prefix=${ROS_PREFIX:-}
if [[ -z $prefix ]]; then
  for d in jazzy humble kilted; do
    [[ -e /opt/ros/$d/setup.bash ]] && { prefix=/opt/ros/$d; break; }
  done
  [[ -n $prefix ]] || say_none "no ROS 2 prefix (set ROS_PREFIX=/path/to/ros, or install ROS 2 in /opt/ros/<distro>)"
fi
[[ -d $prefix ]] || say_none "ROS_PREFIX=$prefix: no such directory"
[[ -e $prefix/setup.bash ]] || say_none "ROS_PREFIX=$prefix: no setup.bash there (not a ROS 2 install)"
# What the prefix says it is, in a shell of its own (a broken setup fails here, not in a test).
distro=$(bash -c 'source "$1/setup.bash" >/dev/null 2>&1 && echo "${ROS_DISTRO:-}"' bash "$prefix") ||
  say_none "ROS_PREFIX=$prefix: its setup.bash fails when sourced"
if [[ -z $distro ]]; then
  # A core built without ros_environment sets no ROS_DISTRO: rclcpp's version tells.
  v=$(sed -n 's:.*<version>\([0-9]*\)\..*:\1:p' "$prefix/share/rclcpp/package.xml" 2>/dev/null | head -1 || true)
  case $v in 16) distro=humble;; 28) distro=jazzy;; 29) distro=kilted;; esac
  [[ -n $distro ]] && echo "$me: $prefix sets no ROS_DISTRO; rclcpp $v.x is $distro's"
fi
case $distro in
  humble|jazzy|kilted) ;;
  "") say_none "ROS_PREFIX=$prefix: its setup.bash sets no ROS_DISTRO and it has no rclcpp of a known distro (a broken install?)";;
  *) say_none "ROS_PREFIX=$prefix: distro '$distro' is not one pulse supports (humble, jazzy, kilted)";;
esac
[[ -e $prefix/lib/libtracetools.so ]] || say_none "ROS_PREFIX=$prefix ($distro): no lib/libtracetools.so (ros2_tracing's tracetools is part of every ROS 2 core)"
rmws=()
for rmw in rmw_cyclonedds_cpp rmw_fastrtps_cpp; do
  [[ -e $prefix/lib/lib$rmw.so ]] && rmws+=("$rmw")
done
[[ ${#rmws[@]} -gt 0 ]] || say_none "ROS_PREFIX=$prefix ($distro): neither rmw_cyclonedds_cpp nor rmw_fastrtps_cpp is installed"
lttng=without
# ldd's whole output first: under pipefail, `ldd | grep -q` fails whenever
# grep quits before ldd has written its last line (SIGPIPE), so a core with
# LTTng read as one without (19 of 300 tries with both cores busy).
tracetools_deps=$(ldd "$prefix/lib/libtracetools.so" 2>/dev/null || true)
[[ $tracetools_deps == *liblttng-ust* ]] && lttng=with
echo "$me: $prefix: $distro, tracetools $lttng LTTng, RMWs: ${rmws[*]}"
# A session of LTTng's own beside pulse (TestBesideAnLTTngSession) where tracetools records.
[[ $lttng == with && $short == 0 ]] && bash "$root/scripts/need-packages.sh" lttng-tools babeltrace2

# rclpy and colcon are Debian's (or Ubuntu's) python: never a pyenv or venv one.
export PATH=/usr/bin:$PATH
command -v colcon >/dev/null || bash "$root/scripts/need-packages.sh" python3-colcon-common-extensions
# ros2 pulse's completion (TestROS2Pulse) is argcomplete's, as ros2cli's is; tmux runs ros2 pulse top.
[[ -e $prefix/bin/ros2 ]] && bash "$root/scripts/need-packages.sh" python3-argcomplete tmux
key=$(echo "$prefix" | sha256sum | cut -c1-8)
ws=$build/ros/$distro-$key
log=$ws/colcon.log
mkdir -p "$ws"
echo "$me: building ros/pulse_testnodes in $ws"
if ! (set +u && source "$prefix/setup.bash" && set -u && cd "$ws" &&
      colcon --log-base "$ws/log" build --base-paths "$root/ros" --build-base "$ws/build" --install-base "$ws/install" \
        --merge-install --cmake-args -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=/usr/bin/python3 \
        >"$log" 2>&1); then
  tail -40 "$log"
  echo "$me: the test nodes did not build against $prefix (log: $log)" >&2
  exit 1
fi
