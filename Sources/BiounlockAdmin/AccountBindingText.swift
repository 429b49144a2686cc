import BiounlockCore

extension AccountBinding {
    /// `problem(user:)` for a person reading `biounlock status`, `list`, `doctor` or an error, in
    /// their language (problem(user:) stays English: syslog and JSON).
    public func localizedProblem(user: String) -> String {
        switch self {
        case .bound:
            return ""
        case .otherAccount(let recordUID?, let accountUID):
            return L("the biounlock record of {user} belongs to uid {record_uid}, but {user} is uid {uid} now (the name was given to another account?): biometric unlock is off for {user}",
                     ["user": user, "record_uid": String(recordUID), "uid": String(accountUID)])
        case .otherAccount(nil, let accountUID):
            return L("the biounlock record of {user} belongs to no account, but {user} is uid {uid} now (the name was given to another account?): biometric unlock is off for {user}",
                     ["user": user, "uid": String(accountUID)])
        case .noAccount(let recordUID?):
            return L("the biounlock record of {user} belongs to uid {record_uid}, and no account is named {user} now",
                     ["user": user, "record_uid": String(recordUID)])
        case .noAccount(nil):
            return L("the biounlock record of {user} belongs to no account, and no account is named {user} now", ["user": user])
        }
    }
}
