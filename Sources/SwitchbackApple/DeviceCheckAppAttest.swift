#if canImport(DeviceCheck)
    public import DeviceCheck
    public import Foundation
    public import Switchback

    /// App Attest through DeviceCheck's `DCAppAttestService`, for ``AppAttestation``: the three calls, and
    /// `DCError.Code.invalidKey` as `appAttestKeyInvalid` (the core then attests a new key once). Every
    /// decision is in the core. The app needs the App Attest entitlement (`com.apple.developer.devicecheck.appattest-environment`).
    public struct DeviceCheckAppAttest: AppAttestService {
        private let service: @Sendable () -> DCAppAttestService

        /// `service` gives the instance to call (the shared one unless a test gives its own).
        public init(service: @escaping @Sendable () -> DCAppAttestService = { DCAppAttestService.shared }) {
            self.service = service
        }

        public var isSupported: Bool { service().isSupported }

        public func generateKey() async throws -> String {
            try await mapped { try await service().generateKey() }
        }

        public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await mapped { try await service().attestKey(keyID, clientDataHash: clientDataHash) }
        }

        public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await mapped { try await service().generateAssertion(keyID, clientDataHash: clientDataHash) }
        }

        private func mapped<T: Sendable>(_ call: () async throws -> T) async throws -> T {
            do {
                return try await call()
            } catch let error as DCError where error.code == .invalidKey {
                throw SwitchbackError(.appAttestKeyInvalid, "App Attest does not know or refused the key", underlying: error)
            }
        }
    }
#endif
