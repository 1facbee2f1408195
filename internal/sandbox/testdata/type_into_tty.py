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
