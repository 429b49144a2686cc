#!/usr/bin/python3
# hostile-dbus.py: what a local user can throw at biounlockd over the system bus, run as that
# user (Tests/EndToEnd/service.sh). Prints one "CASE name: result" line per case; the shell
# side checks them and that the service's pid is the same afterwards (no crash, no restart).
# Uses Debian's python3-gi (Gio) for well-formed calls, and a raw socket for what GDBus refuses
# to send (a string that is not UTF-8).
import os, socket, struct, sys, threading, time
from gi.repository import Gio, GLib

NAME, PATH, IFACE = "org.biounlock.Manager1", "/org/biounlock/Manager1", "org.biounlock.Manager1"
bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)


def error_name(e):
    remote = Gio.DBusError.get_remote_error(e)
    return remote or e.message


def call(method, sig, args, fds=None, timeout=20000):
    # The list takes its descriptors over: it gets copies, the caller keeps (and closes) its own.
    fdlist = Gio.UnixFDList.new_from_array([os.dup(f) for f in fds]) if fds else None
    try:
        reply, _ = bus.call_with_unix_fd_list_sync(NAME, PATH, IFACE, method,
                                                    GLib.Variant(sig, args) if sig else None,
                                                    None, Gio.DBusCallFlags.NONE, timeout, fdlist, None)
        return "ok " + str(reply.unpack())[:60]
    except GLib.Error as e:
        return error_name(e)


def case(name, result):
    print("CASE %s: %s" % (name, result), flush=True)


def service_pid():
    r = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                      "GetConnectionUnixProcessID", GLib.Variant("(s)", (NAME,)), None, 0, 5000, None)
    return r.unpack()[0]


def raw_get_status(user):
    """GetStatus(user) marshalled by hand: `user` may be bytes that are not UTF-8."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("/run/dbus/system_bus_socket")
    s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not s.recv(256).startswith(b"OK"):
        return "auth refused"
    s.sendall(b"BEGIN\r\n")

    def pad(b, n):
        return b + b"\0" * ((-len(b)) % n)

    def string(v):
        return struct.pack("<I", len(v)) + v + b"\0"

    def field(code, sig, value):
        return struct.pack("<B", code) + struct.pack("<B", len(sig)) + sig.encode() + b"\0" + value

    def message(serial, path, iface, member, dest, sig=None, body=b""):
        items = [field(1, "o", string(path)), field(3, "s", string(member)), field(6, "s", string(dest))]
        if iface:
            items.append(field(2, "s", string(iface)))
        if sig:
            items.append(field(8, "g", struct.pack("<B", len(sig)) + sig.encode() + b"\0"))
        # Each element starts 8-aligned; the array's length ends with the last element.
        fields = b"".join(pad(x, 8) for x in items[:-1]) + items[-1]
        head = struct.pack("<cBBBII", b"l", 1, 0, 1, len(body), serial) + struct.pack("<I", len(fields)) + fields
        return pad(head, 8) + body

    s.sendall(message(1, b"/org/freedesktop/DBus", b"org.freedesktop.DBus", b"Hello", b"org.freedesktop.DBus"))
    s.sendall(message(2, PATH.encode(), IFACE.encode(), b"GetStatus", NAME.encode(), "s", string(user)))
    s.settimeout(5)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"account_matches" in data:
                break
    except socket.timeout:
        pass
    s.close()
    return "answered" if b"account_matches" in data else "disconnected by the bus"


def main():
    before = service_pid()
    case("pid", before)
    case("wrong-types", call("GetStatus", "(u)", (7,)))
    case("too-many-arguments", call("GetStatus", "(ss)", ("", "")))
    case("unknown-method", call("Frobnicate", None, None))
    case("huge-string", call("GetStatus", "(s)", ("a" * (1 << 20),)))
    case("control-characters", call("GetStatus", "(s)", ("\x01\x02../../etc",)))
    case("raw-utf8", raw_get_status(b""))
    case("invalid-utf8", raw_get_status(b"\xff\xfe\xc0 not utf-8"))
    case("secret-in-an-argument", call("Authenticate", "(s)", ("hunter2",)))
    case("handle-without-descriptor", call("Authenticate", "(h)", (0,)))
    r, w = os.pipe(); os.close(w)
    case("closed-descriptor", call("Authenticate", "(h)", (0,), fds=[r])); os.close(r)
    # A writer that keeps its end open and never writes: refused when the read time runs out.
    r, w = os.pipe()
    t0 = time.monotonic()
    case("silent-descriptor", call("Authenticate", "(h)", (0,), fds=[r]))
    case("silent-descriptor-seconds", "%d" % round(time.monotonic() - t0))
    os.close(r); os.close(w)
    # An endless stream: refused as too long, not read to the end.
    r, w = os.pipe()
    stop = threading.Event()

    def feed():
        try:
            while not stop.is_set():
                os.write(w, b"x" * 4096)
        except OSError:
            pass
    threading.Thread(target=feed, daemon=True).start()
    case("endless-descriptor", call("Authenticate", "(h)", (0,), fds=[r]))
    stop.set(); os.close(r)
    f = os.open("/etc/hostname", os.O_RDONLY)
    case("file-descriptor", call("Authenticate", "(h)", (0,), fds=[f])); os.close(f)
    case("bad-finger", call("StartEnrolment", "(ssu)", ("", "seventh-finger", 0)))
    case("bad-kind", call("SetPasscode", "(ssh)", ("", "hex", 0)))
    # A flood from one connection: re-authentications that each hold a silent pipe 2 s.
    loop = GLib.MainLoop()
    results, pipes = [], []
    total = 60

    def done(conn, res, _data):
        try:
            conn.call_with_unix_fd_list_finish(res)
            results.append("ok")
        except GLib.Error as e:
            results.append(error_name(e))
        if len(results) == total:
            loop.quit()
    t0 = time.monotonic()
    for _ in range(total):
        r, w = os.pipe()
        pipes += [r, w]
        bus.call_with_unix_fd_list(NAME, PATH, IFACE, "Authenticate", GLib.Variant("(h)", (0,)), None,
                                   Gio.DBusCallFlags.NONE, 30000, Gio.UnixFDList.new_from_array([os.dup(r)]), None, done, None)
    GLib.timeout_add_seconds(40, loop.quit)
    loop.run()
    for p in pipes:
        os.close(p)
    busy = sum(1 for x in results if x.endswith(".Busy"))
    case("flood-replies", "%d of %d" % (len(results), total))
    case("flood-busy", "%d" % busy)
    case("flood-ok", "%d" % results.count("ok"))
    case("flood-seconds", "%d" % round(time.monotonic() - t0))
    case("after", call("GetStatus", "(s)", ("",)))
    case("same-pid", "yes" if service_pid() == before else "no: %s" % service_pid())


main()
