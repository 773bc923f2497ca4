// A model of the LocalAuthentication API the adapters use, declared as the iOS 18 SDK documents it.
// Each declaration names its page (https://developer.apple.com/documentation/localauthentication/...).
public import Foundation

// https://developer.apple.com/documentation/localauthentication/lacontext
open class LAContext: NSObject {
    // https://developer.apple.com/documentation/localauthentication/lacontext/localizedreason
    open var localizedReason: String = ""
    // https://developer.apple.com/documentation/localauthentication/lacontext/interactionnotallowed
    open var interactionNotAllowed: Bool = false

    override public init() {}
}
