/// PAM service names as the CLI accepts them (`enable --service`, `disable --service`, `verify
/// --service`, `log --service`): the name of a file in /etc/pam.d, as Linux-PAM looks it up --
/// letters, digits, '.', '_', '+' and '-', not starting with '.', at most 128 bytes. One rule
/// for every command, so that a service enabled can always be named again to disable it.
///
/// The module takes PAM_SERVICE as its caller set it (it only compares it with the stored
/// names, and logs it sanitized): a host's odd name can match nothing the CLI stored.
public enum ServiceName {
    public static let maximumLength = 128

    public static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, first != UInt8(ascii: "."), bytes.count <= maximumLength else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
        }
    }
}
