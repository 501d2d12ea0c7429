"""Run untrusted Python (a model's answer) in a contained subprocess.

Verifiers for code tasks must execute what the policy wrote, and a policy under
RL pressure writes infinite loops, fork bombs, memory bombs and output floods
long before it writes anything malicious; it also learns whatever pays, so the
sandbox must hold against code that probes its walls on purpose. Threat model:
the code is hostile for as long as its run lasts. It must not read or write
anything of the host (files, sockets, other processes), must not outlive its
run, and must not take more than its share of memory, processes, CPU time, disk
or output. The kernel is trusted: there is no seccomp filter, so a kernel bug
reachable from an unprivileged process (user namespaces included, which this
kernel lets any process make) is out of scope.

Each run is started by a small trusted launcher (``launcher.py``, run by the
sandbox's Python as root) that imports the run's trusted ``preload`` modules,
builds the walls, drops privileges and then runs the script in the same
interpreter (no second interpreter start). Their bytecode is cached in a
root-only folder of the host (``private.private_folder()``, which also holds the
locks that keep host processes from sharing a run uid). As root, where the
kernel allows it, a run gets:

- **a cgroup of its own** (v2 if the memory controller is delegated to this
  process's cgroup, else v1's memory and pids controllers) that caps the memory
  and the process count of the run's whole process tree, not of each process.
  The host moves the launcher into it before the launcher may go on, and kills
  whatever is left in it afterwards. ``SandboxResult.memory_peak_mb`` is the
  tree's peak. Where no cgroup can be made (``memory_cap()`` tells which is in
  force, and a warning says so once), the tree is capped by arithmetic instead
  (``fallback_caps``): the private tmpfs mounts together get a quarter of
  ``memory_mb`` (``size=``), and the rest is split between at most
  ``max_processes`` processes, each of at least ``FALLBACK_PROCESS_MB``, so that
  RLIMIT_NPROC (processes of the run's uid, threads included) times RLIMIT_AS
  (each process's address space) plus the tmpfs sizes is at most ``memory_mb``.
  With the defaults (512 MB, 32 processes) a run gets 4 processes of 96 MB and
  128 MB of tmpfs: four children of 300 MB or 1.2 GB of /tmp files cannot be made.
  A ``memory_mb`` too small for one process is refused with a ValueError.
- **a jail**: new mount, PID, IPC, UTS and network namespaces. Its root is a
  fresh read-only tmpfs with read-only, nosuid binds of the system folders
  (/usr, /etc and the /bin, /lib links), five device nodes (null, zero, full,
  random, urandom), a new /proc that shows the run's processes only, and
  private tmpfs at /tmp, /var/tmp and /dev/shm (charged to the cgroup, or
  sized to a share of ``memory_mb`` without one; gone with the jail). The
  cwd is a folder in the jail's /tmp holding a copy of the script. Nothing
  else of the host exists in it: not the project, not /root or /home, not
  /run, /sys or the host's /tmp, so no host Unix socket can be
  reached (filesystem sockets need a path; abstract ones belong to the network
  namespace, which has only a downed loopback), and no SysV IPC object of the
  host either. The jail's PID 1 is a trusted init that reaps orphans; when the
  program ends the init exits and the kernel kills every process left in the
  namespace, setsid or not: nothing outlives a run. ``jail_available()`` says
  whether the kernel allowed it; if not, a warning says so once and runs fall
  back to a network namespace alone (or the no-network prelude) and the host's
  view of files, within their uid's rights.
- **a uid of its own** (see below), no supplementary groups, no new privileges,
  and resource limits on CPU time, address space, processes, file size, open
  files and core dumps; a scrubbed environment and ``python -I -S``.
- a wall-clock timeout, after which everything is killed: the cgroup's
  processes, the process group, and (without a jail and a cgroup, which reap
  everything themselves) every process left with the run's uid.

Why a uid per run rather than one shared ``nobody``: RLIMIT_NPROC counts the
processes of a uid, so runs sharing one would starve each other, and "kill
everything of this uid" (the fallback sweep) would hit neighbours.

Not contained: CPU share (the cgroup caps memory and processes, not CPU time
beyond RLIMIT_CPU), and, without a jail, disk use in the run's folder beyond one
file's size limit while the run lasts. Without root there is no uid drop, no
jail and no cgroup: the limits and the prelude are guards against accidents,
not walls (ctypes or a fresh interpreter get past the prelude).

The package, one concept a module (each module's doc has the details):

- ``run``: ``run_python``, ``SandboxResult``, ``SandboxPool``, ``sandbox_python``;
- ``launcher``: the trusted launcher, which the sandbox's interpreter imports, as root, from
  its copy in the private folder (``python -I -S -c``);
- ``process``: one launcher process from the host's side (start, wait, kill, read);
- ``jail``: the namespaces and the jail's layout that the launcher mounts;
- ``cgroups``: the per-run cgroup and, without one, ``fallback_caps``;
- ``uids``: the uid lease and the sweep of a uid's processes;
- ``private``: the root-only folder of the uid locks and the cached trusted modules;
- ``probes``: what the host allows (network namespaces, the jail).
"""

from rewards.sandbox.cgroups import FALLBACK_PROCESS_MB, fallback_caps, memory_cap
from rewards.sandbox.private import module_folder, private_folder
from rewards.sandbox.probes import NetworkIsolation, jail_available, network_isolation
from rewards.sandbox.run import SandboxPool, SandboxResult, run_python, sandbox_python
from rewards.sandbox.uids import SANDBOX_UIDS, processes_of

__all__ = ["FALLBACK_PROCESS_MB", "NetworkIsolation", "SANDBOX_UIDS", "SandboxPool",
           "SandboxResult", "fallback_caps", "jail_available", "memory_cap", "module_folder",
           "network_isolation", "private_folder", "processes_of", "run_python",
           "sandbox_python"]
