// A model of the PassKit API the adapters use (Verify with Wallet), declared as Apple's documentation pages
// give it (https://developer.apple.com/documentation/passkit/...). The bodies stand in for the device: a
// test subclasses the controller and overrides what it needs.
public import Foundation

// https://developer.apple.com/documentation/passkit/pkidentityelement
open class PKIdentityElement: NSObject {
    /// The model's record of which element this is, for tests.
    public let _modelName: String

    // https://developer.apple.com/documentation/passkit/pkidentityelement/givenname
    open class var givenName: PKIdentityElement { PKIdentityElement(_modelName: "givenName") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/familyname
    open class var familyName: PKIdentityElement { PKIdentityElement(_modelName: "familyName") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/portrait
    open class var portrait: PKIdentityElement { PKIdentityElement(_modelName: "portrait") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/address
    open class var address: PKIdentityElement { PKIdentityElement(_modelName: "address") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/dateofbirth
    open class var dateOfBirth: PKIdentityElement { PKIdentityElement(_modelName: "dateOfBirth") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/documentnumber
    open class var documentNumber: PKIdentityElement { PKIdentityElement(_modelName: "documentNumber") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/documentissuedate
    open class var documentIssueDate: PKIdentityElement { PKIdentityElement(_modelName: "documentIssueDate") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/documentexpirationdate
    open class var documentExpirationDate: PKIdentityElement { PKIdentityElement(_modelName: "documentExpirationDate") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/drivingprivileges
    open class var drivingPrivileges: PKIdentityElement { PKIdentityElement(_modelName: "drivingPrivileges") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/issuingauthority
    open class var issuingAuthority: PKIdentityElement { PKIdentityElement(_modelName: "issuingAuthority") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/age
    open class var age: PKIdentityElement { PKIdentityElement(_modelName: "age") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/sex (iOS 17.2)
    @available(iOS 17.2, *)
    open class var sex: PKIdentityElement { PKIdentityElement(_modelName: "sex") }
    // https://developer.apple.com/documentation/passkit/pkidentityelement/age(atleast:)
    open class func age(atLeast age: Int) -> Self { Self(_modelName: "age_over_\(age)") }

    /// The model's stand-in for the system's instances.
    public required init(_modelName name: String) { _modelName = name }
}

// https://developer.apple.com/documentation/passkit/pkidentityintenttostore
open class PKIdentityIntentToStore: NSObject {
    /// The model's record of the intent, for tests: 0 will not store, nil may store, else days.
    public let _modelDays: Int?
    /// The model's stand-in for the system's instances.
    public required init(_modelDays days: Int?) { _modelDays = days }

    // https://developer.apple.com/documentation/passkit/pkidentityintenttostore/willnotstore
    open class var willNotStore: PKIdentityIntentToStore { PKIdentityIntentToStore(_modelDays: 0) }
    // https://developer.apple.com/documentation/passkit/pkidentityintenttostore/maystore
    open class var mayStore: PKIdentityIntentToStore { PKIdentityIntentToStore(_modelDays: nil) }
    // https://developer.apple.com/documentation/passkit/pkidentityintenttostore/maystore(days:)
    open class func mayStore(days: Int) -> Self { Self(_modelDays: days) }
}

// https://developer.apple.com/documentation/passkit/pkidentitydocumentdescriptor
public protocol PKIdentityDocumentDescriptor: NSObjectProtocol {
    // https://developer.apple.com/documentation/passkit/pkidentitydocumentdescriptor/elements
    var elements: [PKIdentityElement] { get }
    // https://developer.apple.com/documentation/passkit/pkidentitydocumentdescriptor/addelements(_:intenttostore:)
    func addElements(_ elements: [PKIdentityElement], intentToStore: PKIdentityIntentToStore)
    // https://developer.apple.com/documentation/passkit/pkidentitydocumentdescriptor/intenttostore(element:)
    func intentToStore(element: PKIdentityElement) -> PKIdentityIntentToStore?
}

/// The model's one body for the descriptors.
open class _PKIdentityDescriptorModel: NSObject {
    public private(set) var elements: [PKIdentityElement] = []
    var intents: [ObjectIdentifier: PKIdentityIntentToStore] = [:]

    public func addElements(_ elements: [PKIdentityElement], intentToStore: PKIdentityIntentToStore) {
        self.elements += elements
        for element in elements { intents[ObjectIdentifier(element)] = intentToStore }
    }

    public func intentToStore(element: PKIdentityElement) -> PKIdentityIntentToStore? { intents[ObjectIdentifier(element)] }

    override public init() {}
}

// https://developer.apple.com/documentation/passkit/pkidentitydriverslicensedescriptor
open class PKIdentityDriversLicenseDescriptor: _PKIdentityDescriptorModel, PKIdentityDocumentDescriptor {}

// https://developer.apple.com/documentation/passkit/pkidentitynationalidcarddescriptor
@available(iOS 18.0, *)
open class PKIdentityNationalIDCardDescriptor: _PKIdentityDescriptorModel, PKIdentityDocumentDescriptor {}

// https://developer.apple.com/documentation/passkit/pkidentityrequest
open class PKIdentityRequest: NSObject {
    // https://developer.apple.com/documentation/passkit/pkidentityrequest/descriptor
    open var descriptor: (any PKIdentityDocumentDescriptor)?
    // https://developer.apple.com/documentation/passkit/pkidentityrequest/merchantidentifier
    open var merchantIdentifier: String?
    // https://developer.apple.com/documentation/passkit/pkidentityrequest/nonce
    open var nonce: Data?

    override public init() {}
}

// https://developer.apple.com/documentation/passkit/pkidentitydocument
open class PKIdentityDocument: NSObject {
    // https://developer.apple.com/documentation/passkit/pkidentitydocument/encrypteddata
    open var encryptedData: Data { _encryptedData }
    let _encryptedData: Data

    /// The model's stand-in for the system making one (the real class has no public initializer).
    public init(_modelEncryptedData data: Data) { _encryptedData = data }
}

// https://developer.apple.com/documentation/passkit/pkidentityauthorizationcontroller
open class PKIdentityAuthorizationController: NSObject {
    override public init() {}

    // https://developer.apple.com/documentation/passkit/pkidentityauthorizationcontroller/canrequestdocument(_:)
    open func canRequestDocument(_ descriptor: any PKIdentityDocumentDescriptor) async -> Bool { false }

    // https://developer.apple.com/documentation/passkit/pkidentityauthorizationcontroller/requestdocument(_:)
    open func requestDocument(_ request: PKIdentityRequest) async throws -> PKIdentityDocument { throw PKIdentityError(.notSupported) }

    // https://developer.apple.com/documentation/passkit/pkidentityauthorizationcontroller/cancelrequest()
    open func cancelRequest() {}
}

// https://developer.apple.com/documentation/passkit/pkidentityerror
public struct PKIdentityError: Error, Sendable {
    // https://developer.apple.com/documentation/passkit/pkidentityerror/code
    public enum Code: Int, Sendable {
        case unknown = 0
        case notSupported = 1
        case cancelled = 2
        case networkUnavailable = 3
        case noElementsRequested = 4
        case requestAlreadyInProgress = 5
        case invalidNonce = 6
        case invalidElement = 7
        @available(iOS 18.0, *)
        case regionNotSupported = 8
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }
}
