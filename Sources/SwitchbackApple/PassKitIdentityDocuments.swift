#if canImport(PassKit)
    public import Foundation
    public import PassKit
    public import Switchback

    /// Verify with Wallet through PassKit's `PKIdentityAuthorizationController`, for
    /// ``SignInRoute/verifyWithWallet(_:)``: the request made into PassKit's, the sheet shown, and Wallet's
    /// `encryptedData` handed to the core, which sends it to the companion. PassKit's failures become the core's
    /// typed errors (``IdentityDocumentFailure``). The app needs the In-App Identity Presentment entitlements
    /// (`com.apple.developer.in-app-identity-presentment` and its `merchant-identifiers`) and
    /// `NSIdentityUsageDescription` in its Info.plist; Verify with Wallet works on iPhone only.
    public struct PassKitIdentityDocuments: IdentityDocumentProvider {
        private let controller: @Sendable () -> PKIdentityAuthorizationController

        /// `controller` makes the controller for each request (a new one unless a test gives its own).
        public init(controller: @escaping @Sendable () -> PKIdentityAuthorizationController = { PKIdentityAuthorizationController() }) {
            self.controller = controller
        }

        public func requestDocument(_ request: IdentityDocumentRequest, merchantIdentifier: String, nonce: Data) async throws -> Data {
            let descriptor = try Self.descriptor(for: request)
            let controller = controller()
            guard await controller.canRequestDocument(descriptor) else {
                throw SwitchbackError(
                    .authenticatorUnavailable, "Wallet holds no such ID on this device, or the app lacks the In-App Identity Presentment entitlement")
            }
            let identityRequest = PKIdentityRequest()
            identityRequest.descriptor = descriptor
            identityRequest.merchantIdentifier = merchantIdentifier
            identityRequest.nonce = nonce
            let cancel = Cancel(controller: controller)
            do {
                return try await withTaskCancellationHandler {
                    try await controller.requestDocument(identityRequest).encryptedData
                } onCancel: {
                    cancel.controller.cancelRequest()
                }
            } catch let error as PKIdentityError {
                throw (IdentityDocumentFailure(rawValue: error.code.rawValue) ?? .unknown).error
            }
        }

        /// PassKit's descriptor with the request's elements, each added with its intent.
        static func descriptor(for request: IdentityDocumentRequest) throws -> any PKIdentityDocumentDescriptor {
            try request.validate()
            let descriptor: any PKIdentityDocumentDescriptor
            switch request.document {
            case .driversLicense:
                descriptor = PKIdentityDriversLicenseDescriptor()
            case .nationalIDCard:
                guard #available(iOS 18.0, *) else {
                    throw SwitchbackError(.authenticatorUnavailable, "a national ID card in Wallet needs iOS 18")
                }
                descriptor = PKIdentityNationalIDCardDescriptor()
            }
            for field in request.fields {
                descriptor.addElements([try element(field.element)], intentToStore: intent(field.intentToStore))
            }
            return descriptor
        }

        static func element(_ element: IdentityDocumentRequest.Element) throws -> PKIdentityElement {
            switch element {
            case .givenName: return .givenName
            case .familyName: return .familyName
            case .portrait: return .portrait
            case .address: return .address
            case .dateOfBirth: return .dateOfBirth
            case .documentNumber: return .documentNumber
            case .documentIssueDate: return .documentIssueDate
            case .documentExpirationDate: return .documentExpirationDate
            case .drivingPrivileges: return .drivingPrivileges
            case .issuingAuthority: return .issuingAuthority
            case .age: return .age
            case .ageAtLeast(let years): return .age(atLeast: years)
            case .sex:
                guard #available(iOS 17.2, *) else { throw SwitchbackError(.invalidConfiguration, "asking for sex needs iOS 17.2") }
                return .sex
            }
        }

        /// The controller, for the cancellation handler only.
        // @unchecked: it is used there for `cancelRequest()` alone, which PassKit documents for a request in flight.
        private struct Cancel: @unchecked Sendable {
            let controller: PKIdentityAuthorizationController
        }

        static func intent(_ intent: IdentityDocumentRequest.IntentToStore) -> PKIdentityIntentToStore {
            switch intent {
            case .willNotStore: .willNotStore
            case .mayStore: .mayStore
            case .mayStoreForDays(let days): .mayStore(days: days)
            }
        }
    }
#endif
