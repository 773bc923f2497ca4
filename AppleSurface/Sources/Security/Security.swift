// A model of the Keychain API the adapters use (Security framework), declared as the iOS 18 SDK documents
// it, with an in-memory keychain behind it. Core Foundation types are modelled by their Foundation
// bridges (CFDictionary by NSDictionary, CFTypeRef by AnyObject, CFString by String), so that the casts
// the adapters write (`as CFDictionary`, `kSecClass as String`) type-check as on Apple platforms.
// Each declaration names its page (https://developer.apple.com/documentation/security/...).
public import Foundation

// https://developer.apple.com/documentation/kernel/osstatus
public typealias OSStatus = Int32
// https://developer.apple.com/documentation/corefoundation/cfdictionary
public typealias CFDictionary = NSDictionary
// https://developer.apple.com/documentation/corefoundation/cftyperef
public typealias CFTypeRef = AnyObject
// https://developer.apple.com/documentation/corefoundation/cfstring
public typealias CFString = String
// https://developer.apple.com/documentation/corefoundation/cfdata
public typealias CFData = Data
// https://developer.apple.com/documentation/corefoundation/cfallocator
public typealias CFAllocator = AnyObject

// Certificates: not used by the adapters, declared because swift-certificates (a dependency of jwt-kit)
// compiles an extension of its own when a module named Security can be imported.
// https://developer.apple.com/documentation/security/seccertificate
public final class SecCertificate: @unchecked Sendable {  // @unchecked: immutable.
    let data: Data
    init(data: Data) { self.data = data }
}

// https://developer.apple.com/documentation/security/seccertificatecopydata(_:)
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData { certificate.data }

// https://developer.apple.com/documentation/security/seccertificatecreatewithdata(_:_:)
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? { SecCertificate(data: data) }

// https://developer.apple.com/documentation/security/errsecsuccess
public let errSecSuccess: OSStatus = 0
// https://developer.apple.com/documentation/security/errsecitemnotfound
public let errSecItemNotFound: OSStatus = -25300
// https://developer.apple.com/documentation/security/errsecduplicateitem
public let errSecDuplicateItem: OSStatus = -25299
// https://developer.apple.com/documentation/security/errsecinteractionnotallowed
public let errSecInteractionNotAllowed: OSStatus = -25308

// https://developer.apple.com/documentation/security/errsecmissingentitlement
public let errSecMissingEntitlement: OSStatus = -34018
// https://developer.apple.com/documentation/security/ksecattraccessiblewhenunlockedthisdeviceonly
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"

// https://developer.apple.com/documentation/security/errsecusercanceled
public let errSecUserCanceled: OSStatus = -128
// https://developer.apple.com/documentation/security/errsecauthfailed
public let errSecAuthFailed: OSStatus = -25293
// https://developer.apple.com/documentation/security/ksecattraccessiblewhenpasscodesetthisdeviceonly
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
// https://developer.apple.com/documentation/security/ksecattraccesscontrol
public let kSecAttrAccessControl: CFString = "accc"
// https://developer.apple.com/documentation/security/ksecuseauthenticationcontext
public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"

// https://developer.apple.com/documentation/corefoundation/cferror
public typealias CFError = NSError

// https://developer.apple.com/documentation/security/secaccesscontrol
public final class SecAccessControl: @unchecked Sendable {  // @unchecked: immutable.
    let protection: String
    let flags: SecAccessControlCreateFlags
    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }
}

// https://developer.apple.com/documentation/security/secaccesscontrolcreateflags
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    // https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/userpresence
    public static var userPresence: SecAccessControlCreateFlags { SecAccessControlCreateFlags(rawValue: 1 << 0) }
    // https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/biometryany
    public static var biometryAny: SecAccessControlCreateFlags { SecAccessControlCreateFlags(rawValue: 1 << 1) }
    // https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/biometrycurrentset
    public static var biometryCurrentSet: SecAccessControlCreateFlags { SecAccessControlCreateFlags(rawValue: 1 << 3) }
    // https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/devicepasscode
    public static var devicePasscode: SecAccessControlCreateFlags { SecAccessControlCreateFlags(rawValue: 1 << 4) }
    // https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/or
    public static var or: SecAccessControlCreateFlags { SecAccessControlCreateFlags(rawValue: 1 << 14) }
}

// https://developer.apple.com/documentation/security/secaccesscontrolcreatewithflags(_:_:_:_:)
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    guard let protection = protection as? String else { return nil }
    return SecAccessControl(protection: protection, flags: flags)
}

// https://developer.apple.com/documentation/security/ksecclass
public let kSecClass: CFString = "class"
// https://developer.apple.com/documentation/security/ksecclassgenericpassword
public let kSecClassGenericPassword: CFString = "genp"
// https://developer.apple.com/documentation/security/ksecattrservice
public let kSecAttrService: CFString = "svce"
// https://developer.apple.com/documentation/security/ksecattraccount
public let kSecAttrAccount: CFString = "acct"
// https://developer.apple.com/documentation/security/ksecattraccessgroup
public let kSecAttrAccessGroup: CFString = "agrp"
// https://developer.apple.com/documentation/security/ksecattraccessible
public let kSecAttrAccessible: CFString = "pdmn"
// https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlockthisdeviceonly
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
// https://developer.apple.com/documentation/security/ksecvaluedata
public let kSecValueData: CFString = "v_Data"
// https://developer.apple.com/documentation/security/ksecreturndata
public let kSecReturnData: CFString = "r_Data"
// https://developer.apple.com/documentation/security/ksecmatchlimit
public let kSecMatchLimit: CFString = "m_Limit"
// https://developer.apple.com/documentation/security/ksecmatchlimitone
public let kSecMatchLimitOne: CFString = "m_LimitOne"
// https://developer.apple.com/documentation/security/ksecmatchlimitall
public let kSecMatchLimitAll: CFString = "m_LimitAll"
// https://developer.apple.com/documentation/security/ksecreturnattributes
public let kSecReturnAttributes: CFString = "r_Attributes"
// https://developer.apple.com/documentation/security/ksecattrgeneric
public let kSecAttrGeneric: CFString = "gena"

