/// The introspection data biounlockd registers (GDBus checks every call's arguments against it
/// before a handler runs). The same text as data/dbus/org.biounlock.Manager1.xml, the file that is
/// installed in /usr/share/dbus-1/interfaces/ and read by people; `ManagerInterfaceTests` fails
/// when the two differ. Edit the file, then paste it here.
public enum ManagerInterface {
    public static let xml = """
<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
<!--
  org.biounlock.Manager1: biounlockd, a user's own biometric unlock without root.
  Bus name org.biounlock.Manager1 on the system bus, object /org/biounlock/Manager1.

  The caller is who the bus says (GetConnectionCredentials), never an argument. Every `user`
  argument is "" for the caller's own account, or a user name: the caller's own (by uid) is the
  same as "", anyone else's needs polkit's org.biounlock.manage-others (administrators, after
  authenticating). Reading one's own record needs nothing; changing it needs polkit's
  org.biounlock.manage-own (active local sessions), and every change but Disable needs a fresh
  re-authentication of the connection (Authenticate: the Unix password or the current biounlock
  passcode, never a finger), which lasts a few minutes.

  Errors: org.biounlock.Manager1.Error.NotAuthorized, AuthenticationRequired,
  AuthenticationFailed, TooManyAttempts (the message begins with the seconds to wait),
  InvalidArgument, InvalidPasscode, NoSuchUser, NotEnrolled, OtherAccount, Busy, Unavailable,
  Failed. Their messages are English, for logs; clients show their own words by error name.
  Documented in biounlockd(8) and docs/DESIGN.md ("biounlockd").
-->
<node>
  <interface name="org.biounlock.Manager1">
    <!-- The account's record: see biounlockd(8) for every key (enabled, services, fingers,
         passcode, lockouts with what clears them, passcode_required, authenticated_for, ...). -->
    <method name="GetStatus">
      <arg name="user" type="s" direction="in"/>
      <arg name="status" type="a{sv}" direction="out"/>
    </method>
    <!-- The account's audit rows, newest first: since (0: all), limit (0: 50, at most 1000).
         Each: time, service, tty, rhost, method, outcome, reason. -->
    <method name="GetEvents">
      <arg name="user" type="s" direction="in"/>
      <arg name="since" type="x" direction="in"/>
      <arg name="limit" type="u" direction="in"/>
      <arg name="events" type="a(xssssss)" direction="out"/>
    </method>
    <!-- What stands in the way of turning biometric unlock on (for `service`, or "" for all):
         (code, detail) pairs, codes no-reader, readers-unavailable, fprintd-unavailable,
         no-finger, no-passcode, other-account. Empty: it can be turned on. -->
    <method name="CheckEnable">
      <arg name="user" type="s" direction="in"/>
      <arg name="service" type="s" direction="in"/>
      <arg name="missing" type="a(ss)" direction="out"/>
    </method>
    <!-- Re-authenticates the caller with the secret read from `secret`, a pipe (or socket)
         whose other end the caller writes and closes (at most 512 bytes, within 2 s): the
         Unix password or the current biounlock passcode, through /etc/pam.d/biounlock-reauth.
         Grants `seconds` of changes to this connection. Failures are counted and slowed. -->
    <method name="Authenticate">
      <arg name="secret" type="h" direction="in"/>
      <arg name="seconds" type="u" direction="out"/>
    </method>
    <!-- Turns biometric unlock on: `service` "" for the user's toggle (every service without
         a setting of its own), a PAM service name for that one, "@sudo" or "@login" for a group
         of services (run a command as root; log in and unlock the screen) in one change, "@all"
         for everywhere (the toggle, and every per-service setting removed). When something is
         missing, nothing changes: enabled is false and `missing` says what (as CheckEnable). -->
    <method name="Enable">
      <arg name="user" type="s" direction="in"/>
      <arg name="service" type="s" direction="in"/>
      <arg name="enabled" type="b" direction="out"/>
      <arg name="missing" type="a(ss)" direction="out"/>
    </method>
    <!-- Turns it off (`service` as for Enable). Needs no re-authentication. -->
    <method name="Disable">
      <arg name="user" type="s" direction="in"/>
      <arg name="service" type="s" direction="in"/>
    </method>
    <!-- Sets or changes the passcode: kind pin, password or pattern (3x3 grid path as digits
         1-9); the passcode is read from `secret` as for Authenticate. -->
    <method name="SetPasscode">
      <arg name="user" type="s" direction="in"/>
      <arg name="kind" type="s" direction="in"/>
      <arg name="secret" type="h" direction="in"/>
    </method>
    <method name="RemovePasscode">
      <arg name="user" type="s" direction="in"/>
    </method>
    <!-- Starts enrolling `finger` (fprintd's names, or short forms such as right-index) with
         the configured sensor; timeout in seconds (0: 60, at most 600). Progress comes as the
         signals below, sent to the caller only. One enrolment per caller and per reader. -->
    <method name="StartEnrolment">
      <arg name="user" type="s" direction="in"/>
      <arg name="finger" type="s" direction="in"/>
      <arg name="timeout" type="u" direction="in"/>
    </method>
    <!-- Cancels the caller's enrolment (EnrolFinished "cancelled"); nothing is stored. -->
    <method name="CancelEnrolment"/>
    <!-- Removes one finger, or all when `finger` is "". -->
    <method name="DeleteFingers">
      <arg name="user" type="s" direction="in"/>
      <arg name="finger" type="s" direction="in"/>
      <arg name="removed" type="u" direction="out"/>
    </method>
    <!-- Clears failure counters and lockouts: which "" (both), "biometric" or "passcode". -->
    <method name="ResetLockouts">
      <arg name="user" type="s" direction="in"/>
      <arg name="which" type="s" direction="in"/>
    </method>
    <!-- Drops the Unix password kept for the boot (keep_password); no proof needed. -->
    <method name="ForgetPassword">
      <arg name="user" type="s" direction="in"/>
      <arg name="dropped" type="b" direction="out"/>
    </method>
    <!-- Touch `done` of `total` taken (0 of `total` when the reader is ready). -->
    <signal name="EnrolStage">
      <arg name="finger" type="s"/>
      <arg name="done" type="u"/>
      <arg name="total" type="u"/>
    </signal>
    <!-- A touch that did not count: general, too-short, center-finger, remove-finger,
         different-finger. -->
    <signal name="EnrolRetry">
      <arg name="finger" type="s"/>
      <arg name="reason" type="s"/>
    </signal>
    <!-- The end: result done (stored), failed (detail says why) or cancelled. -->
    <signal name="EnrolFinished">
      <arg name="finger" type="s"/>
      <arg name="result" type="s"/>
      <arg name="detail" type="s"/>
    </signal>
    <!-- The service's version (the package's). -->
    <property name="Version" type="s" access="read"/>
  </interface>
</node>
"""
}
