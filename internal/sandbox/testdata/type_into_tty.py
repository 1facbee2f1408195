# What a hostile command tries against the terminal darman runs in: type
# a line into it (TIOCSTI), which the user's shell would read and run,
# outside the sandbox, once darman exits. It prints what it got.
import fcntl, os, termios

try:
    fd = os.open("/dev/tty", os.O_RDWR)
except OSError as e:
    print("TYPED-NOTHING no terminal:", e.strerror)
    raise SystemExit
for c in b"echo TYP" b"ED-LINE\n":
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
    except OSError as e:
        print("TYPED-NOTHING TIOCSTI:", e.strerror)
        break
else:
    print("TYPED-A-LINE")
# Then hang the terminal up (vhangup, root's): the kernel sends SIGHUP to
# the session's leader and foreground group, darman among them.
libc = __import__("ctypes").CDLL(None, use_errno=True)
if libc.vhangup() == 0:
    print("HUNG-UP", flush=True)
else:
    print("NOT-HUNG-UP", os.strerror(__import__("ctypes").get_errno()), flush=True)
