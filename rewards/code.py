"""Verifiers for tasks whose answer is Python source, scored by hidden unit tests.

Threat model: the response is written by a policy that is paid for passing
tests, so it will find any way to make the tests *report* a pass without its
function being right. It runs with the sandbox's rights (rewards/sandbox/):
it can patch anything in its own interpreter, read its own memory, files,
stdin and fds, fork helpers, install signal handlers, start threads, signal or
kill processes of its uid, and send any bytes it likes. The tests and the
host are trusted.

Design: two processes in one sandbox run. The harness (``HARNESS``, a module the
sandbox imports before it confines the run) starts as T, the trusted process;
before anything else it makes itself non-dumpable (so no
process of its uid may ptrace it, read or write its memory, or open its fds
through /proc) and forks R, which closes every fd but its two pipe ends, takes
/dev/null as stdin and stderr as stdout, and only then runs the response. The
response's code never runs in T. T reads the tests from its stdin only after
the fork, so they are never in R's memory, files or fds, and evaluates every
test itself, with its own untouched builtins and compiler: a name the test
uses that is neither a builtin nor one of TEST_MODULES (which T imports) is
looked up in R over the pipe; a function becomes
a proxy whose calls are sent to R, and whose return values come back as
``marshal`` data that T accepts only if every object in it is of an exact
plain type (None, bool, int, float, complex, str, bytes, tuple, list, dict,
set, frozenset). So every comparison in a test is between plain values T
built; no object of the response's ever reaches T. T alone holds the result
channel (its original stdout, where it writes ``index:PASS|FAIL`` lines), and
the host reads nothing else. There is no secret to steal: forging needs T's
fd, not a nonce.

How each known cheat fails:

- re-reading stdin for a nonce, writing result lines to fd 3 or any fd or
  printing them: there is no nonce; R's stdin is /dev/null, its stdout is
  stderr, and it holds no fd of T's (T's are closed in R; /proc/T/fd is
  closed to it because T is non-dumpable; the jail's init and launcher, which
  also hold the output files, are root or outside the PID namespace);
- replacing ``compile``, ``exec``, ``AssertionError`` or other builtins,
  monkey-patching the harness or the test module, patching ints in memory
  with ctypes, shadowing a builtin or module the test uses (``abs``,
  ``math``): all of that happens in R; T's builtins, modules and code are its
  own, and a test's builtins and TEST_MODULES are always T's (only the entry
  name may name a builtin);
- ``__eq__``-always-true objects, int/str/list subclasses with a rigged
  ``__eq__``: R must turn return values into marshal data, subclasses of
  plain types become their plain value (a rigged ``Int(-1)`` is -1), any other
  object cannot be sent, and T rejects anything but exact plain types;
- reading the harness's frames (``sys._getframe``, ``inspect``, ``gc``) for
  a nonce, a results file or the tests, or reading the tests from the script,
  stdin or T's fds to hard-code their answers: R's memory, files and fds have
  none of them (the script holds the response and its entry name only);
- exiting or crashing before the tests (``sys.exit``, ``os._exit``), killing
  or stopping T: T sees the end of the pipe (or dies, or times out) and
  every test not yet run fails;
- helpers, threads, signal and atexit handlers that write later: they can
  reach nothing of T's, and the sandbox kills them when T exits;
- raising StopIteration into a test's ``map`` or ``iter``: only ordinary
  builtin exceptions are raised again in T (others become ``ResponseError``).

Limits of the design: tests may pass and compare plain data only. A test that
calls the response with a function or object argument, expects an object or a
generator back, checks that an argument was mutated in place, or uses a class
the response defines, fails. The response's stdout goes to the run's stderr.
T's safety from R rests on the sandbox's uid drop (as root): without it R runs
as the host's own user and, like any sandboxed code then, is not walled in.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import marshal
import os
import re
import textwrap
import threading
import warnings
from typing import Any, Sequence

from rewards.sandbox import SandboxPool, SandboxResult

TIMEOUT_SECONDS = 5.0  # wall clock for one response's whole test run
CPU_SECONDS = 5
# A fence line: three or more backticks or tildes, then an info string ("python", " py").
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^`\n]*)$", re.MULTILINE)
# A definition at the start of a line; one that is not a test's (pytest's test_*, Test* classes).
_DEFINES = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s", re.MULTILINE)
_DEFINES_NON_TEST = re.compile(r"^\s*(?:async\s+)?(?:def\s+(?!test)|class\s+(?!Test))",
                               re.MULTILINE)
# What the response's module is called when it runs: not "__main__", so that a
# ``if __name__ == "__main__":`` block (a demo, an ``input()``) never runs.
RESPONSE_MODULE = "response"


# --- the harness: the code below runs in the sandbox (see _harness_source) ----

MAX_MESSAGE = 1 << 24  # bytes: the largest message either side of the pipe accepts
PLAIN = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)
# Modules a test may use without importing them (as if the response had): T imports them itself.
TEST_MODULES = frozenset({
    "math", "cmath", "re", "string", "itertools", "functools", "collections", "heapq",
    "bisect", "operator", "statistics", "fractions", "decimal", "random", "copy", "typing",
    "datetime", "numbers", "hashlib", "json", "sys"})
PR_SET_DUMPABLE = 4


class ResponseError(Exception):
    """A call to the response failed in a way T does not re-raise as such."""


def harness_main(source: str, entry: str | None) -> None:
    """T: start R on ``source``, then run the tests from stdin and report each on stdout."""
    make_undumpable()
    results = os.dup(1)  # the result channel, held by T alone
    os.dup2(2, 1)  # whatever T prints goes to stderr
    calls_r, calls_w = os.pipe()
    replies_r, replies_w = os.pipe()
    child = os.fork()
    if child == 0:
        serve_response(source, calls_r, replies_w)
    os.close(calls_r)
    os.close(replies_w)
    tests = read_tests(0)  # only now: R was forked without them
    link = Link(calls_w, replies_r)
    usable = response_loaded(link, entry)
    namespace = TestNamespace(link, entry if usable else None)
    for index, test in enumerate(tests):
        passed = usable and run_test(test, index, namespace)
        os.write(results, f"{index}:{'PASS' if passed else 'FAIL'}\n".encode())
    os.kill(child, 9)
    os.waitpid(child, 0)  # reaped here, not left to an init
    os._exit(0)


def make_undumpable() -> None:
    """No process of T's uid may now ptrace T, touch its memory or open /proc/T/fd."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def read_tests(fd: int) -> list[str]:
    """The tests the host wrote to ``fd``, each as its length in bytes, a newline, the text."""
    data = bytearray()
    while chunk := os.read(fd, 1 << 16):
        data += chunk
    tests, position = [], 0
    while position < len(data):
        newline = data.index(b"\n", position)
        size = int(data[position:newline])
        tests.append(data[newline + 1:newline + 1 + size].decode("utf-8", "surrogatepass"))
        position = newline + 1 + size
    return tests


