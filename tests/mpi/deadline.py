# SPDX-License-Identifier: Apache-2.0
"""Deadlines for the MPI and cluster tests that hold on a loaded machine and still catch a hang
(issue 29, class 8).

A case's budget is what it does (its base seconds, written beside the case: ranks, runs), times
DPAS_TEST_TIMEOUT_SCALE (a factor CI sets; CMake passes the one it was configured with), times 3
in a sanitizer build (DPAS_TEST_SANITIZE=1), times the machine's load per core when the case
starts (1 on an idle machine, at most LOAD_CAP), raised while it runs if the load rises (the
largest factor seen, checked every 10 s). Under a load average of 40 on 2 cores a 3 s case gets
20 times its budget instead of failing at a fixed 300 s.

A run that passes the deadline is a hang: before anything is killed, every process of the run
(mpiexec and its ranks) is attached by gdb and the stack of each of its threads printed
('thread apply all bt'), then the whole process group is killed and the case fails, naming the
ranks that were stuck. CTest's own TIMEOUT (ctest_timeout) is the backstop above the largest
budget, so the wrapper, not CTest, is the one that sees a hang.

Usage as a library: run(cmd, env, deadline) -> CompletedProcess; Deadline(base).
Usage as a program (its own test): python3 deadline.py selftest"""
import os
import shutil
import signal
import subprocess
import sys
import time

LOAD_CAP = 20


def scale():
    """The factor every budget is multiplied by, from the environment."""
    try:
        s = float(os.environ.get("DPAS_TEST_TIMEOUT_SCALE", "1") or "1")
    except ValueError:
        raise SystemExit("DPAS_TEST_TIMEOUT_SCALE must be a number, got %r"
                         % os.environ["DPAS_TEST_TIMEOUT_SCALE"])
    if not s > 0:
        raise SystemExit("DPAS_TEST_TIMEOUT_SCALE must be > 0, got %r" % s)
    if os.environ.get("DPAS_TEST_SANITIZE") == "1":
        s *= 3
    return s


def load_factor():
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 1.0
    return min(LOAD_CAP, max(1.0, per_core))


class Deadline:
    """One case's deadline: base seconds (what the case does on an idle machine, unscaled)."""

    def __init__(self, base):
        self.base = base
        self.factor = scale() * load_factor()
        self.seconds = base * self.factor
        self.start = time.monotonic()
        self.end = self.start + self.seconds
        self.fixed = False

    def grow(self):
        """The load as it is now: a case that started on a quiet machine and was then crowded
        (ctest -j2 starting its neighbours, another user's build) gets the budget of the load it
        met, never less than it had (the factor is the largest seen; at most LOAD_CAP)."""
        if self.fixed:
            return
        f = scale() * load_factor()
        if f > self.factor:
            self.factor = f
            self.seconds = self.base * f
            self.end = self.start + self.seconds

    def left(self):
        return max(1.0, self.end - time.monotonic())


def _children():
    """pid -> ppid of every process we can see."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    s = f.read()
                out[int(d)] = int(s[s.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return out


def _descendants(root):
    parents = _children()
    found, todo = [], [root]
    while todo:
        p = todo.pop()
        for c, pp in parents.items():
            if pp == p and c not in found:
                found.append(c)
                todo.append(c)
    return found


def _name(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


def stacks(pids):
    """The stack of every thread of each process, by gdb (or, without gdb, where the kernel
    says each thread waits)."""
    gdb = shutil.which("gdb")
    text = []
    for pid in pids:
        text.append("---- pid %d (%s) ----" % (pid, _name(pid)))
        if gdb:
            try:
                g = subprocess.run([gdb, "-batch", "-nx", "-p", str(pid), "-ex",
                                    "thread apply all bt"], capture_output=True, text=True,
                                   timeout=120)
                text.append(g.stdout.strip() or g.stderr.strip())
                continue
            except subprocess.TimeoutExpired:
                text.append("(gdb did not answer within 120 s)")
        try:
            for t in sorted(os.listdir("/proc/%d/task" % pid)):
                with open("/proc/%d/task/%s/wchan" % (pid, t)) as f:
                    text.append("thread %s waits in %s" % (t, f.read().strip() or "(running)"))
        except OSError as e:
            text.append("(no stack: %s)" % e)
    return "\n".join(text)


class Hang(AssertionError):
    pass


def run(cmd, env, deadline, what=None):
    """cmd under the deadline; a hang raises Hang with the stacks of the stuck processes."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        while True:  # in slices of 10 s at most, the deadline following the load it meets
            try:
                out, err = p.communicate(timeout=min(10.0, deadline.left()))
                return subprocess.CompletedProcess(cmd, p.returncode, out, err)
            except subprocess.TimeoutExpired:
                deadline.grow()
                if time.monotonic() >= deadline.end:
                    raise
    except subprocess.TimeoutExpired:
        pids = [p.pid] + _descendants(p.pid)
        names = ", ".join("%d (%s)" % (q, _name(q)) for q in pids)
        st = stacks(pids)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        raise Hang("%s did not finish within its deadline of %.0f s (base %.0f s x %.1f: "
                   "DPAS_TEST_TIMEOUT_SCALE, sanitizer and load per core); stuck: %s\n"
                   "stacks:\n%s\nstdout:\n%s\nstderr:\n%s"
                   % (what or " ".join(cmd[:3]), deadline.seconds, deadline.base,
                      deadline.factor, names, st, out[-4000:], err[-4000:])) from None


def ctest_timeout(base, configured_scale=1.0, sanitize=False):
    """CTest's backstop for a case of base seconds: above the largest budget the wrapper can
    give (the load factor at its cap) and the time gdb takes, so the wrapper speaks first."""
    return int(base * configured_scale * (3 if sanitize else 1) * LOAD_CAP + 300)


def _selftest():
    # a stuck "rank": a process that sleeps past a 5 s deadline, under a stand-in for mpiexec (5 s,
    # not 1: on a loaded machine the shell may not have started its sleeps within 1 s, and the
    # check below wants the stuck child named)
    os.environ["DPAS_TEST_TIMEOUT_SCALE"] = "1"
    d = Deadline(5)
    d.seconds, d.factor = 5, 1  # whatever the load: this case is about the hang, not the budget
    d.end = time.monotonic() + 5
    d.fixed = True
    t0 = time.monotonic()
    try:
        run(["sh", "-c", "sleep 600 & sleep 600; wait"], dict(os.environ), d, "selftest")
    except Hang as e:
        msg = str(e)
        assert "selftest did not finish within its deadline" in msg, msg
        assert "(sleep)" in msg, msg  # the stuck child is named
        if shutil.which("gdb"):
            assert "nanosleep" in msg or "sleep" in msg.split("stacks:")[1], msg
        assert time.monotonic() - t0 < 300, "caught, but slowly"
        # nothing left running
        for line in msg.split("stuck: ")[1].split("\n")[0].split(", "):
            pid = int(line.split()[0])
            assert not os.path.exists("/proc/%d/stat" % pid) or _state(pid) == "Z", pid
        print("a hang is caught, with the stacks:\n" + msg[:3000])
        return 0
    raise AssertionError("the hang was not caught")


def _state(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    return s[s.rindex(")") + 2]


if __name__ == "__main__":
    if sys.argv[1:] == ["selftest"]:
        sys.exit(_selftest())
    if sys.argv[1:2] == ["ctest-timeout"]:
        print(ctest_timeout(float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"))
        sys.exit(0)
    raise SystemExit(__doc__)
