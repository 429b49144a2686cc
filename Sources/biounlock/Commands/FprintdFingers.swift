import BiounlockCore
import BiounlockSensors
import BiounlockStore
import BiounlockFprintProtocol

/// sensor=fprintd: the store holds no prints; `status` and `list` show the fingers fprintd holds
/// for each user (one helper asks for all of them).
enum FprintdFingers {
    /// Adds each user's fprintd fingers to their record (as templates without data, sensor
    /// fprintd); returns why fprintd could not be asked, if it could not. A set that is not the
    /// one biounlock last saw (FprintdPrints) is shown as the enrolment change the module will
    /// record when it next opens the reader (the record's enrolment version one ahead, in this
    /// copy only), so that `status` says the passcode will be required, as the module decides.
    static func add(to records: inout [UserRecord], options: Options) -> String? {
        guard !records.isEmpty else { return nil }
        switch Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).fprintdFingers(options, users: records.map(\.name)) {
        case .failure(let why):
            return why.description
        case .success(let byUser):
            for i in records.indices {
                let held = (i < byUser.count ? byUser[i] : []).flatMap(\.templates)
                records[i].templates += held
                if !held.isEmpty, FprintdPrints.afterListing(held, stored: records[i].fprintdPrints) != nil {
                    records[i].enrolmentVersion &+= 1
                }
            }
            return nil
        }
    }
}

/// sensor=fprintd: what the CLI records of the prints fprintd holds (FprintdPrints), so that the
/// module tells changes made in fprintd from the ones made through biounlock.
enum FprintdPrintsRecord {
    /// The prints fprintd holds for `user` now, on every device (nil when fprintd cannot be asked).
    static func listed(_ options: Options, user: String) -> String? {
        guard case .success(let devices) = Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).fprintdFingers(options, user: user)
        else { return nil }
        return FprintdPrints.text(devices.flatMap(\.templates))
    }

    /// `enable`: `devices` as listed is the first set biounlock knows for the user, or, when it
    /// differs from the set biounlock last saw, a change of the enrolled set.
    static func afterListing(_ devices: [FprintdReader], user: String, stored: String?, store: Store) throws(StoreFailure) {
        guard let prints = FprintdPrints.afterListing(devices.flatMap(\.templates), stored: stored) else { return }
        if stored == nil {
            try store.recordFirstFprintdPrints(user: user, prints: prints)
        } else {
            try store.noteFprintdPrints(user: user, prints: prints)
        }
    }
}