def response_loaded(link: Link, entry: str | None) -> bool:
    """Whether R ran the response to the end and, if ``entry`` is given, it is a function."""
    try:
        loaded = link.receive()
        if loaded != ("loaded", True):
            return False
        return entry is None or link.request(("describe", entry)) == ("callable",)
    except Exception:
        return False


def run_test(test: str, index: int, namespace: TestNamespace) -> bool:
    """Whether ``test`` runs to its end in T (every assert held)."""
    try:
        exec(compile(test, f"<test {index}>", "exec"), namespace)
    except BaseException:
        return False
    return True


class Link:
    """T's end of the pipes to R: framed marshal messages, every reply checked for plain data."""

    def __init__(self, calls: int, replies: int) -> None:
        self.calls, self.replies = calls, replies

    def send(self, message: Any) -> None:
        send_message(self.calls, message)

    def receive(self) -> Any:
        return check_plain(receive_message(self.replies))

    def request(self, message: Any) -> Any:
        self.send(message)
        return self.receive()

    def call(self, name: str, args: tuple, kwargs: dict) -> Any:
        """What the response's ``name(*args, **kwargs)`` returned, or raise what it raised."""
        reply = self.request(("call", name, args, kwargs))
        if type(reply) is tuple and len(reply) == 2 and reply[0] == "return":
            return reply[1]
        if type(reply) is tuple and len(reply) == 3 and reply[0] == "raise":
            raise rebuilt_exception(reply[1], reply[2])
        raise ResponseError(f"malformed reply from the response's process for {name}")


def rebuilt_exception(name: Any, message: Any) -> BaseException:
    """The builtin exception R reported, or ResponseError for anything else.

    StopIteration and StopAsyncIteration are not rebuilt: raised into a test's
    ``map`` or ``iter`` they would end it quietly instead of failing it.
    """
    cls = builtins.__dict__.get(name) if type(name) is str else None
    if (isinstance(cls, type) and issubclass(cls, Exception)
            and not issubclass(cls, (StopIteration, StopAsyncIteration))):
        try:
            return cls(message)
        except Exception:
            pass
    return ResponseError(f"{name}: {message}")


