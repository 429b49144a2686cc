import Foundation

/// A fresh directory that passes the store's trust checks (root-owned, 0700).
public func makeTrustedTemporaryDirectory() throws -> String {
    var template = Array("/tmp/biounlock-test.XXXXXX".utf8CString)
    guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    return String(cString: p)
}
