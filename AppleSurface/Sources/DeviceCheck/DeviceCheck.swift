// A model of the DeviceCheck API the adapters use (App Attest), declared as the iOS 18 SDK documents it.
// Each declaration names its page (https://developer.apple.com/documentation/devicecheck/...). The bodies
// stand in for the device: a test subclasses the service and overrides what it needs.
public import Foundation

// https://developer.apple.com/documentation/devicecheck/dcappattestservice
open class DCAppAttestService: NSObject {
    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/shared
    open class var shared: DCAppAttestService { DCAppAttestService() }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/issupported
    open var isSupported: Bool { false }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/generatekey(completionhandler:)
    open func generateKey() async throws -> String { throw DCError(.featureUnsupported) }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/attestkey(_:clientdatahash:completionhandler:)
    open func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data { throw DCError(.featureUnsupported) }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/generateassertion(_:clientdatahash:completionhandler:)
    open func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data { throw DCError(.featureUnsupported) }

    override public init() {}
}

// https://developer.apple.com/documentation/devicecheck/dcerror
public struct DCError: Error, Sendable {
    // https://developer.apple.com/documentation/devicecheck/dcerror/code
    public enum Code: Int, Sendable {
        // https://developer.apple.com/documentation/devicecheck/dcerror/code/unknownsystemfailure
        case unknownSystemFailure = 0
        // https://developer.apple.com/documentation/devicecheck/dcerror/code/featureunsupported
        case featureUnsupported = 1
        // https://developer.apple.com/documentation/devicecheck/dcerror/code/invalidinput
        case invalidInput = 2
        // https://developer.apple.com/documentation/devicecheck/dcerror/code/invalidkey
        case invalidKey = 3
        // https://developer.apple.com/documentation/devicecheck/dcerror/code/serverunavailable
        case serverUnavailable = 4
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }
}
