import XCTest
@testable import BiounlockCore

/// The libfprint keys of the shared option table.
final class FprintOptionTests: XCTestCase {
    func testDefaults() {
        let o = Options()
        XCTAssertEqual(o.fprintHelper, "/usr/libexec/biounlock/biounlock-fprint")
        XCTAssertEqual(o.fprintdHelper, "/usr/libexec/biounlock/biounlock-fprintd")
        XCTAssertTrue(Options.keyNames.contains("fprintd_helper"))
        XCTAssertNil(o.fprintDevice)
        XCTAssertNil(o.fprintVirtualDevice)
        XCTAssertNil(o.fprintVirtualDeviceStorage)
        XCTAssertTrue(Options.keyNames.contains("fprint_helper"))
    }

    func testValuesFromArgumentsAndTheConfigFile() {
        var o = Options()
        XCTAssertEqual(OptionParser.apply(arguments: ["fprint_helper=/opt/b/helper", "fprint_device=virtual_device/0",
                                                      "fprint_virtual_device=/run/t/vd", "fprintd_helper=/opt/b/fprintd-helper"], to: &o), [])
        XCTAssertEqual(o.fprintHelper, "/opt/b/helper")
        XCTAssertEqual(o.fprintdHelper, "/opt/b/fprintd-helper")
        XCTAssertEqual(o.fprintDevice, "virtual_device/0")
        XCTAssertEqual(o.fprintVirtualDevice, "/run/t/vd")
        XCTAssertEqual(OptionParser.apply(configText: "fprint_virtual_device_storage = /run/t/vds\n", path: "c", to: &o), [])
        XCTAssertEqual(o.fprintVirtualDeviceStorage, "/run/t/vds")
    }

    func testInvalidValuesKeepTheDefault() {
        var o = Options()
        let long = "/" + String(repeating: "s", count: 107)
        let d = OptionParser.apply(arguments: ["fprint_helper=relative", "fprint_device=has space", "fprint_device=",
                                               "fprint_virtual_device=\(long)", "fprint_virtual_device_storage=vds", "fprintd_helper=helper"], to: &o)
        XCTAssertEqual(d.count, 6)
        XCTAssertEqual(o, Options())
        XCTAssertEqual(d[3].kind, .invalidValue(key: "fprint_virtual_device", accepts: "an absolute socket path of at most 107 bytes"))
    }

    func testWithKeyUsesTheSameTable() {
        XCTAssertEqual(Options().with(key: "fprint_device", value: "synaptics")?.fprintDevice, "synaptics")
        XCTAssertNil(Options().with(key: "fprint_device", value: "a b"))
        XCTAssertNil(Options().with(key: "no_such_key", value: "x"))
    }
}