class TestNamespace(dict):
    """The globals tests run in: T's builtins and modules first, then the response's names.

    A missing name (``dict.__missing__`` is consulted for every global the
    tests and their functions load) is a builtin if there is one; a module in
    TEST_MODULES, imported by T; else it is asked of R and bound: a function as
    a proxy, plain data as itself. So the response cannot shadow what a test
    relies on (``abs``, ``math.isclose``), except the entry it was asked for.
    """

    def __init__(self, link: Link, entry: str | None) -> None:
        super().__init__(__builtins__=builtins, __name__="__test__")
        self.link = link
        if entry is not None:  # the entry is the response's, even if a builtin has its name
            self[entry] = self.proxy(entry)

    def __missing__(self, name: str) -> Any:
        if name in builtins.__dict__ or name.startswith("__"):
            raise KeyError(name)  # the lookup goes on to the builtins
        if name in TEST_MODULES:
            value = __import__(name)
        else:
            reply = self.link.request(("describe", name))
            if reply == ("callable",):
                value = self.proxy(name)
            elif type(reply) is tuple and len(reply) == 2 and reply[0] == "value":
                value = reply[1]
            else:
                raise KeyError(name)
        self[name] = value
        return value

    def proxy(self, name: str) -> Any:
        link = self.link

        def call(*args: Any, **kwargs: Any) -> Any:
            return link.call(name, args, kwargs)

        call.__name__ = call.__qualname__ = name
        return call


def check_plain(value: Any) -> Any:
    """``value`` if it and everything in it is of an exact PLAIN type, else TypeError.

    Containers are walked once each (marshal data may share or nest them), and only
    objects that ``value`` holds are pushed, so every id in ``seen`` belongs to a live
    object and cannot be reused: the walk once pushed ``dict.items()`` pairs, temporary
    tuples whose ids a later pair could take, letting the pair's code object go unchecked.
    """
    stack, seen = [value], {}
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind not in PLAIN:
            raise TypeError(f"the response's process sent a {kind.__name__}")
        if kind in (tuple, list, set, frozenset, dict) and id(item) not in seen:
            seen[id(item)] = item  # held, so its id stays its own while we walk
            if kind is dict:
                stack.extend(item.keys())
                stack.extend(item.values())
            else:
                stack.extend(item)
    return value


def send_message(fd: int, message: Any) -> None:
    """Write ``message`` to ``fd`` as marshal data after its 8-byte length."""
    data = marshal.dumps(message)
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def receive_message(fd: int) -> Any:
    """The next message on ``fd`` (EOFError at the end, ValueError if oversized)."""
    size = int.from_bytes(read_exactly(fd, 8), "little")
    if size > MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes is over the limit")
    return marshal.loads(read_exactly(fd, size))


