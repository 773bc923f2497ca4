public import Foundation

/// What to ask of an ID in Apple Wallet with Verify with Wallet (PassKit's `PKIdentityRequest`), without
/// PassKit: the document and its elements, each with whether the app keeps it. The Apple adapter
/// (`PassKitIdentityDocuments`) turns it into the PassKit request; the companion decrypts and verifies the
/// answer (Documentation/Wallets.md).
public struct IdentityDocumentRequest: Sendable, Equatable {
    /// The kind of ID.
    public enum Document: String, Sendable, Equatable {
        /// A driver's license or state ID (`PKIdentityDriversLicenseDescriptor`, iOS 16).
        case driversLicense
        /// A national ID card (`PKIdentityNationalIDCardDescriptor`, iOS 18).
        case nationalIDCard
    }

    /// An element of the ID (`PKIdentityElement`); the response names it as ISO/IEC 18013-5 does.
    public enum Element: Sendable, Hashable {
        case givenName, familyName, portrait, address, dateOfBirth, documentNumber, documentIssueDate, documentExpirationDate
        case drivingPrivileges, issuingAuthority
        /// The holder's age in years.
        case age
        /// Whether the holder is at least this old (1 to 125): `age_over_NN`, without the birth date.
        case ageAtLeast(Int)
        /// iOS 17.2 and later.
        case sex
    }

    /// Whether the app keeps an element (`PKIdentityIntentToStore`), which Wallet shows the user.
    public enum IntentToStore: Sendable, Equatable {
        case willNotStore
        case mayStore
        case mayStoreForDays(Int)
    }

    /// One element and the app's intent for it.
    public struct Field: Sendable, Equatable {
        public var element: Element
        public var intentToStore: IntentToStore

        public init(_ element: Element, intentToStore: IntentToStore = .willNotStore) {
            self.element = element
            self.intentToStore = intentToStore
        }
    }

    public var document: Document
    public var fields: [Field]
    /// The name shown in the app's list of routes.
    public var name: String

    public init(document: Document = .driversLicense, fields: [Field], name: String = "Apple Wallet") {
        self.document = document
        self.fields = fields
        self.name = name
    }

    /// Refuses a request Wallet would refuse (PassKit's rules): no element, an element twice, an age below 1 or
    /// above 125, `age` together with `ageAtLeast`, a negative number of days.
    public func validate() throws {
        func fail(_ why: String) -> SwitchbackError { SwitchbackError(.invalidConfiguration, "the Wallet identity request \(why)") }
        guard !fields.isEmpty else { throw fail("asks for no element") }
        guard Set(fields.map(\.element)).count == fields.count else { throw fail("asks for an element twice") }
        var ages = 0
        var thresholds = 0
        for field in fields {
            switch field.element {
            case .age: ages += 1
            case .ageAtLeast(let years):
                guard (1...125).contains(years) else { throw fail("asks for an age threshold outside 1 to 125") }
                thresholds += 1
            default: break
            }
            if case .mayStoreForDays(let days) = field.intentToStore, days < 0 { throw fail("keeps an element for a negative number of days") }
        }
        guard ages == 0 || thresholds == 0 else { throw fail("asks for age and an age threshold together, which Wallet refuses") }
    }
}

/// Shows the system's Verify with Wallet sheet and returns Wallet's `encryptedData` (the Apple adapter:
/// `PassKitIdentityDocuments`; tests: an emulated Wallet). It throws ``SwitchbackError`` with
/// `userCancelled` when the user declines and `authenticatorUnavailable` when the device has no such ID or
/// cannot ask (an iPad, no entitlement).
public protocol IdentityDocumentProvider: Sendable {
    /// Asks Wallet for `request`, for the merchant `merchantIdentifier`, with the companion's `nonce`.
    func requestDocument(_ request: IdentityDocumentRequest, merchantIdentifier: String, nonce: Data) async throws -> Data
}

/// Why PassKit refused (`PKIdentityError.Code`), for the adapter to hand the core; the core decides what
/// each means.
public enum IdentityDocumentFailure: Int, Sendable {
    case unknown = 0
    case notSupported = 1
    case cancelled = 2
    case networkUnavailable = 3
    case noElementsRequested = 4
    case requestAlreadyInProgress = 5
    case invalidNonce = 6
    case invalidElement = 7
    case regionNotSupported = 8

    /// The typed error for this failure.
    public var error: SwitchbackError {
        switch self {
        case .cancelled: SwitchbackError(.userCancelled, "the user closed the Wallet sheet")
        case .notSupported, .regionNotSupported:
            SwitchbackError(.authenticatorUnavailable, "Wallet cannot present this ID here (no such ID, an iPad, or not in this region)")
        case .networkUnavailable: SwitchbackError(.transportFailed, "Wallet needs the network to present the ID")
        case .requestAlreadyInProgress: SwitchbackError(.flowInterrupted, "another Verify with Wallet request is already showing")
        case .noElementsRequested, .invalidNonce, .invalidElement:
            SwitchbackError(.invalidConfiguration, "Wallet refused the request (PKIdentityError \(rawValue)); check its elements and nonce")
        case .unknown: SwitchbackError(.unknown, "Wallet failed to present the ID (PKIdentityError 0)")
        }
    }
}
