"""Nothing outlives a killed driver (k2rl.runtime.reaper): its descendants are stopped by the reaper."""
import os
import signal
import subprocess
import sys
import time

from k2rl.runtime.reaper import descendants, start_time, stop

DRIVER = """
import subprocess, sys, time
from k2rl.runtime import reaper
reaper.watch()
# a grandchild in a session of its own, as Ray's agents are: only the reaper can find it
child = subprocess.Popen([sys.executable, "-c",
    "import subprocess, time; p = subprocess.Popen(['sleep', '300'], start_new_session=True);"
    "print(p.pid, flush=True); time.sleep(300)"], stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
time.sleep(300)
"""


def alive(pid: int) -> bool:
    state = None
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_sigkilled_driver_leaves_no_process_behind():
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    child, grandchild = map(int, driver.stdout.readline().split())
    time.sleep(1.5)  # the reaper records every half second
    assert alive(child) and alive(grandchild) and grandchild in descendants(driver.pid)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    deadline = time.monotonic() + 10
    while (alive(child) or alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child) and not alive(grandchild)


def test_stop_spares_a_recycled_pid():
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert stop({proc.pid: start_time(proc.pid) + 1}) == 0  # another process's start time
        assert proc.poll() is None
        assert stop({proc.pid: start_time(proc.pid)}) == 1
        assert proc.wait(timeout=5) == -signal.SIGTERM
    finally:
        proc.kill()
