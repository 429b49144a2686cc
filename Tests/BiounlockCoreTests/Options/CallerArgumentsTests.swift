import XCTest
import BiounlockCore

/// biounlock-check takes from its caller's pam.d words only what cannot widen what the caller
/// can do (Options.applyingCallerArguments); every path, sensor, count and rule stays the file's.
final class CallerArgumentsTests: XCTestCase {
    var file: Options {
        var o = Options()
        o.storePath = "/var/lib/biounlock/biounlock.db"
        o.sensor = .simulated
        o.simSocket = "/run/biounlock-sim/s"
        return o
    }

    func testPathsSensorsCountsAndRulesAreNeverTaken() {
        let hostile = ["db=/tmp/evil.db", "config=/proc/self/environ", "sim_socket=/tmp/mine", "sensor=libfprint",
                       "fprint_helper=/tmp/helper", "fprintd_helper=/tmp/fhelper", "fprint_virtual_device=/tmp/vd", "fprint_virtual_device_storage=/tmp/vds",
                       "fprint_device=evil", "check_helper=/tmp/check", "passcode_lockout=1000", "bio_lockout=1000",
                       "bio_unlock_time=1s", "require_passcode=none", "lid_path=/tmp", "lid_usb_path=/tmp",
                       "lid_reader_ids=/tmp/ids", "logind_path=/tmp", "proc_path=/tmp", "log_retention=1s", "log_max_events=100", "debug", "no_such_key=1", "timeout=abc"]
        let (options, ignored) = file.applyingCallerArguments(hostile)
        XCTAssertEqual(options, file, "nothing of it taken")
        XCTAssertEqual(ignored, ["db", "config", "sim_socket", "sensor", "fprint_helper", "fprintd_helper", "fprint_virtual_device",
                                 "fprint_virtual_device_storage", "fprint_device", "passcode_lockout",
                                 "bio_lockout", "bio_unlock_time", "require_passcode", "lid_path", "lid_usb_path", "lid_reader_ids", "logind_path",
                                 "proc_path", "log_retention", "log_max_events", "debug", "no_such_key", "timeout"])
    }

    func testTheModulesOwnKeyIsDroppedQuietly() {
        let (options, ignored) = file.applyingCallerArguments(["check_helper=/usr/libexec/biounlock/biounlock-check"])
        XCTAssertEqual(options, file)
        XCTAssertEqual(ignored, [], "check_helper= is the module's: nothing to log on every unlock")
    }

    func testWhatIsShownAndHowLongTheReaderWaitsAreTaken() {
        let (options, ignored) = file.applyingCallerArguments(["touch_first=0", "timeout=20", "max_tries=2", "prompt=sequential",
                                                               "reason=Unlock %s"])
        XCTAssertEqual(ignored, [])
        XCTAssertEqual(options.touchFirstSeconds, 0)
        XCTAssertEqual(options.timeoutSeconds, 20)
        XCTAssertEqual(options.maxTries, 2)
        XCTAssertEqual(options.prompt, .sequential)
        XCTAssertEqual(options.reason, "Unlock %s")
        XCTAssertEqual(Options.callerKeyNames, ["policy", "timeout", "max_tries", "remote", "lid", "prompt", "touch_first", "reason"])
    }

    func testPolicyRemoteAndLidOnlyWhenStricter() {
        var loose = file
        loose.remote = .allow
        loose.lid = .ignore
        let (strict, none) = loose.applyingCallerArguments(["policy=biometrics", "remote=passcode", "lid=skip"])
        XCTAssertEqual(none, [])
        XCTAssertEqual(strict.policy, .biometrics)
        XCTAssertEqual(strict.remote, .passcode)
        XCTAssertEqual(strict.lid, .skip)

        var tight = file
        tight.policy = .biometrics
        tight.remote = .ignore
        let (same, refused) = tight.applyingCallerArguments(["policy=biometrics-or-passcode", "remote=allow", "remote=passcode", "lid=ignore"])
        XCTAssertEqual(same, tight, "nothing looser than the file")
        XCTAssertEqual(refused, ["policy", "remote", "remote", "lid"])
    }
}
