# What a hostile command tries against the darman that started it from a
# confined thread: SIGKILL to each of darman's threads by every system
# call that signals (the pid also with its high half set, which the kernel
# drops), a file whose owner is a thread of darman's (the kernel signals
# it when the file is ready, with F_SETSIG's signal), new resource limits
# (RLIMIT_CPU 0 has the kernel kill it), and darman's memory at ADDR
# (LEN bytes) through process_vm_readv. Each attempt prints what it got;
# darman must outlive them all. Arguments: DARMAN_PID [ADDR LEN] (the
# shell's $PPID: this script's own parent is the shell).
import ctypes, fcntl, os, platform, socket, sys

NR = {
    "x86_64": dict(kill=62, tkill=200, tgkill=234, sigqueue=129, tgsigqueue=297, pidfd_open=434,
                   pidfd_send=424, fcntl=72, ioctl=16, prlimit=302, vm_readv=310),
    "aarch64": dict(kill=129, tkill=130, tgkill=131, sigqueue=138, tgsigqueue=240, pidfd_open=434,
                    pidfd_send=424, fcntl=25, ioctl=29, prlimit=261, vm_readv=270),
}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
SIGKILL, F_SETSIG, F_SETOWN, F_SETOWN_EX, FIOSETOWN, PIDFD_THREAD = 9, 10, 8, 15, 0x8901, os.O_EXCL
keep = []


def sc(name, *args):
    r = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) for a in args])
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())


def ptr(obj):
    keep.append(obj)
    return ctypes.addressof(obj)


def siginfo():
    b = ctypes.create_string_buffer(128)
    ctypes.memmove(b, (ctypes.c_int * 3)(SIGKILL, 0, -1), 12)  # si_code SI_QUEUE
    return ptr(b)


def async_owner(owner):
    r, w = os.pipe()
    got = owner(r)
    fcntl.fcntl(r, F_SETSIG, SIGKILL)
    fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)
    os.write(w, b"x")
    return got


def socket_owner(t):
    a, b = socket.socketpair()
    keep.append((a, b))
    got = sc("ioctl", a.fileno(), FIOSETOWN, ptr(ctypes.c_int(t)))
    fcntl.fcntl(a.fileno(), F_SETSIG, SIGKILL)
    fcntl.fcntl(a.fileno(), fcntl.F_SETFL, os.O_ASYNC)
    b.send(b"x")
    return got


def pidfd(t, flags):
    fd = libc.syscall(ctypes.c_long(NR["pidfd_open"]), ctypes.c_long(t), ctypes.c_long(flags))
    if fd < 0:
        return "pidfd_open: " + os.strerror(ctypes.get_errno())
    return sc("pidfd_send", fd, SIGKILL, 0, 0)


def procdir(t):
    try:
        fd = os.open("/proc/%d" % t, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        return "open: " + e.strerror
    return sc("pidfd_send", fd, SIGKILL, 0, 0)


def vm_read(t, addr, n):
    buf = ctypes.create_string_buffer(n)
    local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), n)
    remote = (ctypes.c_void_p * 2)(addr, n)
    r = sc("vm_readv", t, ptr(local), 1, ptr(remote), 1, 0)
    return r + " " + buf.raw.decode("latin-1") if r == "ok" else r


P = int(sys.argv[1])
try:
    tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % P))
except OSError:
    # In the sandbox's PID namespace the victim is not in /proc.
    tids = sorted(int(t) for t in os.environ["VICTIM_TIDS"].split(","))
attempts = [
    ("kill", lambda t: sc("kill", t, SIGKILL)),
    ("kill-high-half", lambda t: sc("kill", (1 << 32) | t, SIGKILL)),
    ("tkill", lambda t: sc("tkill", t, SIGKILL)),
    ("tgkill", lambda t: sc("tgkill", P, t, SIGKILL)),
    ("tgkill-high-half", lambda t: sc("tgkill", P, (7 << 32) | t, SIGKILL)),
    ("rt_sigqueueinfo", lambda t: sc("sigqueue", t, SIGKILL, siginfo())),
    ("rt_tgsigqueueinfo", lambda t: sc("tgsigqueue", P, t, SIGKILL, siginfo())),
    ("pidfd_open", lambda t: pidfd(t, 0)),
    ("pidfd_open-thread", lambda t: pidfd(t, PIDFD_THREAD)),
    ("proc-dir-pidfd", procdir),
    ("F_SETOWN", lambda t: async_owner(lambda fd: sc("fcntl", fd, F_SETOWN, t))),
    ("F_SETOWN_EX", lambda t: async_owner(lambda fd: sc("fcntl", fd, F_SETOWN_EX, ptr((ctypes.c_int * 2)(0, t))))),
    ("FIOSETOWN", socket_owner),
    ("prlimit-cpu", lambda t: sc("prlimit", t, 0, ptr((ctypes.c_ulong * 2)(0, 0)), 0)),
]
if len(sys.argv) > 3:
    attempts.append(("process_vm_readv", lambda t: vm_read(t, int(sys.argv[2]), int(sys.argv[3]))))
for name, attempt in attempts:
    for t in tids:
        print("ATTEMPT", name, t, attempt(t), flush=True)
print("TRIED-EVERY-SIGNAL", flush=True)