def read_exactly(fd: int, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise EOFError("the other process closed the pipe")
        data += chunk
    return bytes(data)


def serve_response(source: str, calls: int, replies: int) -> None:
    """R: run the response, then answer T's requests until the pipe closes; never returns."""
    isolate(keep=(calls, replies))
    namespace = {"__name__": RESPONSE_MODULE, "__builtins__": builtins}
    pid = os.getpid()
    try:
        exec(compile(source, "<response>", "exec"), namespace)
        loaded = True
    except BaseException:
        import traceback
        traceback.print_exc()
        loaded = False
    if os.getpid() != pid:
        os._exit(0)  # a child the response forked, run to the end of its code: not a server
    try:
        send_message(replies, ("loaded", loaded))
        while True:
            send_message(replies, answer(namespace, receive_message(calls)))
    except BaseException:
        os._exit(0)


def isolate(keep: tuple[int, int]) -> None:
    """Leave R nothing of T's: stdin from /dev/null, every fd but ``keep`` and 0-2 closed."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    low, high = sorted(keep)
    os.closerange(3, low)
    os.closerange(low + 1, high)
    os.closerange(high + 1, max(os.sysconf("SC_OPEN_MAX"), high + 1))


def answer(namespace: dict, request: Any) -> tuple:
    """R's reply to ("describe", name) or ("call", name, args, kwargs)."""
    try:
        if request[0] == "describe":
            if request[1] not in namespace:
                return ("missing",)
            value = namespace[request[1]]
            if isinstance(value, type(os)):
                return ("module",)
            return ("callable",) if callable(value) else ("value", plain(value))
        return ("return", plain(namespace[request[1]](*request[2], **request[3])))
    except BaseException as error:
        try:
            message = str(error)[:1000]
        except BaseException:
            message = ""
        return ("raise", type(error).__name__, message)


def plain(value: Any) -> Any:
    """``value`` as marshal-able plain data; subclasses of plain types become their base value."""
    kind = type(value)
    if kind in (type(None), bool, int, float, complex, str, bytes):
        return value
    if isinstance(value, (list, tuple, set, frozenset)):
        base = next(b for b in (list, tuple, set, frozenset) if isinstance(value, b))
        return base(plain(item) for item in base.__iter__(value))
    if isinstance(value, dict):
        return {plain(key): plain(item) for key, item in dict.items(value)}
    for base, exact in ((int, int.__int__), (float, float.__float__), (str, str.__str__),
                        (bytes, lambda item: bytes(memoryview(item))),
                        (complex, lambda item: complex(item.real, item.imag))):
        if isinstance(value, base):
            return exact(value)
    raise TypeError(f"a {kind.__name__} cannot be returned to the tests (plain data only)")


HARNESS_PARTS = (ResponseError, harness_main, make_undumpable, read_tests, response_loaded,
                 run_test, Link, rebuilt_exception, TestNamespace, check_plain, send_message,
                 receive_message, read_exactly, serve_response, isolate, answer, plain)


def _harness_source() -> str:
    """The harness module's source: the parts above, without their type annotations.

    The sandbox imports it (as HARNESS_MODULE) before confining the run, from
    bytecode it caches: no per-run compile, and without annotations it needs
    neither ``typing`` nor ``__future__``.
    """
    lines = [
        "import builtins, marshal, os",
        f"MAX_MESSAGE = {MAX_MESSAGE}",
        "PLAIN = (" + ", ".join("type(None)" if kind is type(None) else kind.__name__
                                for kind in PLAIN) + ")",
        f"TEST_MODULES = frozenset({sorted(TEST_MODULES)!r})",
        f"PR_SET_DUMPABLE = {PR_SET_DUMPABLE}",
        f"RESPONSE_MODULE = {RESPONSE_MODULE!r}",
    ]
    for part in HARNESS_PARTS:
        tree = ast.parse(inspect.getsource(part))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                node.returns = None
                for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                            node.args.vararg, node.args.kwarg]:
                    if arg is not None:
                        arg.annotation = None
        lines.append(ast.unparse(tree))
    return "\n\n".join(lines) + "\n"


HARNESS_MODULE = "k2rl_code_harness"
HARNESS = _harness_source()


# --- the host side ---------------------------------------------------------------


def code_blocks(response: str) -> tuple[list[str], str | None]:
    """The complete fenced blocks of ``response``, and an unclosed last one (or None).

    Any fence: ```` ```python ````, ```` ``` python ````, ``~~~``; a block closes at a fence
    of its own character, at least as long, with no info string.

    >>> code_blocks("```python\\na = 1\\n```\\ntext\\n~~~ py\\nb = 2\\n~~~\\n```\\nc = 3")
    (['a = 1\\n', 'b = 2\\n'], 'c = 3')
    """
    blocks, opened = [], None
    for fence in _FENCE.finditer(response):
        if opened is None:
            opened = fence
        elif (fence.group(1)[0] == opened.group(1)[0]
              and len(fence.group(1)) >= len(opened.group(1)) and not fence.group(2).strip()):
            blocks.append(textwrap.dedent(response[opened.end() + 1:fence.start()]))
            opened = None
    # A fence indented in a list indents its code too: dedent undoes it.
    return blocks, (textwrap.dedent(response[opened.end() + 1:]) if opened is not None else None)


def strip_fence(response: str) -> str:
    """The code in ``response``: its last complete fenced block that defines a function or
    class other than a test (a usage example or the tests after the code are not the answer),
    else the last that defines tests, else its last complete block,
    else an unclosed one (the token budget cut the fence), else all of it.

    >>> strip_fence("```python\\ndef f(x):\\n    return x\\n```")
    'def f(x):\\n    return x\\n'
    >>> usage_after = "```\\nprint(f(2))\\n```"
    >>> strip_fence("Use it as `f(2)`:\\n``` python\\ndef f(x): return x\\n```\\n" + usage_after)
    'def f(x): return x\\n'
    >>> tests_after = "```python\\ndef test_f():\\n    assert f(2) == 2\\n```"
    >>> strip_fence("```python\\ndef f(x): return x\\n```\\n" + tests_after)
    'def f(x): return x\\n'
    >>> strip_fence("def f(x): return x")
    'def f(x): return x'
    """
    blocks, unclosed = code_blocks(response)
    defining = [block for block in blocks if _DEFINES.search(block)]
    # A block that defines only tests ("def test_add():", "class TestAdd") checks the answer.
    answering = [block for block in defining if _DEFINES_NON_TEST.search(block)]
    if blocks:
        return (answering or defining or blocks)[-1]
    return unclosed if unclosed is not None else response


