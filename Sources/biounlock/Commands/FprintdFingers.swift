import BiounlockCore
import BiounlockSensors

/// sensor=fprintd: the store holds no prints; `status` and `list` show the fingers fprintd holds
/// for each user (one helper asks for all of them).
enum FprintdFingers {
    /// Adds each user's fprintd fingers to their record (as templates without data, sensor
    /// fprintd); returns why fprintd could not be asked, if it could not.
    static func add(to records: inout [UserRecord], options: Options) -> String? {
        guard !records.isEmpty else { return nil }
        switch Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).fprintdFingers(options, users: records.map(\.name)) {
        case .failure(let why):
            return why.description
        case .success(let byUser):
            for i in records.indices {
                records[i].templates += (byUser[records[i].name] ?? []).flatMap(\.templates)
            }
            return nil
        }
    }
}