// https://developer.apple.com/documentation/security/secitemadd(_:_:)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    Keychain.shared.add(attributes)
}

// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    Keychain.shared.copyMatching(query, result)
}

// https://developer.apple.com/documentation/security/secitemupdate(_:_:)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    Keychain.shared.update(query, attributesToUpdate)
}

// https://developer.apple.com/documentation/security/secitemdelete(_:)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    Keychain.shared.delete(query)
}

/// The model's keychain: generic-password items by service, account and access group. A test can make
/// every call answer a status instead (`Keychain.shared.failing`), as a locked device does
/// (`errSecInteractionNotAllowed`). Not Apple API.
public final class Keychain: @unchecked Sendable {  // @unchecked: every field is guarded by `lock`.
    public static let shared = Keychain()
    private let lock = NSLock()
    private var items: [[String: String]: Data] = [:]
    private var failure: OSStatus?
    private var controlled: Set<[String: String]> = []
    private var generic: [[String: String]: Data] = [:]
    private var answer: OSStatus?
    private var promptCount = 0

    /// How the user answers the prompt an access-controlled item shows: nil approves, `errSecUserCanceled`
    /// is Cancel, `errSecAuthFailed` a failed Face ID and passcode.
    public var userAnswer: OSStatus? {
        get { lock.withLock { answer } }
        set { lock.withLock { answer = newValue } }
    }

    /// How many prompts access-controlled items have shown.
    public var prompts: Int { lock.withLock { promptCount } }

    /// Every call answers `status` until set back to nil.
    public var failing: OSStatus? {
        get { lock.withLock { failure } }
        set { lock.withLock { failure = newValue } }
    }

    public func removeAll() {
        lock.withLock {
            items = [:]
            controlled = []
            generic = [:]
            promptCount = 0
        }
    }

    private func key(_ query: NSDictionary) -> [String: String] {
        var key: [String: String] = [:]
        for name in [kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrAccessGroup] {
            if let value = query[name] as? String { key[name] = value }
        }
        return key
    }

    private func matches(_ stored: [String: String], _ query: [String: String]) -> Bool {
        query.allSatisfy { stored[$0.key] == $0.value }
    }

    func add(_ attributes: NSDictionary) -> OSStatus {
        lock.withLock {
            if let failure { return failure }
            let key = key(attributes)
            guard items[key] == nil else { return errSecDuplicateItem }
            items[key] = attributes[kSecValueData] as? Data ?? Data()
            generic[key] = attributes[kSecAttrGeneric] as? Data
            if attributes[kSecAttrAccessControl] is SecAccessControl { controlled.insert(key) } else { controlled.remove(key) }
            return errSecSuccess
        }
    }

    func copyMatching(_ query: NSDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        lock.withLock {
            if let failure { return failure }
            let wanted = key(query)
            let matching = items.filter { matches($0.key, wanted) }.sorted { $0.key.description < $1.key.description }
            let found = matching.map(\.value)
            guard !found.isEmpty else { return errSecItemNotFound }
            if query[kSecReturnAttributes] as? Bool == true, query[kSecReturnData] as? Bool != true {
                // Attributes are not encrypted: returning them asks nobody.
                let attributes = matching.map { item -> NSDictionary in
                    var attributes: [String: Any] = item.key
                    if let generic = generic[item.key] { attributes[kSecAttrGeneric] = generic }
                    return attributes as NSDictionary
                }
                result?.pointee = query[kSecMatchLimit] as? String == kSecMatchLimitAll ? attributes as NSArray : attributes[0]
                return errSecSuccess
            }
            if matching.contains(where: { controlled.contains($0.key) }) {
                // The system asks the user, with the context's reason, before the data is returned.
                promptCount += 1
                if let answer { return answer }
            }
            if query[kSecMatchLimit] as? String == kSecMatchLimitAll {
                result?.pointee = found.map { NSData(data: $0) } as NSArray
            } else {
                result?.pointee = NSData(data: found[0])
            }
            return errSecSuccess
        }
    }

    func update(_ query: NSDictionary, _ attributes: NSDictionary) -> OSStatus {
        lock.withLock {
            if let failure { return failure }
            let wanted = key(query)
            let keys = items.keys.filter { matches($0, wanted) }
            guard !keys.isEmpty else { return errSecItemNotFound }
            for key in keys { items[key] = attributes[kSecValueData] as? Data ?? items[key] }
            return errSecSuccess
        }
    }

    func delete(_ query: NSDictionary) -> OSStatus {
        lock.withLock {
            if let failure { return failure }
            let wanted = key(query)
            let keys = items.keys.filter { matches($0, wanted) }
            guard !keys.isEmpty else { return errSecItemNotFound }
            for key in keys {
                items[key] = nil
                generic[key] = nil
                controlled.remove(key)
            }
            return errSecSuccess
        }
    }
}