def harness(source: str, entry: str | None = None) -> str:
    """The script T runs (with HARNESS preloaded): the call with the response and its entry."""
    # ascii() rather than repr(): the literal survives any encoding, lone surrogates included.
    return (f"from {HARNESS_MODULE} import harness_main\n"
            f"harness_main({ascii(source)}, {ascii(entry)})\n")


def encode_tests(tests: Sequence[str]) -> str:
    """The harness's stdin: each test as its length in UTF-8 bytes, a newline and its text."""
    return "".join(f"{len(test.encode('utf-8', 'surrogatepass'))}\n{test}" for test in tests)


def compiles(source: str) -> bool:
    """Whether ``source`` parses as Python; parsing never executes it.

    >>> compiles("def f(x): return x"), compiles("def f(x) return x"), compiles("a\\0")
    (True, False, False)
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escapes: the sandbox's business
            ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def unit_test_fraction(
    responses: list[str],
    tests: list[list[str]],
    *,
    entry: list[str] | None = None,
    pool: SandboxPool | None = None,
) -> list[float]:
    """The fraction of its problem's tests that each response passes.

    ``tests[i]`` are assert statements run against ``responses[i]`` (a fence
    is stripped first); ``entry[i]``, if given, names the function the
    response must define, otherwise every test fails. A response that does not
    parse, crashes before defining anything, or runs out of time scores 0.0.
    Without a ``pool``, the module's shared one is used.

    >>> tests = [["assert add(2, 3) == 5", "assert add(0, 0) == 0"]] * 3
    >>> unit_test_fraction(["def add(a, b):\\n    return a + b",
    ...                     "def add(a, b):\\n    return a * b",
    ...                     "print('PASS')"], tests, entry=["add"] * 3)
    [1.0, 0.5, 0.0]
    """
    entry = [None] * len(responses) if entry is None else entry
    if not len(responses) == len(tests) == len(entry):
        raise ValueError(f"unit_test_fraction got {len(responses)} responses, "
                         f"{len(tests)} test lists and {len(entry)} entries")
    if any(len(problem_tests) == 0 for problem_tests in tests):
        raise ValueError("every problem needs at least one test")
    pool = pool or default_pool()
    sources = [strip_fence(response) for response in responses]
    # Text that does not parse cannot pass a test: score it without a subprocess.
    runs = {
        index: pool.submit(harness(source, entry[index]), encode_tests(tests[index]),
                           timeout=TIMEOUT_SECONDS, cpu_seconds=CPU_SECONDS,
                           preload={HARNESS_MODULE: HARNESS})
        for index, source in enumerate(sources)
        if compiles(source)
    }
    return [
        _fraction(runs[index].result(), len(tests[index])) if index in runs else 0.0
        for index in range(len(responses))
    ]


def _fraction(result: SandboxResult, n_tests: int) -> float:
    """The share of the ``n_tests`` tests that T reported passed."""
    if result.timed_out:
        return 0.0
    passed = {f"{index}:PASS" for index in range(n_tests)}
    return len(passed & set(result.stdout.splitlines())) / n_tests


def unit_tests(responses: list[str], answers: list[list[str]]) -> list[float]:
    """The registry's form of ``unit_test_fraction``: an answer is its problem's tests.

    >>> unit_tests(["def f(x):\\n    return x*3+1", "def f(x):\\n    return x*3"],
    ...            [["assert f(0) == 1", "assert f(2) == 7"]] * 2)
    [1.0, 0.0]
    """
    if len(responses) != len(answers):
        raise ValueError(f"unit_tests got {len(responses)} responses but {len(answers)} answers")
    return unit_test_fraction(responses, [list(tests) for tests in answers])


_default_pool: SandboxPool | None = None
_default_pool_lock = threading.Lock()


def default_pool() -> SandboxPool:
    """The pool shared by verifiers called without one; made on first use.

    Made lazily so that importing the rewards starts no threads. Its threads
    are joined when the interpreter exits.
    """
    global _default_pool
    with _default_pool_lock:
        if _default_pool is None:
            _default_pool = SandboxPool(workers=2)
        return _default_pool
