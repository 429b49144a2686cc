import XCTest
@testable import BiounlockSystem
final class PlaceholderTests: XCTestCase { func testNothing() {} }
