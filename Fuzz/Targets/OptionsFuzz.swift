import BiounlockCore

// Fuzz target: the one option parser (module arguments, config file, CLI globals).
//
// Input: fields separated by NUL bytes. The first is the text of the config file; each of the
// others is one word of the pam.d line (invalid UTF-8 is decoded lossily: the module refuses
// such words earlier, so this is a superset). Nothing may trap, and every value that ends up in
// Options stays inside its documented range (README, "Configuration reference").
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOptions(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let fields = UnsafeBufferPointer(start: data, count: size)
        .split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let configText = fields.first ?? ""
    let words = Array(fields.dropFirst())

    guard case .success(let loaded) = Configuration.load(arguments: words, readFile: { _ in .success(configText) }) else {
        fatalError("a readable config file never makes loading fail")
    }
    let o = loaded.options
    for diagnostic in loaded.diagnostics { _ = diagnostic.description }
    precondition((1...120).contains(o.timeoutSeconds), "timeout out of range")
    precondition((1...10).contains(o.maxTries), "max_tries out of range")
    precondition((1...1000).contains(o.biometricLockout) && (1...1000).contains(o.passcodeLockout), "lockout out of range")
    precondition(o.biometricUnlockSeconds > 0, "bio_unlock_time must be positive")
    precondition(o.requirePasscode.maximumAgeSeconds.map { $0 > 0 } ?? true, "require_passcode age must be positive")
    for path in [o.storePath, o.configPath, o.lidPath, o.logindPath] + (o.simSocket.map { [$0] } ?? []) {
        precondition(path.utf8.first == UInt8(ascii: "/") && !path.utf8.contains(0), "paths stay absolute, without NUL")
    }
    precondition(o.reason.utf8.count <= 200 && o.reason.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7f }, "reason is bounded, printable")

    // What the module and the CLI derive from the options.
    _ = Messages.touchPrompt(template: o.reason, service: configText)
    let rules = o.requirePasscode.description
    precondition(PasscodeRequirementRules(parsing: rules) == o.requirePasscode, "require_passcode round-trips")
    for word in words.prefix(8) {
        if let seconds = parseDuration(word) { _ = formatDuration(seconds) }
        _ = sanitizedForLog(word)
    }
    _ = OptionParser.configPath(in: words)
    return 0
}
