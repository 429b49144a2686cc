import BiounlockCore

/// Opens the reader that `sensor=` names.
public struct Sensors: SensorProvider {
    public init() {}

    public func open(_ options: Options) -> Result<FingerprintSensor, SensorUnavailable> {
        switch options.sensor {
        case .simulated:
            guard let path = options.simSocket else {
                return .failure(SensorUnavailable("sensor=simulated needs sim_socket=PATH"))
            }
            return SimulatedSensor.listen(at: path).map { $0 }
        case .libfprint:
            // The libfprint backend is the next step (see README, "Sensors"); until it lands,
            // a libfprint reader is reported as unavailable so the stack falls back at once.
            return .failure(SensorUnavailable("the libfprint backend is not included in this build"))
        }
    }
}
