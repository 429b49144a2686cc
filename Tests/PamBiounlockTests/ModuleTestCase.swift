import XCTest
import Foundation

/// The base of the test classes that run the built module through libpam with one
/// ModuleFixture each: a fresh store with the default user enrolled, then `prepare()` -- by
/// default the `biotest` service with the module's defaults; a class overrides it for its own
/// service lines, backend or files. The fixture is dropped after each test: XCTest on Linux keeps
/// test instances alive, and the fixture's deinit removes its directory.
class ModuleTestCase: XCTestCase {
    var fixture: ModuleFixture!

    /// What the class needs beyond the enrolled user (runs after the fixture is made).
    func prepare() throws {
        try fixture.service()
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        XCTAssertTrue(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first: \(modulePath) is missing")
        fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        try prepare()
    }

    override func tearDown() {
        fixture = nil
        super.tearDown()
    }
}
